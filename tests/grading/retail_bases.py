"""Helpers for the reward-basis tests on the bundled τ²-bench retail suite: a trial of given calls and messages,
and its bases graded as a trial's are."""
from __future__ import annotations

import json
from pathlib import Path

from evalsuite.core.records import MESSAGE, EvaluationCriteria, TaskRecord, TraceEvent
from evalsuite.domains.tau2_retail import build_world
from evalsuite.grading.grader import grade_trial
from evalsuite.grading.reward_bases import Bases, BasisResult, grade_bases
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.world import World

ROOT = Path(__file__).resolve().parents[2]


def retail_world(path: Path) -> World:
    """The τ²-bench retail world, built from the vendored db.json."""
    return build_world(json.loads((ROOT / "third_party/tau2_retail/db.json").read_text()), path)


def retail_tasks() -> dict[str, TaskRecord]:
    """The bundled retail suite's tasks by id."""
    return {t.task_id: t for t in read_tasks(ROOT / "suites/tau2_retail/tasks.jsonl")}


def act(world, task: TaskRecord, calls, said=(), heard=()):
    """A trial of the task's role making `calls` (ToolCalls or GoldActions), then the agent saying `said` and the
    customer `heard`, recorded in the trace as a conversation records them."""
    trial = world.reset(task.role)
    for c in calls:
        trial.call(getattr(c, "tool", None) or c.name, c.arguments)
    for actor, texts in (("agent", said), ("user", heard)):
        for text in texts:
            trial.trace.append(TraceEvent(seq=len(trial.trace) + 1, actor=actor, tool=MESSAGE,
                                          arguments={"text": text}, permitted=True, outcome="ok", kind=MESSAGE))
    return trial


def bases_of(task: TaskRecord, trial, final: str = "", device=None, **kw) -> Bases | None:
    verdict = grade_trial(trial, final, task.goal_state, task.role, task.forbidden)
    return grade_bases(task, verdict, trial, device, final, **kw)


def statuses(bases: Bases) -> dict[str, str]:
    return {b.basis: b.status for b in bases.bases}


def basis(bases: Bases, name: str) -> BasisResult:
    return next(b for b in bases.bases if b.basis == name)


def with_criteria(task: TaskRecord, **criteria) -> TaskRecord:
    return task.model_copy(update={"evaluation_criteria": EvaluationCriteria(**criteria)})
