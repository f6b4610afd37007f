"""Grader probes: a near miss of the reference that still passes is reported, unless the goal declares the field
irrelevant; an imported suite's own grader is probed the same way."""
from __future__ import annotations

import datetime as dt

import pytest

from evalsuite.audit.probes import UNRELATED, ColumnValues, near_misses, probe_task
from evalsuite.core.records import (
    Assertion,
    DomainCheck,
    Environment,
    GoalState,
    MaskedField,
    Policy,
    Provenance,
    SuiteRef,
    TaskRecord,
    ToolCall,
    Trigger,
)
from tests.grading import test_domain_checks  # noqa: F401  (registers the shop's closed_exactly check)
from tests.grading.grader_shop import CLERK, build_world

CLOSE_O1 = [ToolCall(tool="get_order", arguments={"order_id": "O1"}),
            ToolCall(tool="set_status", arguments={"order_id": "O1", "status": "closed"})]


def _task(goal: GoalState) -> TaskRecord:
    return TaskRecord(
        task_id="t1", domain="shop", suite=SuiteRef(name="s", version="1"),
        environment=Environment(image="shop:1", seed_snapshot="w", seed_sha256="0" * 64), role=CLERK,
        policy=Policy(doc="p", version="1", effective_from=dt.date(2026, 1, 1), clauses=[{"id": "c1", "text": "x"}]),
        trigger=Trigger(type="queue_item", text="close O1"), goal_state=goal, reference_solution=CLOSE_O1,
        provenance=Provenance(source_record="r", outcome_verified_by="test", license_ref="test"))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("w") / "shop.sqlite")


@pytest.fixture(scope="module")
def columns(world):
    return ColumnValues(world)


def test_near_misses_of_each_kind(columns):
    assert near_misses("O1", columns) == ["O2"]  # another valid value of the column it comes from
    assert near_misses("12.50", columns) == ["12.51"] and near_misses(98.7, columns) == [98.71]
    assert near_misses("2026-02-28", columns) == ["2026-03-01"] and near_misses(True, columns) == [False]
    assert near_misses("free text", columns) == [UNRELATED] and near_misses(["O2", "x"], columns) == [["O1", "x"]]
    assert near_misses({"a": 1}, columns) == [] and near_misses(None, columns) == []


def test_an_exact_goal_rejects_every_near_miss(world, columns):
    goal = GoalState(assertions=[Assertion(table="orders", key={"order_id": "O1"}, expect={"status": "closed"},
                                           clause="c1")])
    probes, original = probe_task(world, _task(goal), columns)
    assert probes.tried == 2 and probes.passed_anyway == [] and original is None  # the read is never nudged


def test_a_check_blind_to_which_order_is_reported(world, columns):
    goal = GoalState(domain_checks=[DomainCheck(name="closed_exactly", params={"more": 1}, clause="c1")],
                     volatile_fields_masked=[MaskedField(field="orders.status", justification="the check judges it")])
    probes, _ = probe_task(world, _task(goal), columns)
    passed_anyway = [(h.call, h.tool, h.argument, h.value) for h in probes.passed_anyway]
    assert passed_anyway == [(1, "set_status", "order_id", "O2")]
    assert probes.declared_irrelevant == []  # a status other than closed fails the check


def test_a_masked_field_is_declared_irrelevant_not_reported(world, columns):
    goal = GoalState(assertions=[Assertion(table="orders", key={"order_id": "O1"}, clause="c1")],
                     volatile_fields_masked=[MaskedField(field="orders.status", justification="any status will do")])
    probes, _ = probe_task(world, _task(goal), columns)
    assert [h.argument for h in probes.declared_irrelevant] == ["status"]
    # and the mask, naming the column for every row, hides which order was changed: that one is reported
    assert [(h.argument, h.value) for h in probes.passed_anyway] == [("order_id", "O2")]


def test_the_peers_grader_is_probed_with_the_no_op(world, columns):
    goal = GoalState(assertions=[Assertion(table="orders", key={"order_id": "O1"}, expect={"status": "closed"},
                                           clause="c1")])
    lenient = lambda task, trial, final: trial.row("orders", ("O1",)) is not None  # noqa: E731  (a peer that checks nothing)
    _, original = probe_task(world, _task(goal), columns, lenient)
    assert original.noop_passes and {h.argument for h in original.passed_anyway} == {"order_id", "status"}
