"""What acceptance runs for one task: a copy per fault condition, each alternative solution and negative control
under each condition, with ids and labels a reader of the audit can trace back to the task."""
from __future__ import annotations

from evalsuite.audit.acceptance import audit_task, expand
from evalsuite.core.records import Check, FaultPlanSpec, FaultSpec, NegativeControl, ToolCall
from evalsuite.grading.grader import Verdict
from evalsuite.sourcing.spec import Acceptance
from evalsuite.trials.trial import TrialResult


def _plan(name):
    return FaultPlanSpec(name=name, faults=[FaultSpec(tool="hold_invoice", kind="timeout")])


def _faulted(task, *plans, faulted_only=None):
    protocol = task.trial_protocol.model_copy(update={"fault_plans": list(plans), "faulted_only": faulted_only})
    return task.model_copy(deep=True, update={"trial_protocol": protocol})


def test_a_plain_task_is_its_own_one_condition(ap):
    task = ap.tasks[0]
    main, extras = expand(task)
    assert main == [task] and extras == []


def test_each_fault_plan_is_a_copy_pinned_to_that_plan_beside_the_unfaulted_one(ap):
    task = _faulted(ap.tasks[0], _plan("slow_hold"), _plan("lost_hold"))
    main, extras = expand(task)
    assert [t.task_id for t in main] == [task.task_id, f"{task.task_id}@slow_hold", f"{task.task_id}@lost_hold"]
    assert [[p.name for p in t.trial_protocol.fault_plans] for t in main] == [[], ["slow_hold"], ["lost_hold"]]
    assert [t.trial_protocol.faulted_only for t in main] == [None, True, True]
    assert all(t.reference_solution == task.reference_solution for t in main) and extras == []


def test_a_faulted_only_task_runs_no_unfaulted_copy(ap):
    task = _faulted(ap.tasks[0], _plan("slow_hold"), faulted_only=True)
    main, _ = expand(task)
    assert [t.task_id for t in main] == [f"{task.task_id}@slow_hold"]


def test_alternatives_and_controls_replace_the_reference_under_every_condition(ap):
    alt = [ToolCall(tool="get_invoice", arguments={"invoice_id": "X"})]
    bad = [ToolCall(tool="hold_invoice", arguments={"invoice_id": "Y"})]
    task = _faulted(ap.tasks[0], _plan("slow_hold")).model_copy(update={
        "alternative_solutions": [alt], "reference_answer": "held",
        "negative_controls": [NegativeControl(name="hold the wrong one!", calls=bad, final_message="done")]})
    main, extras = expand(task)
    assert [t.task_id for t in main] == [task.task_id, f"{task.task_id}@slow_hold"]
    labels = {label: t for label, t in extras}
    assert list(labels) == ["alternative 1", "control hold the wrong one!",
                            "alternative 1 under fault plan slow_hold", "control hold the wrong one! under fault plan "
                            "slow_hold"]
    first_alt, first_control = labels["alternative 1"], labels["control hold the wrong one!"]
    assert first_alt.task_id == f"{task.task_id}#alt1"
    assert (first_alt.reference_solution, first_alt.reference_answer) == (alt, "held")
    assert first_control.task_id == f"{task.task_id}#control-hold_the_wrong_one_"
    assert (first_control.reference_solution, first_control.reference_answer) == (bad, "done")
    assert labels["alternative 1 under fault plan slow_hold"].task_id == f"{task.task_id}@slow_hold#alt1"
    assert [p.name for p in labels["alternative 1 under fault plan slow_hold"].trial_protocol.fault_plans] == [
        "slow_hold"]


def test_a_failing_alternative_is_reported_with_its_failed_checks_or_its_crash(ap):
    task = ap.tasks[0]
    ok = TrialResult(task_id=task.task_id, trial=0, agent="reference", passed=True, outcome="pass")
    wrong = ok.model_copy(update={"passed": False, "outcome": "fail", "verdict": Verdict(passed=False, checks=[
        Check(name="assertion[0]", passed=False), Check(name="read_only", passed=True),
        Check(name="collateral", passed=False)])})
    crashed = ok.model_copy(update={"passed": False, "outcome": "infra_error",
                                    "error": "Traceback (most recent call last):\n  File \"tools.py\", line 3\n"
                                             "ValueError: no such invoice"})
    silent = ok.model_copy(update={"passed": False, "outcome": "infra_error"})
    audit = audit_task(task, [ok], wrong, wrong, Acceptance(),
                       extras=[("alternative 1", wrong), ("alternative 2", crashed), ("alternative 3", silent),
                               ("alternative 4", ok), ("control wrong", ok), ("control other", wrong)])
    assert audit.alternatives_failing == ["alternative 1: assertion[0], collateral",
                                          "alternative 2: infra_error (ValueError: no such invoice)",
                                          "alternative 3: infra_error"]
    assert audit.controls_passing == ["control wrong"]
    assert audit.quarantined and "alternative 1: assertion[0], collateral (a lawful alternative must pass)" in (
        audit.reasons)
