"""Composed tasks: atomic subtasks (initialisation, solution, assertion) combined, verified and subsampled.

A subtask breaks one thing (init), fixes it (solution calls) and says what the fixed state holds (goal
assertions). Subtasks are grouped so mutually exclusive alternatives share a group; a composite takes at
most one subtask per group. Every composite is verified in a sandbox before it may become a task: the fresh
state passes its status check, the initialisation breaks it, leaving out any one subtask's solution leaves
it broken, and running every solution fixes it with the goal assertions holding. Failing composites are
dropped and counted by reason. Sampling is balanced over strata and seeded, so a suite of ~100 is drawn
from thousands the same way every time.
"""
from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from evalsuite.core.records import Assertion, ToolCall

Entity = Mapping[str, Any]  # the ids one composite's rows carry (customer, line, device…)


@dataclass(frozen=True)
class Subtask:
    name: str
    group: str
    init: Callable[[Any, Entity], None]  # (sandbox connection, entity): breaks the fresh state
    solution: Callable[[Entity], list[ToolCall]]  # the calls that fix it, in order
    assertions: Callable[[Entity], list[Assertion]]  # goal rows once fixed (user-side tables included)


@dataclass(frozen=True)
class Composite:
    intent: str
    parts: tuple[Subtask, ...]

    @property
    def name(self) -> str:
        return f"{self.intent}:" + "+".join(p.name for p in self.parts)

    def solution(self, entity: Entity) -> list[ToolCall]:
        return [c for p in self.parts for c in p.solution(entity)]


class Sandbox(Protocol):
    """Where composites are verified: a state holding one entity per composite, with real tools."""

    def attempt(self) -> AbstractContextManager[None]: ...  # everything done inside is rolled back
    def setup(self, entity: Entity) -> None: ...  # the fresh rows of one entity
    def init(self, subtask: Subtask, entity: Entity) -> None: ...
    def run(self, call: ToolCall) -> None: ...  # raises when the tool refuses
    def working(self, intent: str, entity: Entity) -> bool: ...  # the intent's status check
    def holds(self, assertions: Sequence[Assertion]) -> bool: ...


def compose(groups: Mapping[str, Sequence[Subtask]], required: Sequence[str], optional: Sequence[str] = (),
            max_parts: int | None = None) -> Iterator[tuple[Subtask, ...]]:
    """Every combination taking at most one subtask per group (and at most `max_parts` in all), at least one
    from the `required` groups; parts come in the order of the groups given (required first)."""
    names = [*required, *optional]
    choices = [[None, *groups[g]] for g in names]
    for pick in itertools.product(*choices):
        parts = tuple(p for p in pick if p is not None)
        if any(p is not None for p in pick[:len(required)]) and len(parts) <= (max_parts or len(parts)):
            yield parts


def verify(composite: Composite, entity: Entity, box: Sandbox) -> str | None:
    """None when the composite is a sound task, else the reason it is dropped."""
    calls = [p.solution(entity) for p in composite.parts]
    goal = [a for p in composite.parts for a in p.assertions(entity)]
    with box.attempt():
        box.setup(entity)
        if not box.working(composite.intent, entity):
            return "fresh state fails its check"
        for p in composite.parts:
            box.init(p, entity)
        if box.working(composite.intent, entity):
            return "initialisation does not break the check"
        for left_out, part in enumerate(composite.parts):
            with box.attempt():
                reason = _run(box, [c for i, cs in enumerate(calls) if i != left_out for c in cs])
                if reason is None and box.working(composite.intent, entity):
                    return f"solved without {part.name}"
        with box.attempt():
            reason = _run(box, [c for cs in calls for c in cs])
            if reason is not None:
                return reason
            if not box.working(composite.intent, entity) or not box.holds(goal):
                return "not solved after every solution"
    return None


def _run(box: Sandbox, calls: Iterable[ToolCall]) -> str | None:
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
    pools: dict[Hashable, list[T]] = {}
    for item in items:
        pools.setdefault(stratum(item), []).append(item)
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


def stratum_counts(items: Iterable[T], stratum: Callable[[T], Hashable]) -> Counter:
    return Counter(stratum(i) for i in items)
