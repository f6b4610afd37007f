"""τ²-bench telecom's task set composed as the original composed it (TOOLS_SPEC.md §12.3), with evalsuite's
composition machinery (evalsuite.tasks.composition): every intent's combinations of issues, the personas, the
task records in the task file's shape, the full, small and sampled sets, and their verification on a workbench.

1. Each intent's groups are enumerated as a Cartesian product (alternatives in listed order, "none" last, the last
   group fastest); combinations failing the intent's validity rule are dropped.
2. A task's issues are sorted by name: its id joins them with "|"; setup steps, fixes and extra assertions follow
   that order.
3. Stable-sorted by issue count, the tasks get the personas None, Easy, Hard cyclically.
4. `record`: the user info, then each issue's setup steps; the fixes as gold actions, or a lone transfer (and the
   ACTION basis) when an issue is unfixable; the intent's success assertions and the extras, or its failure ones.
5. `verify_all` (evalsuite.tasks.composition.verify, stepwise) on a workbench with the domain's tools.
6. The full set is mobile data, then service, then MMS (3,405 tasks); the sample is drawn from it with
   random.seed(42): up to 3 tasks per (intent, issue count, persona) among tasks of two or more issues, the
   strata in first-seen order. Then every task holding `data_usage_exceeded_no_refuel` is deleted, from the
   full set (2,285 left), the sample (114) and the single-issue tasks (20) alike, as the task file shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalsuite.core.records import EnvAssertion, ToolCall
from evalsuite.domains.tau2_telecom.issues import DELETED, ENTITY, INTENTS, ISSUES, ORDER, Intent, groups_of, handoff
from evalsuite.domains.tau2_telecom.texts import PERSONAS, scenario
from evalsuite.tasks.composition import (
    Composite,
    Entity,
    Workbench,
    compose,
    sample_per_stratum,
    stratum_counts,
    verify,
)

SEED, PER_STRATUM = 42, 3


@dataclass(frozen=True)
class Composed:
    """One composed task: its issues (a composite of one intent) and its persona label."""

    composite: Composite
    persona: str

    @property
    def issues(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.composite.parts)

    @property
    def id(self) -> str:
        return f"[{self.composite.intent}]{'|'.join(self.issues)}[PERSONA:{self.persona}]"


def composites(intent: Intent) -> list[Composite]:
    """Steps 1–2: the intent's valid combinations in enumeration order, each with its issues sorted by name."""
    optional = [g for g in intent.groups if g not in intent.required]
    return [Composite(intent.name, tuple(sorted(parts, key=lambda p: p.name)), handoff(intent))
            for parts in compose(groups_of(intent), intent.required, optional, order=intent.groups, none_last=True)]


def with_personas(intent: Intent) -> list[Composed]:
    """Step 3: stable-sorted by issue count, personas assigned cyclically."""
    ordered = sorted(composites(intent), key=lambda c: len(c.parts))
    labels = list(PERSONAS)
    return [Composed(c, labels[i % len(labels)]) for i, c in enumerate(ordered)]


def composed() -> list[Composed]:
    """Every task the procedure composes (before the deletion): mobile data, service, MMS."""
    return [c for name in ORDER for c in with_personas(INTENTS[name])]


def kept(tasks: list[Composed]) -> list[Composed]:
    """The tasks the task file keeps: none holding the deleted issue."""
    return [t for t in tasks if DELETED not in t.issues]


def stratum(task: Composed) -> tuple[str, int, str]:
    return task.composite.intent, len(task.issues), task.persona


def sampled(tasks: list[Composed]) -> list[Composed]:
    """The original's sample (its `base` split before the deletion): up to 3 per stratum of multi-issue tasks."""
    return sample_per_stratum([t for t in tasks if len(t.issues) >= 2], stratum, PER_STRATUM, SEED)


def strata(full: list[Composed], sample: list[Composed]) -> list[dict[str, Any]]:
    """Per stratum the sampling draws from (intent, issue count, persona; two or more issues): how many tasks the
    full set holds and how many the sample took, in the full set's order."""
    available = stratum_counts([t for t in full if len(t.issues) >= 2], stratum)
    taken = stratum_counts(sample, stratum)
    return [{"intent": k[0], "issues": k[1], "persona": k[2], "available": n, "sampled": taken[k]}
            for k, n in available.items()]


def single_issue(tasks: list[Composed]) -> list[Composed]:
    return [t for t in tasks if len(t.issues) == 1]


def record(task: Composed, entity: Entity = ENTITY) -> dict[str, Any]:
    """Step 4: the task in the task file's shape (setup steps after the user info; gold actions not run)."""
    c = task.composite
    setup = [ToolCall(tool="set_user_info", arguments={"name": entity["name"],
                                                        "phone_number": entity["phone_number"]}, actor="user"),
             *(call for p in c.parts for call in ISSUES[p.name].setup(entity))]
    abroad = any(s.tool == "set_user_location" and s.arguments.get("abroad") for s in setup)
    return {"id": task.id, **scenario(c.intent, task.persona, entity, abroad),
            "initial_state": {"initialization_data": None, "initialization_actions": [_step(s) for s in setup],
                              "message_history": None},
            "evaluation_criteria": {
                "actions": _gold(c.solution(entity), by_name=not c.fixable),
                "env_assertions": [a.model_dump() for a in stored(task, entity)],
                "communicate_info": None, "nl_assertions": None,
                "reward_basis": ["ENV_ASSERTION"] if c.fixable else ["ENV_ASSERTION", "ACTION"]}}


def stored(task: Composed, entity: Entity = ENTITY) -> list[EnvAssertion]:
    """The task's env assertions: the intent's success assertions and the issues' extras, or for an unfixable
    task the intent's failure assertions."""
    c = task.composite
    return [*(INTENTS[c.intent].success(entity) if c.fixable else []), *c.goal(entity)]


def _step(call: ToolCall) -> dict[str, Any]:
    return {"env_type": _side(call), "func_name": call.tool, "arguments": call.arguments}


def _side(call: ToolCall) -> str:
    return "user" if call.actor == "user" else "assistant"


def _gold(calls: list[ToolCall], by_name: bool) -> list[dict[str, Any]]:
    """Gold actions: ids `<tool>_<index>`; a handoff's are matched by name alone, and its id is the tool's name."""
    return [{"action_id": call.tool if by_name else f"{call.tool}_{i}", "requestor": _side(call),
             "name": call.tool, "arguments": call.arguments, "info": None, "compare_args": [] if by_name else None}
            for i, call in enumerate(calls)]


def verify_all(tasks: list[Composed], box: Workbench, entity: Entity = ENTITY) -> dict[str, str]:
    """Step 5 for every task: its id and the reason for each task that is not sound (fresh state passes the
    intent's check; after setup it fails before each gold action; after them it passes, or for an unfixable task
    still fails; the stored assertions hold)."""
    out = {}
    for t in tasks:
        reason = verify(t.composite, entity, box, stepwise=True)
        if reason is not None:
            out[t.id] = reason
    return out


def holding_at_start(tasks: list[Composed], box: Workbench, entity: Entity = ENTITY) -> dict[str, list[str]]:
    """Per task, the stored assertions that already hold right after its setup (so an empty trajectory, or a
    lone transfer, passes them): `func_name(arguments)` of each, tasks with none left out."""
    out = {}
    for t in tasks:
        with box.attempt():
            box.setup(entity)
            for p in t.composite.parts:
                box.init(p, entity)
            held = [f"{a.func_name}({a.arguments})" for a in stored(t, entity) if box.holds([a])]
        if held:
            out[t.id] = held
    return out
