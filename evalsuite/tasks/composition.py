"""Composed tasks: atomic subtasks (initialisation, solution, assertion) combined, verified and subsampled.

A subtask breaks one thing (init), fixes it (solution calls) and says what the fixed state holds (goal
assertions). Subtasks are grouped so mutually exclusive alternatives share a group; a composite takes at
most one subtask per group. Every composite is verified on a workbench before it may become a task: the fresh
state passes its status check, the initialisation breaks it, leaving out any one subtask's solution leaves
it broken, and running every solution fixes it with the goal assertions holding. Failing composites are
dropped and counted by reason. Sampling is balanced over strata and seeded, so a suite of ~100 is drawn
from thousands the same way every time.

An imported generator's own rules are options of the same functions: its enumeration order (`order`,
`none_last`), its stricter necessity rule (`stepwise`: still broken before every solution call), subtasks no
participant can fix (the composite's `handoff` is then its solution, and it must stay broken), and its
sampling rule (`sample_per_stratum`: up to k per stratum in first-seen order, as τ²-bench drew its telecom
suite).
"""
from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from evalsuite.core.records import Assertion, EnvAssertion, ToolCall

Entity = Mapping[str, Any]  # the ids one composite's rows carry (customer, line, device…)
Goal = Assertion | EnvAssertion  # a goal row, or a named assertion the domain runs (τ²-bench's env assertions)


@dataclass(frozen=True)
class Subtask:
    name: str
    group: str
    init: Callable[[Any, Entity], None]  # (workbench connection, entity): breaks the fresh state
    solution: Callable[[Entity], list[ToolCall]]  # the calls that fix it, in order
    assertions: Callable[[Entity], Sequence[Goal]]  # goals once fixed (user-side tables included)
    fixable: bool = True  # False: nothing a participant may do fixes it (its solution is never run)


@dataclass(frozen=True)
class Composite:
    intent: str
    parts: tuple[Subtask, ...]
    handoff: Subtask | None = None  # what is done instead when a part is unfixable, and what then holds

    @property
    def name(self) -> str:
        return f"{self.intent}:" + "+".join(p.name for p in self.parts)

    @property
    def fixable(self) -> bool:
        return all(p.fixable for p in self.parts)

    def _done_by(self) -> tuple[Subtask, ...]:
        if self.fixable:
            return self.parts
        if self.handoff is None:
            raise ValueError(f"composite {self.name}: a part is unfixable and there is no handoff")
        return (self.handoff,)

    def solution(self, entity: Entity) -> list[ToolCall]:
        return [c for p in self._done_by() for c in p.solution(entity)]

    def goal(self, entity: Entity) -> list[Goal]:
        return [a for p in self._done_by() for a in p.assertions(entity)]


class Workbench(Protocol):
    """Where composites are verified: a state holding one entity per composite, with real tools."""

    def attempt(self) -> AbstractContextManager[None]: ...  # everything done inside is rolled back
    def setup(self, entity: Entity) -> None: ...  # the fresh rows of one entity
    def init(self, subtask: Subtask, entity: Entity) -> None: ...
    def run(self, call: ToolCall) -> None: ...  # raises when the tool refuses
    def working(self, intent: str, entity: Entity) -> bool: ...  # the intent's status check
    def holds(self, assertions: Sequence[Goal]) -> bool: ...


def compose(groups: Mapping[str, Sequence[Subtask]], required: Sequence[str], optional: Sequence[str] = (),
            max_parts: int | None = None, *, order: Sequence[str] | None = None,
            none_last: bool = False) -> Iterator[tuple[Subtask, ...]]:
    """Every combination taking at most one subtask per group (and at most `max_parts` in all), at least one
    from the `required` groups. The groups are enumerated in `order` (default: required, then optional; the
    last varies fastest), each contributing nothing or one of its subtasks in listed order, nothing first
    (or last with `none_last`); parts come in that group order."""
    names = list(order) if order is not None else [*required, *optional]
    if sorted(names) != sorted({*required, *optional}):
        raise ValueError(f"order {names} must name the required and optional groups once each")
    choices = [[*groups[g], None] if none_last else [None, *groups[g]] for g in names]
    must = [names.index(g) for g in required]
    for pick in itertools.product(*choices):
        parts = tuple(p for p in pick if p is not None)
        if any(pick[i] is not None for i in must) and len(parts) <= (max_parts or len(parts)):
            yield parts


