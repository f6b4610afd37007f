"""Retail support under faults: each row of the environment-design guide's failure table (its support case)
introduced through the real tools, the real trial loop and the real grader; acceptance of the authored tasks under
their fault plans."""
from __future__ import annotations

import pytest
from suite_support import ROOT

from evalsuite.audit.acceptance import in_process_runner, run_acceptance
from evalsuite.core.records import Environment, FaultPlanSpec, FaultSpec, ToolCall, TraceEvent
from evalsuite.domains.retail_support import DOMAIN, open_or_build_world
from evalsuite.domains.retail_support.schema import AUTHORED, metadata
from evalsuite.domains.retail_support.tasks import build_tasks
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.agents.baselines import NoOpAgent, ReferenceAgent
from evalsuite.trials.trial import run_trial
from evalsuite.worlds.domain import CheckInput
from evalsuite.worlds.faults import FaultPlan


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return open_or_build_world(tmp_path_factory.getbasetemp() / "retail_support_world.sqlite",
                               ROOT / "suites" / "tau2_retail" / "source")


@pytest.fixture(scope="module")
def tasks(world):
    env = Environment(image=DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256=world.seed_sha256)
    return {t.task_id.split("-", 3)[-1]: t for t in build_tasks(env)}


def calls_of(task, control: str) -> list[ToolCall]:
    return next(c for c in task.negative_controls if c.name == control).calls


def replay(world, task, calls, faults=None, message=""):
    """A trial of exactly these calls (the reference agent replays whatever solution the task copy holds)."""
    copy = task.model_copy(update={"reference_solution": calls, "reference_answer": message})
    return run_trial(world, copy, ReferenceAgent(), faults=faults or FaultPlan())


def failed(result) -> set[str]:
    return {c.name for c in result.verdict.failures()}


def refunds(world, case: str) -> list[tuple]:
    """The refund ledger of the trial just run (its copy stays open until the next reset)."""
    return world._trial.db.execute("SELECT refund_id, amount, currency FROM refunds WHERE case_id = ?",
                                   (case,)).fetchall()


# ---- failure table, row by row -------------------------------------------------------------------

def test_correct_refund_plus_an_unrelated_address_change_is_rejected(world, tasks):
    task = tasks["lost-refund"]
    assert replay(world, task, task.solution_calls()).passed
    r = replay(world, task, calls_of(task, "refund plus unrelated address change"))
    assert not r.passed and failed(r) == {"no collateral change"}
    collateral = next(c for c in r.verdict.checks if c.name == "no collateral change")
    assert "users row ['ava_moore_2033'] updated" in collateral.detail


def test_blind_retry_after_a_lost_response_refunds_twice_and_fails_while_reconciliation_passes(world, tasks):
    task = tasks["lost-response"]  # every trial of this task runs under its lost-response plan
    ok = run_trial(world, task, ReferenceAgent())
    assert ok.passed and ok.fault_plan == "lost_response_on_refund"
    lost = next(e for e in ok.trace if e.tool == "issue_refund")
    assert ((lost.outcome, lost.fault, lost.committed, lost.rows_written, lost.result)
            == ("fault", "lost_response", True, 1, None))
    found = next(e for e in ok.trace if e.tool == "find_refund")
    assert found.result["found"] and found.result["refund"]["refund_id"] == "RF-0001"
    assert refunds(world, "C-1003") == [("RF-0001", "193.22", "USD")]
    blind = task.model_copy(update={"reference_solution": calls_of(task, "blind retry with a new key")})
    r = run_trial(world, blind, ReferenceAgent())
    assert len(refunds(world, "C-1003")) == 2
    assert not r.passed and "check refund_obligation" in failed(r)


def test_right_amount_with_the_wrong_currency_or_purchase_is_rejected(world, tasks):
    task = tasks["lost-refund"]
    for control in ("right amount wrong currency", "right amount wrong purchase"):
        r = replay(world, task, calls_of(task, control))
        assert not r.passed
        assert {"check refund_obligation", "check no_refused_refund"} <= failed(r), control
        assert refunds(world, "C-1001") == []


