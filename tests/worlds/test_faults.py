"""Fault plans from task records: which trial runs under which plan, and what a plan injects."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalsuite.core.records import FaultPlanSpec, FaultSpec, TrialProtocol
from evalsuite.worlds.faults import Fault, FaultPlan, plan_for_trial, schedule

LOST = FaultPlanSpec(name="lost", faults=[FaultSpec(tool="pay", call=2, kind="lost_response")])
SLOW = FaultPlanSpec(name="slow", deadline_seconds=10, faults=[FaultSpec(tool="pay", kind="slow", latency_seconds=12)])


def test_trials_cycle_through_the_unfaulted_world_and_each_plan():
    protocol = TrialProtocol(fault_plans=[LOST, SLOW])
    assert [p and p.name for p in schedule(protocol)] == [None, "lost", "slow"]
    assert [(plan_for_trial(protocol, i) or FaultPlan()).name for i in range(4)] == [None, "lost", "slow", None]
    only = TrialProtocol(fault_plans=[LOST], faulted_only=True)
    assert [plan_for_trial(only, i).name for i in range(2)] == ["lost", "lost"]
    assert plan_for_trial(TrialProtocol(), 5) is None


def test_a_plan_hits_the_named_call_of_the_named_tool_only():
    plan = FaultPlan.from_spec(LOST)
    taken = [plan.take("pay"), plan.take("read"), plan.take("pay"), plan.take("pay")]
    assert taken == [None, None, Fault.LOST_RESPONSE, None]
    slow = FaultPlan.from_spec(SLOW)
    assert slow.take("pay") is Fault.SLOW and slow.latency_of("pay") == 12 and slow.past_deadline(12)


def test_bad_plans_are_refused():
    with pytest.raises(ValueError, match="faulted twice"):
        FaultPlan.from_spec(FaultPlanSpec(name="x", faults=[FaultSpec(tool="pay", kind="timeout")] * 2))
    with pytest.raises(ValidationError):
        FaultSpec(tool="pay", call=0, kind="timeout")
    with pytest.raises(ValidationError):
        FaultSpec(tool="pay", kind="explode")
    with pytest.raises(ValidationError):
        FaultPlanSpec(name="no faults", faults=[])