def verify(composite: Composite, entity: Entity, box: Workbench, *, stepwise: bool = False) -> str | None:
    """None when the composite is a sound task, else the reason it is dropped. Fixed means: leaving out any
    one part's solution leaves it broken (with `stepwise`: it is still broken before each solution call);
    running every solution fixes it with the goal holding. A composite with an unfixable part must stay
    broken after its handoff, with the handoff's goal holding."""
    with box.attempt():
        box.setup(entity)
        if not box.working(composite.intent, entity):
            return "fresh state fails its check"
        for p in composite.parts:
            box.init(p, entity)
        if box.working(composite.intent, entity):
            return "initialisation does not break the check"
        if composite.fixable and not stepwise:
            reason = _without_each_part(composite, entity, box)
            if reason is not None:
                return reason
        with box.attempt():
            return _solve(composite, entity, box, stepwise)


def _without_each_part(composite: Composite, entity: Entity, box: Workbench) -> str | None:
    calls = [p.solution(entity) for p in composite.parts]
    for left_out, part in enumerate(composite.parts):
        with box.attempt():
            reason = _run(box, [c for i, cs in enumerate(calls) if i != left_out for c in cs])
            if reason is None and box.working(composite.intent, entity):
                return f"solved without {part.name}"
    return None


def _solve(composite: Composite, entity: Entity, box: Workbench, stepwise: bool) -> str | None:
    for i, call in enumerate(composite.solution(entity)):
        if stepwise and i and box.working(composite.intent, entity):
            return f"solved before solution call {i} ({call.tool})"
        reason = _run(box, [call])
        if reason is not None:
            return reason
    working, holds = box.working(composite.intent, entity), box.holds(composite.goal(entity))
    if composite.fixable:
        return None if working and holds else "not solved after every solution"
    if working:
        return "solved despite an unfixable part"
    return None if holds else "the handoff's goal does not hold"


def _run(box: Workbench, calls: Iterable[ToolCall]) -> str | None:
    for call in calls:
        try:
            box.run(call)
        except Exception as exc:  # a refused solution is a verification failure, reported with its reason
            return f"solution call {call.tool} fails: {exc}"
    return None


T = TypeVar("T")


def subsample(items: Sequence[T], stratum: Callable[[T], Hashable], n: int, seed: int) -> list[T]:
    """About `n` items, balanced: strata take turns (in a seeded order), each giving a seeded-random item
    until it runs out, so a small stratum is taken whole and the large ones share what is left."""
    rng = random.Random(seed)
    pools = _pools(items, stratum)
    order = sorted(pools, key=repr)
    rng.shuffle(order)
    for key in order:
        rng.shuffle(pools[key])
    picked: list[T] = []
    while len(picked) < n and any(pools.values()):
        for key in order:
            if pools[key] and len(picked) < n:
                picked.append(pools[key].pop())
    return picked


def sample_per_stratum(items: Sequence[T], stratum: Callable[[T], Hashable], k: int, seed: int) -> list[T]:
    """Up to `k` items of every stratum: the strata in first-seen order, each drawn with `random.sample` from
    one generator seeded once (so `random.seed(seed)` followed by the same module-level calls picks the same)."""
    rng = random.Random(seed)
    return [item for pool in _pools(items, stratum).values() for item in rng.sample(pool, min(k, len(pool)))]


def _pools(items: Iterable[T], stratum: Callable[[T], Hashable]) -> dict[Hashable, list[T]]:
    """The items of each stratum in their order, the strata in first-seen order."""
    pools: dict[Hashable, list[T]] = {}
    for item in items:
        pools.setdefault(stratum(item), []).append(item)
    return pools


def stratum_counts(items: Iterable[T], stratum: Callable[[T], Hashable]) -> Counter:
    return Counter(stratum(i) for i in items)