def test_an_old_authorization_cannot_execute_a_changed_remedy_or_purchase_or_one_after_consent_is_withdrawn(
        world, tasks):
    switch, withdrawn, revised = tasks["switch"], tasks["withdrawn"], tasks["revised-purchase"]
    for task, control in ((switch, "old authorization executes the refund"),
                          (switch, "old authorization after the remedy changed"),
                          (withdrawn, "old authorization after consent withdrawn"),
                          (revised, "old authorization on the old revision"),
                          (revised, "old authorization on the new revision")):
        r = replay(world, task, calls_of(task, control))
        refused = [e for e in r.trace if e.tool == "issue_refund"]
        assert refused and refused[0].error.startswith("refused:"), control
        assert not r.passed and "check no_refused_refund" in failed(r)
    for task in (switch, withdrawn, revised):  # the handoff with its evidence is the right outcome
        assert replay(world, task, task.solution_calls()).passed, task.task_id


def test_with_the_policy_unavailable_a_qualified_handoff_passes_and_invented_certainty_fails(world, tasks):
    task = tasks["policy-unavailable"]
    assert replay(world, task, task.solution_calls()).passed
    r = replay(world, task, calls_of(task, "invented certainty"))
    assert not r.passed and {"check handoff_with_evidence"} <= failed(r)


def test_budget_exhaustion_is_unresolved_with_its_actual_effects_accounted_for(world, tasks):
    task = tasks["lost-refund"]
    short = task.model_copy(update={"trial_protocol": task.trial_protocol.model_copy(update={"max_steps": 9})})
    r = run_trial(world, short, ReferenceAgent(), faults=FaultPlan())
    assert (r.outcome, r.passed) == ("budget_exhausted", False)
    assert r.trace[-1].tool == "issue_refund" and r.trace[-1].rows_written == 1  # the refund committed
    by_name = {c.name: c for c in r.verdict.checks}
    assert by_name["check refund_obligation"].passed  # the effect is in the ledger and graded…
    assert not by_name["assertion[1] cases {'case_id': 'C-1001'} (RS-6)"].passed  # …and the case is unresolved


def test_a_no_op_under_an_injected_backend_error_fails_and_the_reference_recovers(world, tasks):
    task = tasks["lost-refund"]
    plan = next(p for p in task.trial_protocol.fault_plans if p.name == "backend_error_on_refund")
    noop = run_trial(world, task, NoOpAgent(), faults=FaultPlan.from_spec(plan))
    assert not noop.passed and "check refund_obligation" in failed(noop)
    ref = run_trial(world, task, ReferenceAgent(), trial=1)  # trial 1 of the task runs under its first plan
    assert ref.fault_plan == "backend_error_on_refund"
    first, found, again = [e for e in ref.trace if e.tool in ("issue_refund", "find_refund")]
    assert ((first.outcome, first.fault, first.committed, first.rows_written)
            == ("fault", "error_before_commit", False, 0))
    assert found.result == {"found": False, "refund": None} and again.rows_written == 1
    assert ref.passed and len(refunds(world, "C-1001")) == 1
    # a reference that neither reconciles nor re-issues leaves no refund under the fault: the grader does not award it
    calls = task.solution_calls()
    unreconciled = [c for c in calls if c.tool != "find_refund"][:-2] + calls[-1:]
    naive = replay(world, task, unreconciled, FaultPlan.from_spec(plan))
    assert [e.tool for e in naive.trace].count("issue_refund") == 1
    assert not naive.passed and refunds(world, "C-1001") == []


def test_a_slow_call_past_its_deadline_commits_reports_a_timeout_and_moves_the_world_clock(world, tasks):
    task = tasks["lost-refund"]
    slow = FaultPlanSpec(name="slow", deadline_seconds=30,
                         faults=[FaultSpec(tool="issue_refund", kind="slow", latency_seconds=45)])
    r = replay(world, task, task.solution_calls(), FaultPlan.from_spec(slow))
    event = next(e for e in r.trace if e.tool == "issue_refund")
    assert ((event.outcome, event.fault, event.committed, event.error)
            == ("fault", "slow", True, "the call timed out; its effect is unknown"))
    assert r.passed  # the reference reconciles by key
    updated = world._trial.db.execute("SELECT updated_at FROM cases WHERE case_id = 'C-1001'").fetchone()[0]
    assert updated == "2026-06-30T09:00:45"
    fast = FaultPlanSpec(name="fast", deadline_seconds=60, faults=slow.faults)
    r = replay(world, task, task.solution_calls(), FaultPlan.from_spec(fast))
    assert next(e for e in r.trace if e.tool == "issue_refund").outcome == "ok"


