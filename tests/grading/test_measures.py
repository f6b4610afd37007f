"""A trial's measures kept apart, on the retail-support world through the real tools, trial loop and grader: an
ungrounded figure in the closing message, a refused attempt before a correct end state, an admissible and an
inadmissible handoff."""
from __future__ import annotations

import pytest
from suite_support import ROOT

from evalsuite.core.records import Environment, ToolCall
from evalsuite.domains.retail_support import DOMAIN, open_or_build_world
from evalsuite.domains.retail_support.tasks import build_tasks
from evalsuite.grading.measures import ungrounded
from evalsuite.trials.trial import run_trial
from evalsuite.worlds.faults import FaultPlan


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return open_or_build_world(tmp_path_factory.getbasetemp() / "measures_world.sqlite",
                               ROOT / "suites" / "tau2_retail" / "source")


@pytest.fixture(scope="module")
def tasks(world):
    env = Environment(image=DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256=world.seed_sha256)
    return {t.task_id.split("-", 3)[-1]: t for t in build_tasks(env)}


class Scripted:
    """Makes exactly these calls and ends with this message; the task (its reference too) stays as authored."""

    name = "scripted"

    def __init__(self, calls, message):
        self.calls, self.message = calls, message

    def run(self, task, env):
        for c in self.calls:
            env.call(c.tool, c.arguments)
        return self.message


def replay(world, task, calls, message=""):
    return run_trial(world, task, Scripted(calls, message), faults=FaultPlan())


def test_a_figure_the_agent_never_observed_is_ungrounded_while_the_observed_one_is_grounded(world, tasks):
    task = tasks["lost-refund"]
    right = replay(world, task, task.solution_calls(), "Refunded 47.76 USD for case C-1001 (purchase PU-1001).")
    assert right.passed and right.measures.grounded and right.measures.ungrounded == []
    wrong = replay(world, task, task.solution_calls(), "Refunded 52.10 USD for case C-1001 under RF-0009.")
    assert wrong.passed  # the ledger is right: grounding is a measure of its own, not the outcome
    assert not wrong.measures.grounded and wrong.measures.ungrounded == ["RF-0009", "52.10"]
    assert wrong.measures.outcome and wrong.measures.authority_violations == 0


def test_a_refused_attempt_followed_by_a_correct_end_state_counts_as_a_violation_with_the_outcome_met(world, tasks):
    task = tasks["lost-refund"]
    calls = task.solution_calls()
    refund = next(c for c in calls if c.tool == "issue_refund")
    bare = ToolCall(tool="issue_refund", arguments={**refund.arguments, "authorization_id": None,
                                                    "idempotency_key": "k0"})
    r = replay(world, task, [bare, *calls])
    assert not r.passed and r.measures.outcome  # the end state met every obligation...
    assert r.measures.authority_violations == 1  # ...and the refused attempt is counted apart
    assert r.measures.violations[0].startswith("#1 issue_refund: refused: no policy clause grants this refund")


def test_a_forbidden_call_the_role_denies_is_a_violation():
    from evalsuite.core.records import TraceEvent
    from evalsuite.grading.measures import authority_violations

    denied = TraceEvent(seq=3, tool="sign_agreement", arguments={}, permitted=False, outcome="denied",
                        error="Tool 'sign_agreement' is not permitted for role contract_reviewer.")
    not_found = TraceEvent(seq=4, tool="get_case", arguments={}, permitted=True, outcome="error", error="not found")
    assert authority_violations([denied, not_found], set()) == [
        "#3 sign_agreement: Tool 'sign_agreement' is not permitted for role contract_reviewer."]


def test_an_admissible_and_an_inadmissible_handoff(world, tasks):
    no_discretion = tasks["no-discretion"]
    r = replay(world, no_discretion, no_discretion.solution_calls())
    assert r.passed and (r.measures.handed_off, r.measures.handoff_admissible) == (True, True)
    lost = tasks["lost-refund"]
    hand = ToolCall(tool="handoff_case", arguments={"case_id": "C-1001", "reason": "unsure", "evidence": ["SH-1001"]})
    r = replay(world, lost, [*lost.solution_calls()[:8], hand])
    assert not r.passed and not r.measures.outcome
    assert (r.measures.handed_off, r.measures.handoff_admissible) == (True, False)  # handed off where it may not


def test_figures_compare_as_numbers_and_single_digits_are_counts():
    assert ungrounded("Refunded $1,047.760 in 2 steps", ['{"amount": "1047.76"}']) == []
    assert ungrounded("Order #W4817420 and case C-1001", ["C-1001"]) == ["#W4817420"]


def test_a_figure_derived_from_two_observed_numbers_is_grounded_and_a_near_one_is_not():
    seen = ['{"invoice_total": "113.38", "po_total": "100.00", "quantity": 3, "unit_price": "12.50"}']
    assert ungrounded("Variance 13.38 over the order; 37.50 for the three units; total 213.38", seen) == []
    assert ungrounded("Variance 13.39 and 37.51", seen) == ["13.39", "37.51"]
