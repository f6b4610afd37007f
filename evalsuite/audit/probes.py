"""Grader probes: each reference solution replayed with one write argument nudged to a near miss.

A near miss is another valid value of the same column where the world has one
(a recipient, an account, an order), else one minor unit on an amount, a day on
a date, the other truth value, or an unrelated string. A nudged trajectory that
still passes the task's check shows the check is insensitive to that argument;
it is reported unless the goal state masks the field with a justification
(declared irrelevant). Reads are not nudged: a state-based grade never judges
them. An imported suite's own grader (the peer's) can be probed the same way,
with the no-op, to show where it accepts what ours rejects.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.grading.grader import Baseline, grade_trial, merged
from evalsuite.trials.attacks import place_attack
from evalsuite.trials.users.dual import Started, grade_sides, start_worlds
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

UNRELATED = "probe-unrelated-value"
_DECIMAL = re.compile(r"^-?\d+\.(\d+)$")
# the peer's verdict on a trial: (task, the trial after the calls, the final message) -> passed
PeerCheck = Callable[[TaskRecord, TrialWorld, str], bool]


class ProbeHit(BaseModel):
    call: int  # index into the reference solution
    tool: str
    argument: str  # the argument's path: "amount", "item_ids.0"
    value: Any  # the nudged value that still passed


class GraderProbes(BaseModel):
    tried: int
    passed_anyway: list[ProbeHit]
    declared_irrelevant: list[ProbeHit] = []  # passed, but the goal masks the field with a justification


class OriginalCheck(BaseModel):
    noop_passes: bool
    passed_anyway: list[ProbeHit]


class ColumnValues:
    """Distinct values of every column of a world, to find another valid value of the column a value comes from."""

    def __init__(self, world: World):
        self._by_value: dict[str, list[list[Any]]] = {}
        for table, schema in world.schemas.items():
            for column in schema.columns:
                values = sorted({v for (v,) in world.pristine_db.execute(f'SELECT DISTINCT "{column}" FROM "{table}"')
                                 if isinstance(v, (str, int)) and not isinstance(v, bool)}, key=repr)
                for v in values:
                    self._by_value.setdefault(repr(v), []).append(values)

    def other(self, value: Any) -> Any | None:
        """Another value of the first column (in schema order) holding `value`, or None."""
        for values in self._by_value.get(repr(value), []):
            alt = next((v for v in values if v != value), None)
            if alt is not None:
                return alt
        return None


def near_misses(value: Any, columns: ColumnValues) -> list[Any]:
    """The nudges of one argument value (at most one per kind, so a probe stays one change)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, list):
        return [[nudged, *value[1:]] for nudged in near_misses(value[0], columns)] if value else []
    if isinstance(value, (dict, type(None))):
        return []
    other = columns.other(value)
    if other is not None:
        return [other]
    if isinstance(value, int):
        return [value + 1]
    if isinstance(value, float):
        return [float(Decimal(repr(value)) + Decimal("0.01"))]
    if isinstance(value, str):
        if m := _DECIMAL.match(value):
            return [str(Decimal(value) + Decimal(1).scaleb(-len(m.group(1))))]
        try:
            return [(dt.date.fromisoformat(value) + dt.timedelta(days=1)).isoformat()]
        except ValueError:
            return [UNRELATED if value != UNRELATED else UNRELATED + "-2"]
    return []


def _argument_probes(calls: list[ToolCall], world: World,
                     columns: ColumnValues) -> Iterator[tuple[int, str, Any, list[ToolCall]]]:
    for i, call in enumerate(calls):
        tool = world.domain.tools.get(call.tool)
        if tool is None or tool.kind != "write":
            continue
        for name, value in call.arguments.items():
            for nudged in near_misses(value, columns):
                path = f"{name}.0" if isinstance(value, list) else name
                changed = call.model_copy(update={"arguments": {**call.arguments, name: nudged}})
                shown = nudged if not isinstance(value, list) else nudged[0]
                yield i, path, shown, [*calls[:i], changed, *calls[i + 1:]]


def _replay(world: World, task: TaskRecord, calls: list[ToolCall]) -> tuple[TrialWorld, Baseline | None, Started]:
    """The calls on freshly reset worlds (a user's step on the user's), the task's initialization and attack in
    place first where it has them."""
    trial = world.reset(task.role, policy_text="")
    started = start_worlds(world, task, trial)
    baseline = merged(started.baseline, place_attack(trial, task.attack) if task.attack else None)
    for call in calls:
        if call.actor == "user" and started.device is not None:
            started.device.call(call.tool, call.arguments, actor="user")
        else:
            trial.call(call.tool, call.arguments)
    return trial, baseline, started


def _passes(trial: TrialWorld, baseline: Baseline | None, started: Started, task: TaskRecord, final: str) -> bool:
    verdict = grade_trial(trial, final, task.goal_state, task.role, task.forbidden, baseline)
    return grade_sides(started.device, started.device_baseline, verdict, final, task).passed


def probe_task(world: World, task: TaskRecord, columns: ColumnValues,
               peer: PeerCheck | None = None) -> tuple[GraderProbes, OriginalCheck | None]:
    """Our grader (and the peer's, if given) on every near miss of the task's reference solution."""
    final = task.reference_answer or ""
    masked = {m.field.rpartition(".")[2] for m in task.goal_state.volatile_fields_masked}
    ours, irrelevant, theirs, tried = [], [], [], 0
    for i, path, value, calls in _argument_probes(task.solution_calls(), world, columns):
        tried += 1
        trial, baseline, started = _replay(world, task, calls)
        hit = ProbeHit(call=i, tool=calls[i].tool, argument=path, value=value)
        if _passes(trial, baseline, started, task, final):
            (irrelevant if path.split(".")[0] in masked else ours).append(hit)
        if peer is not None and peer(task, trial, final):
            theirs.append(hit)
    original = None
    if peer is not None:
        original = OriginalCheck(noop_passes=peer(task, _replay(world, task, [])[0], ""), passed_anyway=theirs)
    return GraderProbes(tried=tried, passed_anyway=ours, declared_irrelevant=irrelevant), original
