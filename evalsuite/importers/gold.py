"""Replay a peer task's gold calls in a fresh trial and turn every row they changed into an assertion (any importer).

Inserted and updated rows are asserted by primary key with the columns that
changed (all columns for an insert); deleted rows by `row_count: 0`. Each
changed column is credited to the last gold write that changed it, and the
assertion cites the policy clause of that write's tool. A gold action that
fails is recorded, never hidden: tau2 logs it and carries on, and so do we.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from evalsuite.core.records import Assertion, Role, ToolCall
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


def replay_gold(world: World, role: Role, task_id: str, calls: Sequence[ToolCall],
                clause_of_tool: Mapping[str, str]) -> GoldReplay:
    """Run every gold call in order (reads too, as the reference trajectory) and derive the goal's assertions."""
    trial = world.reset(role)
    errors: list[GoldReplayError] = []
    owners: dict[tuple[str, tuple], dict[int, int]] = {}  # (table, key) -> {column index: call index}
    inserted_by: dict[tuple[str, tuple], int] = {}
    last: dict[tuple[str, tuple], Any] = {}
    writes_ok = 0
    for i, call in enumerate(calls):
        event = trial.call(call.tool, call.arguments)
        if event.outcome != "ok":
            errors.append(GoldReplayError(task_id=task_id, action_id=call.action_id, tool=call.tool,
                                          kind=event.kind, error=event.error or event.outcome))
            continue  # a failed write rolled back whole: it changed nothing
        if event.kind != "write":
            continue
        writes_ok += 1
        for table, keys in trial.changed_keys().items():
            for key in keys:
                ref = (table, key)
                before = last.get(ref, world.seed_row(table, key))
                now = trial.row(table, key)
                if now == before:
                    continue
                if before is None:
                    inserted_by.setdefault(ref, i)
                width = len(now if now is not None else before)
                whole = before is None or now is None
                cols = range(width) if whole else [j for j in range(width) if now[j] != before[j]]
                owners.setdefault(ref, {}).update({j: i for j in cols})
                last[ref] = now
    assertions = _assertions(world, calls, clause_of_tool, owners, inserted_by, last)
    touched = {a.table for a in assertions}
    return GoldReplay(trial=trial, errors=errors, assertions=assertions,
                      unchanged_tables=[t for t in world.schemas if t not in touched], writes_ok=writes_ok)


def _assertions(world: World, calls: Sequence[ToolCall], clause_of_tool: Mapping[str, str],
                owners: dict, inserted_by: dict, last: dict) -> list[Assertion]:
    out: list[Assertion] = []
    table_order = list(world.schemas)
    for table, key in sorted(owners, key=lambda r: (table_order.index(r[0]), repr(r[1]))):
        schema = world.schemas[table]
        seed, end = world.seed_row(table, key), last[(table, key)]
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
