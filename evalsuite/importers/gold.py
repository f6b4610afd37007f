"""Replay a peer task's gold calls in a fresh trial and turn every row they changed into an assertion (any importer).

Inserted and updated rows are asserted by primary key with the columns that
changed (all columns for an insert); deleted rows by `row_count: 0`. Each
changed column is credited to the last gold write that changed it, and the
assertion cites the policy clause of that write's tool. A gold action that
fails is recorded, never hidden: tau2 logs it and carries on, and so do we.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from evalsuite.core.records import Assertion, Role, ToolCall
from evalsuite.trials.initialization import baseline
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World


class GoldReplayError(BaseModel):
    task_id: str
    action_id: str | None
    tool: str
    kind: str | None  # read / write / generic, or None for an unknown tool
    error: str


@dataclass
class GoldReplay:
    trial: TrialWorld
    errors: list[GoldReplayError]
    assertions: list[Assertion]
    unchanged_tables: list[str]
    writes_ok: int = 0


class _Changes:
    """What a sequence of calls changed in one trial world, row by row and column by column, measured from a
    start (the seed, or the state a task's initialization left: `start` maps a row's table and key to it)."""

    def __init__(self, trial: TrialWorld, start: Callable[[str, tuple], tuple | None]):
        self.trial, self.start = trial, start
        self.owners: dict[tuple[str, tuple], dict[int, int]] = {}  # (table, key) -> {column index: call index}
        self.inserted_by: dict[tuple[str, tuple], int] = {}
        self.last: dict[tuple[str, tuple], Any] = {}

    def credit(self, i: int) -> None:
        """Credit every column changed since the last call to call `i`."""
        for table, keys in self.trial.changed_keys().items():
            for key in keys:
                ref = (table, key)
                before = self.last.get(ref, self.start(table, key))
                now = self.trial.row(table, key)
                if now == before:
                    continue
                if before is None:
                    self.inserted_by.setdefault(ref, i)
                width = len(now if now is not None else before)
                whole = before is None or now is None
                cols = range(width) if whole else [j for j in range(width) if now[j] != before[j]]
                self.owners.setdefault(ref, {}).update({j: i for j in cols})
                self.last[ref] = now

    def assertions(self, calls: Sequence[ToolCall], clause_of_tool: Mapping[str, str]) -> list[Assertion]:
        return _assertions(self.trial.world, self.start, calls, clause_of_tool, self.owners, self.inserted_by,
                           self.last)


def replay_gold(world: World, role: Role, task_id: str, calls: Sequence[ToolCall],
                clause_of_tool: Mapping[str, str]) -> GoldReplay:
    """Run every gold call in order (reads too, as the reference trajectory) and derive the goal's assertions."""
    trial = world.reset(role)
    changes = _Changes(trial, world.seed_row)
    errors: list[GoldReplayError] = []
    writes_ok = 0
    for i, call in enumerate(calls):
        event = trial.call(call.tool, call.arguments)
        if event.outcome != "ok":
            errors.append(_error(task_id, call, event))
            continue  # a failed write rolled back whole: it changed nothing
        if event.kind != "write":
            continue
        writes_ok += 1
        changes.credit(i)
    assertions = changes.assertions(calls, clause_of_tool)
    touched = {a.table for a in assertions}
    return GoldReplay(trial=trial, errors=errors, assertions=assertions,
                      unchanged_tables=[t for t in world.schemas if t not in touched], writes_ok=writes_ok)


def replay_gold_dual(agent: TrialWorld, device: TrialWorld, task_id: str, calls: Sequence[ToolCall],
                     clause_of_tool: Mapping[str, str]) -> tuple[list[Assertion], list[Assertion],
                                                                  list[GoldReplayError]]:
    """The gold calls of a dual-control task on its two connected, initialized worlds (actor "user": the user's
    world), each world's changes since its initialization credited to the call after which they appeared (the
    link step's included): the agent world's assertions, the user world's, and the calls that failed."""
    sides = {w: _Changes(w, _started_from(w)) for w in (agent, device)}
    errors: list[GoldReplayError] = []
    for i, call in enumerate(calls):
        world = device if call.actor == "user" else agent
        event = world.call(call.tool, call.arguments, actor="user" if call.actor == "user" else "agent")
        if event.outcome != "ok":
            errors.append(_error(task_id, call, event))
            continue
        for changes in sides.values():
            changes.credit(i)
    return sides[agent].assertions(calls, clause_of_tool), sides[device].assertions(calls, clause_of_tool), errors


def _started_from(trial: TrialWorld) -> Callable[[str, tuple], tuple | None]:
    """Each row as the trial's world holds it now (before the gold calls): the initialization's baseline, else the
    seed's row."""
    start = baseline(trial)
    return lambda table, key: start[table][key] if key in start.get(table, {}) else trial.world.seed_row(table, key)


def _error(task_id: str, call: ToolCall, event) -> GoldReplayError:
    return GoldReplayError(task_id=task_id, action_id=call.action_id, tool=call.tool, kind=event.kind,
                           error=event.error or event.outcome)


def _assertions(world: World, start: Callable[[str, tuple], tuple | None], calls: Sequence[ToolCall],
                clause_of_tool: Mapping[str, str], owners: dict, inserted_by: dict, last: dict) -> list[Assertion]:
    out: list[Assertion] = []
    table_order = list(world.schemas)
    for table, key in sorted(owners, key=lambda r: (table_order.index(r[0]), repr(r[1]))):
        schema = world.schemas[table]
        seed, end = start(table, key), last[(table, key)]
        key_cols = dict(zip(schema.key, key))
        clause = lambda i: clause_of_tool[calls[i].tool]  # noqa: E731
        if end == seed:
            continue  # changed, then changed back: the end state is the seed's
        if end is None:
            deleter = max(owners[(table, key)].values())
            out.append(Assertion(table=table, key=key_cols, row_count=0, clause=clause(deleter)))
        elif seed is None:
            expect = {c: v for c, v in zip(schema.columns, end) if c not in schema.key}
            out.append(Assertion(table=table, key=key_cols, expect=expect, clause=clause(inserted_by[(table, key)])))
        else:
            by_call: dict[int, dict[str, Any]] = {}
            for j, i in owners[(table, key)].items():
                if end[j] != seed[j]:
                    by_call.setdefault(i, {})[schema.columns[j]] = end[j]
            for i in sorted(by_call):
                expect = {c: by_call[i][c] for c in schema.columns if c in by_call[i]}
                out.append(Assertion(table=table, key=key_cols, expect=expect, clause=clause(i)))
    return out
