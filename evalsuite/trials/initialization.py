"""A task's initialization and a dual-control domain's link step: what happens to the worlds besides the agent.

After both worlds are reset and verified, the task's initialization calls (τ²-bench's initialization_actions)
run on them, untraced (no participant made them), each followed by the link step; both worlds must then hash
as the task records, or the trial is refused as a failed reset would be. The rows they changed are the
baseline the trial is graded against, so the state the agent found counts as its start, not as its change.
The link step (the domain's LINK) runs after every successful call on either world from then on.
"""
from __future__ import annotations

from collections.abc import Callable

from evalsuite.core.records import Initialization, ToolCall
from evalsuite.grading.grader import Baseline
from evalsuite.worlds.domain import ToolContext
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import ResetError

Link = Callable[[ToolContext, ToolContext], None]  # (the agent's world, the user's world)


class InitializationError(RuntimeError):
    """An initialization call failed: the task cannot start (an infrastructure error, never the agent's)."""


def connect(agent: TrialWorld, device: TrialWorld | None, link: Link | None) -> None:
    """Run `link` after every successful call on either world (nothing without both worlds and a link)."""
    if device is None or link is None:
        return
    step = lambda: run_link(agent, device, link)  # noqa: E731
    agent.after_ok = device.after_ok = step


def run_link(agent: TrialWorld, device: TrialWorld, link: Link) -> None:
    """One link step, committed on both worlds."""
    a, u = _context(agent), _context(device)
    with a.conn.begin(), u.conn.begin():
        link(a, u)


def initialize(init: Initialization | None, agent: TrialWorld,
               device: TrialWorld | None) -> tuple[Baseline | None, Baseline | None]:
    """Run the task's initialization calls (each followed by the worlds' link step), verify both worlds' hashes,
    and return each world's baseline (None when the task has no initialization)."""
    if init is None:
        return None, None
    for i, call in enumerate(init.calls):
        world = device if call.actor == "user" else agent
        if world is None:
            raise InitializationError(f"initialization.calls.{i}: {call.tool} is the user's, but the domain "
                                      f"{agent.domain.name} has no user-side world")
        _run(world, call, i)
        if world.after_ok is not None:
            world.after_ok()
    _verify("agent", agent, init.sha256)
    if device is not None and init.user_sha256 is not None:
        _verify("user-side", device, init.user_sha256)
    return baseline(agent), baseline(device) if device is not None else None


def baseline(trial: TrialWorld) -> Baseline:
    """Every row the trial's world changed so far, as it is now (None where one was deleted)."""
    return {t: {k: trial.row(t, k) for k in keys} for t, keys in trial.changed_keys().items()}


def _run(world: TrialWorld, call: ToolCall, i: int) -> None:
    spec = world.domain.helpers.get(call.tool) or world.domain.tools.get(call.tool)
    if spec is None:
        raise InitializationError(f"initialization.calls.{i}: {call.tool!r} is no tool or helper of domain "
                                  f"{world.domain.name}")
    ctx = _context(world)
    try:
        with ctx.conn.begin():
            spec.fn(ctx, spec.args(**call.arguments)) if spec.args else spec.fn(ctx, **call.arguments)
    except Exception as exc:
        raise InitializationError(f"initialization.calls.{i}: {call.tool} failed: {exc}") from exc


def _verify(side: str, trial: TrialWorld, expected: str) -> None:
    got = trial.content_sha256()
    if got != expected:
        raise ResetError(f"{trial.domain.name}: {side} world hash after the task's initialization {got[:12]}… != "
                         f"recorded {expected[:12]}…; trial refused")


def _context(trial: TrialWorld) -> ToolContext:
    return ToolContext(conn=trial.world.trial_connection, now=trial.clock, policy_text=trial.policy_text)
