"""Acceptance of a task with fault plans, alternative solutions and negative controls, through real trials on the
bundled AP world: what is run, what each condition's reference did, and the counts the audit page reports."""
from __future__ import annotations

from evalsuite.audit.acceptance import audit_task, expand, in_process_runner, run_acceptance
from evalsuite.core.records import FaultPlanSpec, FaultSpec, NegativeControl, ToolCall, TraceEvent
from evalsuite.sourcing.spec import Acceptance

NEVER_FIRED = "fault plan never never fired: no reference call reached the faulted tool call"
UNSOLVABLE = "unsolvable under fault plan rolled_back: the reference solution failed all 2 trials"


def _reads(task):
    return [c for c in task.solution_calls() if c.tool.startswith("get_")]


def _conditions(task, controls=()):
    """`task` under three fault plans (one its reference survives, one it cannot, one that never fires), with one
    alternative solution (the reference read twice over) and `controls`."""
    plans = [FaultPlanSpec(name="slow", faults=[FaultSpec(tool="release_invoice", kind="timeout")]),
             FaultPlanSpec(name="rolled_back", faults=[FaultSpec(tool="release_invoice", kind="error_before_commit")]),
             FaultPlanSpec(name="never", faults=[FaultSpec(tool="release_invoice", call=9, kind="timeout")])]
    protocol = task.trial_protocol.model_copy(update={"fault_plans": plans})
    return task.model_copy(deep=True, update={
        "task_id": "conditions", "trial_protocol": protocol, "negative_controls": list(controls),
        "alternative_solutions": [_reads(task) + task.solution_calls()],
        "provenance": task.provenance.model_copy(update={"stratum": {"intent": "release"}})})


def _accepted(ap):
    """(runner calls, report) of acceptance over the task, two reference trials a condition. Called by each test,
    not a shared fixture: mutmut counts a function a fixture calls against the first test using it alone."""
    control = NegativeControl(name="Read Only", calls=_reads(ap.tasks[0]))
    task, calls = _conditions(ap.tasks[0], [control]), []
    runner = in_process_runner(ap.world)

    def counting(tasks, plan):
        calls.append(([t.task_id for t in tasks], dict(plan)))
        return runner(tasks, plan)
    return calls, run_acceptance([task], Acceptance(reference_trials=2), counting)


def test_each_condition_runs_the_reference_n_times_and_each_alternative_and_control_once(ap):
    calls, _ = _accepted(ap)
    conditions = ["conditions", "conditions@slow", "conditions@rolled_back", "conditions@never"]
    assert calls == [(conditions, {"reference": 2, "noop": 1, "adversary": 1}),
                     ([f"{c}#{x}" for c in conditions for x in ("alt1", "control-Read_Only")], {"reference": 1})]


def test_the_audit_reports_each_condition_s_reference_passes_and_the_plans_that_never_fired(ap):
    _, report = _accepted(ap)
    [audit] = report.tasks
    assert audit.fault_plans == {"": 2, "slow": 2, "rolled_back": 0, "never": 2}
    assert audit.plans_not_fired == ["never"]
    assert audit.gold_replay_errors == []  # the faults the plans injected are the scenario, not the gold's errors
    assert audit.alternatives_failing == [
        "alternative 1 under fault plan rolled_back: assertion[0] invoices {'invoice_id': 'INV-55100'} (AP-2)"]
    assert audit.controls_passing == []
    assert audit.reasons == [UNSOLVABLE, NEVER_FIRED, audit.alternatives_failing[0]
                             + " (a lawful alternative must pass)"]


def test_the_summary_counts_conditions_alternatives_controls_and_trials(ap):
    _, report = _accepted(ap)
    assert report.summary == {
        "tasks": 1, "accepted": 0, "quarantined": 1, "quarantined_fraction": 1.0, "max_quarantined_fraction": 0.1,
        "releasable": False, "reference_trials": 2, "trials_run": 4 * (2 + 2) + 8, "gold_replay_errors": 0,
        "noop_passes": 0, "adversary_passes": 0, "fault_plan_conditions": 3, "alternatives_and_controls": 8,
        "alternatives_failing": 1, "controls_passing": 0}
    assert report.strata == [{"intent": "release", "tasks": 1, "accepted": 0}]


def test_a_task_with_a_negative_control_alone_runs_it(ap):
    control = NegativeControl(name="read only", calls=[ToolCall(tool="get_invoice", arguments={})])
    task = ap.tasks[0].model_copy(update={"negative_controls": [control]})
    main, extras = expand(task)
    assert [t.task_id for t in main] == [task.task_id]
    assert [(label, t.task_id) for label, t in extras] == [("control read only", f"{task.task_id}#control-read_only")]


def test_a_control_under_a_fault_plan_runs_under_that_plan(ap):
    task = _conditions(ap.tasks[0], [NegativeControl(name="Read Only", calls=[])])
    labels = {label: t for label, t in expand(task)[1]}
    control = labels["control Read Only under fault plan slow"]
    assert control.task_id == "conditions@slow#control-Read_Only"
    assert [p.name for p in control.trial_protocol.fault_plans] == ["slow"] and control.trial_protocol.faulted_only


def _event(outcome, fault=None):
    return TraceEvent(seq=1, tool="get_invoice", arguments={}, permitted=True, outcome=outcome, fault=fault,
                      error="backend down")


def test_under_a_fault_plan_an_error_it_did_not_inject_is_a_gold_error_and_a_noop_passing_names_the_plan(ap):
    task = ap.tasks[0]
    ref, noop, adv = in_process_runner(ap.world)([task], {"reference": 1, "noop": 1, "adversary": 1})
    planned = ref.model_copy(update={"fault_plan": "slow", "trace": [_event("error")]})
    unplanned = ref.model_copy(update={"trial": 1, "trace": [_event("fault", "timeout")]})
    silent = noop.model_copy(update={"fault_plan": "slow", "verdict": ref.verdict})
    audit = audit_task(task, [planned, unplanned], [noop, silent], adv, Acceptance())
    assert [(g.tool, g.error) for g in audit.gold_replay_errors] == [("get_invoice", "backend down")]
    assert "trivially passable: the no-op agent passes the state check of a task that requires a write under " \
           "fault plan slow" in audit.reasons
