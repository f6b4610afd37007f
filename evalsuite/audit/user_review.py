"""Human review of LLM-simulated users: the user-simulator audit (audit.users) names the tasks; this puts the
conversations in front of a person and counts what they found.

`sample_sheet` draws a seeded sample of a run's conversations with an LLM user and writes each as one JSON line:
who ran it, the pinned simulator, the transcript, the automatic screen's flags on it (audit.user_screen: candidate
errors for the reviewer to confirm or dismiss), and two fields for the reviewer, `error_class` (none, benign
or task-critical: the τ²-bench paper's classes, in audit.ERROR_CLASSES) and `note`. The reviewer fills them in any
editor; `tally` reads the sheet back and counts the classes, with the task-critical rate's Wilson interval over
the conversations reviewed. A scripted user is held to its rules by the audit and is not sampled unless asked.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evalsuite.audit.user_screen import screen_trial
from evalsuite.core.io import atomic_write
from evalsuite.core.records import Simulator, TaskRecord
from evalsuite.scoring.metrics import wilson_interval
from evalsuite.scoring.runlog import RunFolderError, read_records, read_run_tasks
from evalsuite.trials.tracelog import TrialRecord
from evalsuite.trials.users.base import MESSAGE

ErrorClass = Literal["none", "benign", "task-critical"]


class ReviewError(ValueError):
    """A sheet that cannot be read back: the file and line, and what is wrong there."""


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid")

    who: str  # agent or human (the business side), or user
    text: str


class ReviewItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    agent: str
    trial: int
    outcome: str
    simulator: Simulator
    transcript: list[Line]
    flags: list[str] = []  # the automatic screen's candidate errors in this conversation (LLM users)
    error_class: ErrorClass | None = None  # the reviewer's; None: not reviewed yet
    note: str = ""


class Tally(BaseModel):
    conversations: int
    reviewed: int
    by_class: dict[str, int]
    task_critical_rate: float | None  # over the reviewed conversations
    task_critical_low: float | None
    task_critical_high: float | None


def conversations(records: Sequence[TrialRecord], tasks: Sequence[TaskRecord],
                  llm_only: bool = True) -> list[ReviewItem]:
    """Every trial of a conversational task with its transcript (LLM users only, unless llm_only is False)."""
    by_id = {t.task_id: t for t in tasks}
    out = []
    for r in records:
        task = by_id.get(r.task_id)
        scenario = task.user_scenario if task else None
        if scenario is None or (llm_only and scenario.simulator.kind == "scripted"):
            continue
        lines = [Line(who=e.actor, text=str(e.arguments.get("text", ""))) for e in r.trace if e.kind == MESSAGE]
        flags = [f.said() for f in screen_trial(r.trace, r.user_trace)] if scenario.simulator.kind != "scripted" else []
        out.append(ReviewItem(task_id=r.task_id, agent=r.agent, trial=r.trial, outcome=r.outcome,
                              simulator=scenario.simulator, transcript=lines, flags=flags))
    return out


def sample_sheet(items: Sequence[ReviewItem], n: int, seed: int, path: Path) -> list[ReviewItem]:
    """Write a seeded sample of n conversations (all, if fewer) to a JSONL sheet, in task and trial order."""
    keys = sorted(range(len(items)), key=lambda i: (items[i].task_id, items[i].agent, items[i].trial))
    picked = sorted(random.Random(seed).sample(keys, min(n, len(keys))))
    chosen = [items[i] for i in picked]
    atomic_write(Path(path), "".join(item.model_dump_json() + "\n" for item in chosen))
    return chosen


def sample_run(run_dir: Path, out: Path, n: int, seed: int = 0, scripted: bool = False) -> tuple[list[ReviewItem], int]:
    """`evalsuite users sample`: a seeded sample of the run folder's conversations with an LLM user (every user's
    with `scripted`) written to the sheet `out`; returns the sample and how many there were to sample from."""
    items = conversations(read_records(run_dir), read_run_tasks(run_dir), llm_only=not scripted)
    if not items:
        raise RunFolderError(f"{run_dir}: no conversation with an LLM user to review (--scripted for all)")
    return sample_sheet(items, n, seed, out), len(items)


def read_sheet(path: Path) -> list[ReviewItem]:
    """A filled sheet; a line that is not a review item is refused naming the file, the line and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewError(f"{path}: cannot read the review sheet: {exc}") from exc
    items = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(ReviewItem.model_validate_json(line))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "(line)"
            raise ReviewError(f"{path}:{n}: {where}: {err['msg']}") from None
    return items


def tally(items: Sequence[ReviewItem]) -> Tally:
    reviewed = [i for i in items if i.error_class is not None]
    counts = {c: sum(i.error_class == c for i in reviewed) for c in ("none", "benign", "task-critical")}
    if not reviewed:
        return Tally(conversations=len(items), reviewed=0, by_class=counts, task_critical_rate=None,
                     task_critical_low=None, task_critical_high=None)
    low, high = wilson_interval(counts["task-critical"], len(reviewed))
    return Tally(conversations=len(items), reviewed=len(reviewed), by_class=counts,
                 task_critical_rate=counts["task-critical"] / len(reviewed), task_critical_low=low,
                 task_critical_high=high)
