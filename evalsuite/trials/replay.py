"""Replay given tool calls on a freshly reset world as a task's role, and report what happened: each call's
output or error (with any injected fault and what committed), the verdict with every check, and the end-state hash.

Domain-agnostic: it is how a reviewer checks a suspected grader hole in minutes (`evalsuite trial replay`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from evalsuite.core.records import FaultPlanSpec, TaskRecord, ToolCall
from evalsuite.grading.grader import grade_trial
from evalsuite.trials.trial import policy_text
from evalsuite.trials.users.dual import grade_sides, start_worlds
from evalsuite.worlds.faults import FaultPlan
from evalsuite.worlds.world import World

_CALLS = TypeAdapter(list[ToolCall])


class ReplayError(ValueError):
    """A calls or faults file that cannot be read or validated, or a task the release does not hold: one line."""


def load_calls(path: str | Path) -> list[ToolCall]:
    """A JSON list of {"tool", "arguments"} objects; a bad file is one line naming it and the field."""
    return _load(path, _CALLS, "calls")


def load_faults(path: str | Path) -> FaultPlanSpec:
    """A JSON fault plan (records.FaultPlanSpec: name, faults[{tool, call, kind, latency_seconds}],
    deadline_seconds)."""
    return _load(path, TypeAdapter(FaultPlanSpec), "faults")


def _load(path: str | Path, adapter: TypeAdapter, what: str) -> Any:
    try:
        return adapter.validate_json(Path(path).read_bytes())
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read the {what} file: {exc.strerror}") from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(file)"
        raise ReplayError(f"{path}: {what}: {field}: {err['msg']}") from exc


def find_task(tasks: list[TaskRecord], task_id: str) -> TaskRecord:
    for t in tasks:
        if t.task_id == task_id:
            return t
    raise ReplayError(f"--task: no task {task_id!r} in the release ({len(tasks)} tasks)")


def replay(world: World, task: TaskRecord, calls: list[ToolCall], faults: FaultPlanSpec | None = None,
           final_message: str = "") -> dict[str, Any]:
    """Run `calls` in order as the task's role (under `faults`, else none: the task's own plans are not applied,
    so the reviewer sees exactly the calls given) and return the report as one JSON-ready dict."""
    plan = FaultPlan.from_spec(faults) if faults else FaultPlan()
    trial = world.reset(task.role, policy_text=policy_text(task), faults=plan)
    started = start_worlds(world, task, trial)  # a user's step runs on the user's world, after the task's set-up
    device = started.device
    events = [(device if c.actor == "user" and device is not None else trial).call(
        c.tool, c.arguments, actor="user" if c.actor == "user" and device is not None else "agent") for c in calls]
    verdict = grade_sides(device, started.device_baseline, grade_trial(
        trial, final_message, task.goal_state, task.role, task.forbidden, started.baseline), final_message, task)
    return {
        "task_id": task.task_id, "fault_plan": faults.name if faults else None, "seed_sha256": world.seed_sha256,
        "calls": [e.model_dump(mode="json", include={"seq", "tool", "arguments", "outcome", "result", "error", "fault",
                                                    "committed", "rows_written"}) for e in events],
        "passed": verdict.passed, "checks": [c.model_dump(mode="json") for c in verdict.checks],
        "end_sha256": trial.content_sha256(),
    }


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, sort_keys=True, default=str)
