"""A task's initialization: what happens to the worlds after their reset and before the agent acts.

After both worlds are reset and verified, the task's initialization calls (τ²-bench's initialization_actions)
run on them, untraced, each followed by the domain's link step (evalsuite.worlds.link); both worlds must then
hash as the task records, or the trial is refused as a failed reset would be. The rows they changed are the
baseline the trial is graded against, so the state the agent found counts as its start, not as its change.
"""
from __future__ import annotations

from evalsuite.core.records import Initialization
from evalsuite.grading.grader import Baseline
from evalsuite.worlds.link import apply_calls
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import ResetError


def initialize(init: Initialization | None, agent: TrialWorld,
               device: TrialWorld | None) -> tuple[Baseline | None, Baseline | None]:
    """Run the task's initialization calls (each followed by the worlds' link step), verify both worlds' hashes,
    and return each world's baseline (None when the task has no initialization)."""
    if init is None:
        return None, None
    apply_calls(init.calls, agent, device)
    _verify("agent", agent, init.sha256)
    if device is not None and init.user_sha256 is not None:
        _verify("user-side", device, init.user_sha256)
    return baseline(agent), baseline(device) if device is not None else None


def baseline(trial: TrialWorld) -> Baseline:
    """Every row the trial's world changed so far, as it is now (None where one was deleted)."""
    return {t: {k: trial.row(t, k) for k in keys} for t, keys in trial.changed_keys().items()}


def _verify(side: str, trial: TrialWorld, expected: str) -> None:
    got = trial.content_sha256()
    if got != expected:
        raise ResetError(f"{trial.domain.name}: {side} world hash after the task's initialization {got[:12]}… != "
                         f"recorded {expected[:12]}…; trial refused")