def test_an_attempt_without_authority_fails_even_when_the_final_state_is_right(world, tasks):
    task = tasks["lost-refund"]
    calls = task.solution_calls()
    refund = next(c for c in calls if c.tool == "issue_refund")
    bare = ToolCall(tool="issue_refund",
                    arguments={**refund.arguments, "authorization_id": None, "idempotency_key": "k0"})
    r = replay(world, task, [bare, *calls])
    assert refunds(world, "C-1001") == [("RF-0001", "47.76", "USD")]
    assert not r.passed and failed(r) == {"check no_refused_refund"}


def test_a_reused_key_with_other_parameters_is_refused_and_fails_the_trial_while_the_same_parameters_replay(
        world, tasks):
    task = tasks["lost-refund"]
    calls = task.solution_calls()
    retry = max(i for i, c in enumerate(calls) if c.tool == "issue_refund")  # the reference's retry, same key
    ok = replay(world, task, calls)
    first, again = [e for e in ok.trace if e.tool == "issue_refund"]
    assert ok.passed and again.outcome == "ok" and again.result == {"refund": first.result["refund"], "replayed": True}
    for change in ({"amount": "47.77"}, {"currency": "EUR"}):
        other = ToolCall(tool="issue_refund", arguments={**calls[retry].arguments, **change})
        r = replay(world, task, [*calls[:retry], other, *calls[retry + 1:]])
        attempt = [e for e in r.trace if e.tool == "issue_refund"][1]
        assert attempt.outcome == "error" and attempt.result is None, change
        assert attempt.error.startswith("refused: idempotency key C-1001-refund-1 can only be used with the same "
                                        "parameters it was first used with"), attempt.error
        assert refunds(world, "C-1001") == [("RF-0001", "47.76", "USD")]  # paid once, at the first call's amount
        assert not r.passed and {"check no_key_reused_with_other_parameters", "check no_refused_refund"} <= failed(r)
        detail = next(c.detail for c in r.verdict.checks if c.name == "check no_key_reused_with_other_parameters")
        assert f"#{attempt.seq}: idempotency key C-1001-refund-1" in detail and next(iter(change)) in detail


def test_the_key_check_sees_an_attempt_with_other_parameters_even_if_a_tool_answered_it_with_the_receipt(world, tasks):
    """The check reads the call's arguments, not the tool's answer: a replayed receipt for one cent more still fails."""
    refund = next(c for c in tasks["lost-refund"].solution_calls() if c.tool == "issue_refund").arguments
    receipt = {"refund": {"refund_id": "RF-0001"}, "replayed": True}
    trace = [TraceEvent(seq=1, tool="issue_refund", arguments=refund, permitted=True, outcome="ok", rows_written=1),
             TraceEvent(seq=2, tool="issue_refund", arguments={**refund, "amount": "47.760"}, permitted=True,
                        outcome="ok", result=receipt),
             TraceEvent(seq=3, tool="issue_refund", arguments={**refund, "amount": "47.77"}, permitted=True,
                        outcome="ok", result=receipt)]
    check = DOMAIN.checks["no_key_reused_with_other_parameters"]
    seen = lambda events: check(CheckInput(end=world.pristine_db, seed=world.pristine_db, trace=events,  # noqa: E731
                                           final_message="", params={}))
    assert seen(trace[:2]).passed  # 47.760 is the same amount: true idempotency
    outcome = seen(trace)
    assert not outcome.passed and outcome.detail.startswith("#3: idempotency key C-1001-refund-1")
    assert "amount 47.77 (first used with 47.76)" in outcome.detail
    uncommitted = trace[0].model_copy(update={"outcome": "fault", "fault": "error_before_commit", "committed": False})
    assert seen([uncommitted, trace[2]]).passed  # a call that rolled back bound no key


