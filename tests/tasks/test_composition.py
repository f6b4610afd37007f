"""Composition, verification and balanced subsampling, on a toy sandbox where every rule is visible."""
from __future__ import annotations

import random
from collections import Counter
from contextlib import contextmanager

import pytest

from evalsuite.core.records import Assertion, ToolCall
from evalsuite.tasks.composition import (
    Composite,
    Subtask,
    compose,
    sample_per_stratum,
    stratum_counts,
    subsample,
    verify,
)


class FlagBox:
    """State = flags per entity; a subtask's init clears its flag, its solution call `fix` sets flags."""

    def __init__(self):
        self.state: dict[str, bool] = {}
        self.saved: list[dict] = []

    @contextmanager
    def attempt(self):
        self.saved.append(dict(self.state))
        try:
            yield
        finally:
            self.state = self.saved.pop()

    def setup(self, e):
        self.state.update({"a": True, "b": True, "c": True})

    def init(self, subtask, e):
        subtask.init(self.state, e)

    def run(self, call: ToolCall):
        if call.tool == "refuse":
            raise RuntimeError("refused")
        for flag in call.arguments["flags"]:
            self.state[flag] = True

    def working(self, intent, e):
        return all(self.state.values())

    def holds(self, assertions):
        return all(self.state[a.key["flag"]] for a in assertions)


def sub(name, group, breaks, fixes, tool="fix"):
    def init(state, e):
        for f in breaks:
            state[f] = False
    return Subtask(name, group, init, lambda e: [ToolCall(tool=tool, arguments={"flags": fixes})],
                   lambda e: [Assertion(table="flags", key={"flag": f}, clause="X-1") for f in fixes])


A1, A2, B1 = sub("a1", "A", ["a"], ["a"]), sub("a2", "A", ["a"], ["a"]), sub("b1", "B", ["b"], ["b"])


def test_a_composite_takes_at_most_one_per_group_and_one_required():
    got = {tuple(p.name for p in parts) for parts in compose({"A": [A1, A2], "B": [B1]}, ["A"], ["B"])}
    assert got == {("a1",), ("a2",), ("a1", "b1"), ("a2", "b1")}
    assert {len(p) for p in compose({"A": [A1, A2], "B": [B1]}, ["A"], ["B"], max_parts=1)} == {1}


def test_an_imported_generators_order_lists_none_last_and_varies_the_last_group_fastest():
    got = [tuple(p.name for p in parts)
           for parts in compose({"A": [A1, A2], "B": [B1]}, ["B"], ["A"], order=["A", "B"], none_last=True)]
    assert got == [("a1", "b1"), ("a2", "b1"), ("b1",)]  # a1 alone, a2 alone and nothing fail "at least one of B"
    assert [len(p) for p in compose({"A": [A1, A2], "B": [B1]}, ["A"], ["B"])] == [1, 2, 1, 2]  # the default
    with pytest.raises(ValueError, match="order"):
        list(compose({"A": [A1, A2], "B": [B1]}, ["A"], ["B"], order=["A"]))


def test_verification_accepts_a_sound_composite_and_names_why_others_drop():
    box = FlagBox()
    assert verify(Composite("i", (A1, B1)), {}, box) is None
    greedy = sub("greedy", "C", ["c"], ["c", "b"])  # its fix also repairs b: b1's solution is not needed
    assert verify(Composite("i", (B1, greedy)), {}, box) == "solved without b1"
    harmless = sub("harmless", "C", [], ["c"])  # breaks nothing
    assert verify(Composite("i", (harmless,)), {}, box) == "initialisation does not break the check"
    refused = sub("refused", "C", ["c"], ["c"], tool="refuse")
    assert verify(Composite("i", (refused,)), {}, box).startswith("solution call refuse fails")
    assert box.state == {}  # every attempt rolled back


def test_stepwise_verification_needs_every_call_and_an_unfixable_part_the_handoff():
    box = FlagBox()
    two_calls = Subtask("two", "C", lambda state, e: state.update(c=False),
                        lambda e: [ToolCall(tool="fix", arguments={"flags": ["b"]}),
                                   ToolCall(tool="fix", arguments={"flags": ["c"]})], lambda e: [])
    assert verify(Composite("i", (two_calls,)), {}, box, stepwise=True) is None
    early = Subtask("early", "C", lambda state, e: state.update(c=False),
                    lambda e: [ToolCall(tool="fix", arguments={"flags": ["c"]}),
                               ToolCall(tool="fix", arguments={"flags": ["b"]})], lambda e: [])
    assert verify(Composite("i", (early,)), {}, box, stepwise=True) == "solved before solution call 1 (fix)"
    locked = Subtask("locked", "D", lambda state, e: state.update(d=False), lambda e: [], lambda e: [], fixable=False)
    def transfer(flags, goal):
        return Subtask("transfer", "", lambda state, e: None,
                       lambda e: [ToolCall(tool="fix", arguments={"flags": flags})],
                       lambda e: [Assertion(table="flags", key={"flag": goal}, clause="X-1")])
    assert verify(Composite("i", (A1, locked), transfer([], "b")), {}, box, stepwise=True) is None
    assert Composite("i", (A1, locked), transfer([], "b")).solution({}) == transfer([], "b").solution({})
    assert verify(Composite("i", (A1, locked), transfer([], "a")), {}, box) == "the handoff's goal does not hold"
    assert verify(Composite("i", (A1, locked), transfer("ad", "b")), {}, box) == "solved despite an unfixable part"
    with pytest.raises(ValueError, match="no handoff"):
        Composite("i", (locked,)).solution({})


def test_per_stratum_sampling_draws_as_the_module_level_random_functions_do():
    items = [(k, i) for k in "xyzxw" for i in range(7 if k == "x" else 2)]
    state = random.getstate()
    try:
        random.seed(5)
        expected = []
        for key in "xyzw":  # first-seen order
            pool = [it for it in items if it[0] == key]
            expected += random.sample(pool, min(3, len(pool)))
    finally:
        random.setstate(state)
    assert sample_per_stratum(items, lambda x: x[0], 3, seed=5) == expected
    assert stratum_counts(expected, lambda x: x[0]) == Counter({"x": 3, "y": 2, "z": 2, "w": 2})


def test_subsampling_is_balanced_and_seeded():
    items = [("big", i) for i in range(50)] + [("mid", i) for i in range(5)] + [("small", i) for i in range(2)]
    picked = subsample(items, lambda x: x[0], 12, seed=3)
    assert stratum_counts(picked, lambda x: x[0]) == Counter({"big": 5, "mid": 5, "small": 2})
    assert picked == subsample(items, lambda x: x[0], 12, seed=3)
    assert picked != subsample(items, lambda x: x[0], 12, seed=4)
    assert len(subsample(items, lambda x: x[0], 500, seed=3)) == len(items)  # never more than there are
