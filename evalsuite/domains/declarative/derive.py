"""Tasks from a declarative domain's resolved cases: the goal state is what the case's verified actions change when
replayed on a freshly reset world.

For each kept case, the reference solution is its recorded actions. Every row they change becomes an assertion
citing the clause of the write tool that last changed it (masked fields left out): an updated row by its key with
its new values, an inserted row by its unmasked values (its key may be masked: a fresh id depends on call order), a
deleted row as absent. Every other world table is unchanged, and the role's forbidden tools are forbidden calls.
Cases that are not verified, that contradict the policy in effect (the `consistent_when` query, run on the seed
world), or whose actions fail are skipped and counted, each with its reason.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from evalsuite.core.records import (
    Assertion,
    GoalState,
    MaskedField,
    Provenance,
    TaskRecord,
    ToolCall,
    Trigger,
)
from evalsuite.domains.declarative.model import DerivationDef, DomainFile
from evalsuite.sourcing.policies import PolicyDoc, PolicyError, policy_in_effect
from evalsuite.tasks.derivation import Derivation, DeriveContext, truthy
from evalsuite.tasks.splits import assign_split
from evalsuite.worlds.domain import Domain
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

NUMBER = re.compile(r"-?\d+(\.\d+)?")


class Skip(Exception):
    """A case that does not become a task; the message is the reason it is counted under."""


def deriver(df: DomainFile, domain: Domain):
    """The domain's derive(tables, policies, ctx) (evalsuite.tasks.derivation.Deriver)."""
    d = df.derivation
    role = domain.roles[d.role or next(iter(df.roles))]
    key = df.tables[d.cases].key

    def derive(tables: Mapping[str, list[dict]], policies: list[PolicyDoc], ctx: DeriveContext) -> Derivation:
        tasks, skipped = [], Counter()
        for case in sorted(tables[d.cases], key=lambda c: [str(c[k]) for k in key]):
            try:
                tasks.append(_task(case, "-".join(str(case[k]) for k in key), df, role, policies, ctx))
            except Skip as why:
                skipped[str(why)] += 1
        return Derivation(tasks=tasks, skipped=dict(skipped))

    return derive


def _task(case: dict, case_id: str, df: DomainFile, role, policies: list[PolicyDoc], ctx: DeriveContext) -> TaskRecord:
    d = df.derivation
    if not truthy(case[d.verified]):
        raise Skip("outcome not verified")
    resolved = dt.date.fromisoformat(str(case[d.policy_date])[:10])
    try:
        policy = policy_in_effect(policies, resolved)
    except PolicyError as exc:
        raise Skip("no policy in effect on the case's date") from exc
    if d.consistent_when and not _consistent(ctx.world, d.consistent_when, case, policy.params):
        raise Skip("recorded outcome contradicts the policy in effect")
    actions = _actions(case[d.actions])
    goal = _goal(ctx.world, df, role, actions)
    return TaskRecord(
        task_id=f"{df.name}-{case_id}", domain=df.name, suite=ctx.suite,
        split=assign_split(case_id, ctx.seed, ctx.splits),
        category=str(case[d.category]) if d.category else "case", environment=ctx.environment, role=role,
        policy=policy.as_policy(), trigger=_trigger(d, case), goal_state=goal, reference_solution=actions,
        reference_answer=case.get(d.answer) if d.answer else None, trial_protocol=ctx.protocol,
        provenance=Provenance(source_record=case_id, outcome_verified_by=f"{d.cases}.{d.verified}",
                              license_ref=ctx.license_ref, deidentification=ctx.deidentification,
                              case_resolved_on=resolved))


def _trigger(d: DerivationDef, case: dict) -> Trigger:
    values = {k: "" if v is None else v for k, v in case.items()}
    return Trigger(type=d.trigger.type, text=d.trigger.text.format(**values),
                   item_id=d.trigger.item_id.format(**values) if d.trigger.item_id else None)


def _actions(text: Any) -> list[ToolCall]:
    try:
        calls = [ToolCall(tool=c["tool"], arguments=c.get("arguments") or {}) for c in json.loads(str(text))]
    except (ValueError, TypeError, KeyError) as exc:
        raise Skip("recorded actions are not a JSON list of {tool, arguments}") from exc
    if not calls:
        raise Skip("no recorded actions")
    return calls


def bound(value: Any) -> Any:
    """A value as a query binds it: text that reads as a number becomes one (exports hold every column as text,
    and `:amount <= :policy_limit` must compare numbers)."""
    if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
        return float(value) if "." in value else int(value)
    return value


def _consistent(world: World, sql: str, case: dict, params: Mapping[str, Any]) -> bool:
    values = {k: bound(v) for k, v in case.items()} | {f"policy_{k}": bound(v) for k, v in params.items()}
    return bool(world.pristine_db.execute(sql, values).fetchone())


def _goal(world: World, df: DomainFile, role, actions: list[ToolCall]) -> GoalState:
    """Replay the actions on a freshly reset world; what they change is the goal."""
    d = df.derivation
    trial = world.reset(role)
    by_tool: dict[tuple[str, tuple], str] = {}  # (table, key) -> the write tool that last changed the row
    for call in actions:
        before = {tk: trial.row(*tk) for tk in _changed(trial)}
        event = trial.call(call.tool, call.arguments)
        if event.outcome != "ok":
            raise Skip(f"recorded action {call.tool} failed on the world: {event.error}")
        by_tool |= {tk: call.tool for tk in _changed(trial) if tk not in before or trial.row(*tk) != before[tk]}
    masked = dict(d.masked)
    assertions = _assertions(world, trial, by_tool, d.clauses, masked)
    changed = {a.table for a in assertions}
    return GoalState(
        assertions=assertions, unchanged_tables=sorted(set(df.world_tables()) - changed),
        volatile_fields_masked=[MaskedField(field=f, justification=why) for f, why in masked.items()],
        forbidden_calls=list(role.forbidden_tools))


def _changed(trial: TrialWorld) -> list[tuple[str, tuple]]:
    return [(table, key) for table, keys in trial.changed_keys().items() for key in keys]


def _assertions(world: World, trial: TrialWorld, by_tool: dict, clauses: dict[str, str],
                masked: dict[str, str]) -> list[Assertion]:
    out: list[Assertion] = []
    inserted: Counter = Counter()
    for (table, key), tool in sorted(by_tool.items(), key=lambda kv: (kv[0][0], [str(k) for k in kv[0][1]])):
        schema, clause = world.schemas[table], clauses[tool]
        hidden = {f.rpartition(".")[2] for f in masked if f.rpartition(".")[0] in (table, "")}
        before, after = _row(world, table, key), trial.row(table, key)
        pk = dict(zip(schema.key, key))
        if after is None and before is not None:
            out.append(Assertion(table=table, key=pk, row_count=0, clause=clause))
        elif after is not None and before is None:
            values = {c: v for c, v in zip(schema.columns, after) if c not in hidden}
            inserted[(table, json.dumps(values, sort_keys=True, default=str), clause)] += 1
        elif after is not None:
            new = dict(zip(schema.columns, after))
            old = dict(zip(schema.columns, before))
            expect = {c: new[c] for c in schema.columns if new[c] != old[c] and c not in hidden and c not in pk}
            out.append(Assertion(table=table, key=pk, expect=expect, row_count=1, clause=clause))
    for (table, values, clause), n in sorted(inserted.items()):
        out.append(Assertion(table=table, key=json.loads(values), row_count=n, clause=clause))
    return out


def _row(world: World, table: str, key: tuple) -> tuple | None:
    return world.selector.row(world.pristine_db, table, key)

