"""A recorded run, regraded: where the recording came from, what replaying and grading each of its trials found
(a run folder's recording.json, read and written by evalsuite.scoring.runlog), and the scorecard's section that
puts the regraded pass^k beside the recorded rewards' pass^k and lists every trial where the two disagree.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from evalsuite.scoring.metrics import KPoint, suite_pass_curve
from evalsuite.trials.tracelog import TrialRecord

Format = Literal["tau2_results", "tau_bench_trajectories", "openai_messages"]


class Provenance(BaseModel):
    """Where a recording came from: shown with its run in the scorecard, in Dagster and on the evidence site."""

    source: str  # where it was published (a repository file, a URL) or the file it was read from
    license: str
    model: str  # the model whose trials these are
    format: Format
    file: str  # the file's name
    sha256: str  # the file's bytes, as imported
    trials: int  # trials in the file (imported and skipped)


class CallDiff(BaseModel):
    """A replayed call whose output is not the recorded one: both outputs, and whether the error flag flipped."""

    seq: int  # the call's event in the regraded trace
    tool: str
    recorded: str | None
    recorded_error: bool
    replayed: str
    replayed_error: bool
    write: bool  # the domain's tool writes: a flipped error flag means the effects differ, not only the text

    @property
    def flipped(self) -> bool:
        return self.recorded_error != self.replayed_error


class TrialNote(BaseModel):
    """What the import found for one trial besides its trial record (which holds the evalsuite verdict)."""

    task_id: str  # the release's task
    trial: int
    recorded_task: str  # the task as the recording names it
    recorded_reward: float | None  # None: the recording carries no reward
    state_passed: bool  # evalsuite's end-state checks (the DB basis: assertions, unchanged tables, no collateral)
    original_db: bool | None  # the original's DB check on the same calls (None: no such check for the domain)
    diffs: list[CallDiff] = []
    reason: str | None = None  # why evalsuite and the recording disagree (None when they agree)

    @property
    def recorded_passed(self) -> bool | None:
        return None if self.recorded_reward is None else math.isclose(self.recorded_reward, 1.0)

    @property
    def diverged(self) -> bool:
        """A write whose outcome flipped: the replay's effects are not the recording's."""
        return any(d.flipped and d.write for d in self.diffs)


class Skipped(BaseModel):
    """A recorded trial not imported, and why (its task is not in the release, or it cannot be replayed)."""

    recorded_task: str
    trial: int
    reason: str


class RecordingFile(BaseModel):
    """recording.json: the provenance, each imported trial's note, the trials skipped, the task map."""

    provenance: Provenance
    task_map: dict[str, str]  # recorded task -> release task
    notes: list[TrialNote]
    skipped: list[Skipped] = []
    quarantined: dict[str, list[str]] = {}  # graded tasks the release quarantined, with its reasons


class Disagreement(BaseModel):
    task_id: str
    trial: int
    recorded_task: str
    recorded: bool
    regraded: bool
    reason: str


class RecordedScore(BaseModel):
    """The scorecard's side-by-side: the same tasks and trials scored by evalsuite and by the recorded rewards."""

    provenance: Provenance
    agent: str
    tasks: int
    trials: int
    regraded: list[KPoint]
    recorded: list[KPoint]  # empty when the recording carries no rewards
    original_db: list[KPoint]  # the original's DB check on the replayed calls; empty without one
    agree: int
    disagreements: list[Disagreement]
    calls_differing: int  # replayed calls whose output text differs from the recorded
    trials_diverged: int  # trials with a write whose outcome flipped
    skipped: list[Skipped]
    quarantined: dict[str, list[str]] = {}  # tasks graded here that the release quarantined, with its reasons


def recorded_score(recording: RecordingFile, records: Sequence[TrialRecord], *, resamples: int,
                   seed: int) -> RecordedScore:
    """Each curve over the same tasks and trials, with the scorecard's task-bootstrap settings."""
    notes = {(n.task_id, n.trial): n for n in recording.notes}
    missing = [r.key for r in records if (r.task_id, r.trial) not in notes]
    if missing:
        raise ValueError(f"recording.json: no note for trial {missing[0]}")
    passed = {(r.task_id, r.trial): r.passed for r in records}
    noted = [notes[k] for k in passed]
    disagree = [Disagreement(task_id=n.task_id, trial=n.trial, recorded_task=n.recorded_task,
                             recorded=bool(n.recorded_passed), regraded=passed[n.task_id, n.trial],
                             reason=n.reason or "")
                for n in noted if n.recorded_passed is not None and n.recorded_passed != passed[n.task_id, n.trial]]
    return RecordedScore(
        provenance=recording.provenance, agent=records[0].agent if records else "", tasks=len({k[0] for k in passed}),
        trials=len(passed), regraded=_curve(passed, resamples, seed),
        recorded=_curve({k: notes[k].recorded_passed for k in passed}, resamples, seed),
        original_db=_curve({k: notes[k].original_db for k in passed}, resamples, seed),
        agree=sum(1 for n in noted if n.recorded_passed == passed[n.task_id, n.trial]), disagreements=disagree,
        calls_differing=sum(len(n.diffs) for n in noted), trials_diverged=sum(n.diverged for n in noted),
        skipped=recording.skipped, quarantined=recording.quarantined)


def _curve(passed: dict[tuple[str, int], Any], resamples: int, seed: int) -> list[KPoint]:
    """pass^k over tasks from one pass flag per trial; empty when any flag is unknown (None)."""
    if not passed or any(v is None for v in passed.values()):
        return []
    counts: dict[str, tuple[int, int]] = {}
    for (task, _), ok in passed.items():
        n, c = counts.get(task, (0, 0))
        counts[task] = (n + 1, c + int(bool(ok)))
    return suite_pass_curve(counts, resamples=resamples, seed=seed)