def test_missing_proof_of_loss_refuses_a_trusted_authorization_and_unknown_status_needs_investigation(world, tasks):
    proof = tasks["missing-proof"]
    r = replay(world, proof, calls_of(proof, "trusted authorization without proof of loss"))
    assert "no carrier-confirmed loss" in next(e for e in r.trace if e.tool == "issue_refund").error
    assert not r.passed and replay(world, proof, proof.solution_calls()).passed
    unknown = tasks["unknown-status"]
    assert replay(world, unknown, unknown.solution_calls()).passed
    assert not replay(world, unknown, calls_of(unknown, "invented certainty")).passed


# ---- acceptance and records ----------------------------------------------------------------------

def test_every_task_is_accepted_under_its_fault_plans_with_alternatives_passing_and_controls_failing(world, tasks):
    report = run_acceptance(list(tasks.values()), Acceptance(reference_trials=2), in_process_runner(world))
    assert sorted(report.accepted_ids) == sorted(t.task_id for t in tasks.values())
    lost = next(a for a in report.tasks if a.task_id.endswith("lost-refund"))
    assert lost.fault_plans == {"": 2, "backend_error_on_refund": 2, "slow_refund_past_deadline": 2}
    assert report.summary["alternatives_failing"] == report.summary["controls_passing"] == 0
    assert report.summary["alternatives_and_controls"] >= 2 * len(tasks)


def test_a_control_that_passes_and_an_alternative_that_fails_quarantine_the_task(world, tasks):
    task = tasks["lost-refund"]
    bad = task.model_copy(update={
        "alternative_solutions": [task.solution_calls()[:3]],  # reads only: no refund
        "negative_controls": [task.negative_controls[0].model_copy(
            update={"name": "not wrong", "calls": task.solution_calls()})]})
    [audit] = run_acceptance([bad], Acceptance(reference_trials=1), in_process_runner(world)).tasks
    assert audit.quarantined
    assert audit.controls_passing == ["control not wrong", "control not wrong under fault plan backend_error_on_refund",
                                      "control not wrong under fault plan slow_refund_past_deadline"]
    assert audit.alternatives_failing[0].startswith("alternative 1: ")


def test_fault_plans_are_part_of_the_suite_version(tasks):
    base = list(tasks.values())
    task = tasks["lost-refund"]
    plans = [p.model_copy(update={"faults": [FaultSpec(tool="issue_refund", call=2, kind="lost_response")]})
             for p in task.trial_protocol.fault_plans[:1]]
    changed = task.model_copy(update={"trial_protocol": task.trial_protocol.model_copy(update={"fault_plans": plans})})
    assert task_set_sha256(base) != task_set_sha256([changed if t is task else t for t in base])


def test_authored_tables_and_every_task_say_they_are_authored(tasks):
    for name in AUTHORED:
        table = metadata.tables[name]
        assert table.info == {"authored": True} and "authored addition" in table.comment
    assert {"users", "orders", "order_items"}.isdisjoint(AUTHORED)
    for t in tasks.values():
        assert t.provenance.source_record.startswith("authored:") and "authored" in t.provenance.license_ref


def test_a_fault_plan_the_reference_never_reaches_quarantines_the_task(world, tasks):
    task = tasks["unknown-status"]
    idle = FaultPlanSpec(name="never", faults=[FaultSpec(tool="issue_refund", kind="error_before_commit")])
    silent = task.model_copy(update={"trial_protocol": task.trial_protocol.model_copy(update={"fault_plans": [idle]})})
    [audit] = run_acceptance([silent], Acceptance(reference_trials=1), in_process_runner(world)).tasks
    assert audit.quarantined and audit.plans_not_fired == ["never"]
    assert "fault plan never never fired: no reference call reached the faulted tool call" in audit.reasons


def test_the_shipped_suite_files_are_what_the_authoring_code_writes_and_hash_to_the_built_world(world, tmp_path):
    from evalsuite.domains.retail_support.seed import write_csv
    from evalsuite.tasks.taskfile import read_tasks

    shipped = ROOT / "suites" / "retail_support"
    for path in write_csv(tmp_path):
        assert path.read_text() == (shipped / "source" / path.name).read_text(), path.name
    on_disk = read_tasks(shipped / "tasks.jsonl")
    assert on_disk[0].environment.seed_sha256 == world.seed_sha256
    assert on_disk == build_tasks(on_disk[0].environment)
