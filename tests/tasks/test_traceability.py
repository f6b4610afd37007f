"""The traceability of tasks to a dossier, on the shipped suites: it holds on retail_support (and its variant)
and contract_review, and each kind of break is one line saying what is missing and, for an open matter, who must
resolve it."""
from __future__ import annotations

import pytest
from suite_support import ROOT

from evalsuite.domains.registry import domain_of as get_domain
from evalsuite.domains.retail_support import CUSTOMIZE
from evalsuite.sourcing.dossier import PermissionLink, load_dossier
from evalsuite.sourcing.policies import load_policy
from evalsuite.tasks.customization import customize_task
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.tasks.traceability import trace_problems

SUITES = ROOT / "suites"


def suite(name: str, policy_files: list[str]):
    return (load_dossier(SUITES / name / "dossier.yaml"), read_tasks(SUITES / name / "tasks.jsonl"),
            get_domain(name), [load_policy(SUITES / p) for p in policy_files])


RETAIL = ("retail_support", ["../evalsuite/domains/retail_support/policies/support_policy_v1.md",
                             "../evalsuite/domains/retail_support/policies/support_policy_v2.md"])
CONTRACT = ("contract_review", ["contract_review/policies/contract_playbook_v1.md",
                                "contract_review/policies/contract_playbook_v2.md"])


def requirement(dossier, rid, **links):
    reqs = [r.model_copy(update={"links": r.links.model_copy(update=links)}) if r.id == rid else r
            for r in dossier.requirements]
    return dossier.model_copy(update={"requirements": reqs})


def variant(dossier, tasks, policies):
    c = dossier.customization("manager_discretion_removed")
    v2 = next(p for p in policies if p.version == "v2").as_policy()
    return dossier.applied([c.id]), [customize_task(t, c, v2, CUSTOMIZE) for t in tasks]


@pytest.mark.parametrize("which", [RETAIL, CONTRACT])
def test_the_shipped_suites_are_traceable(which):
    assert trace_problems(*suite(*which)) == []


def test_the_variant_derived_from_the_customization_is_traceable():
    dossier, tasks, domain, policies = suite(*RETAIL)
    dossier, moved = variant(dossier, tasks, policies)
    assert trace_problems(dossier, moved, domain, policies) == []
    refund = next(t for t in moved if t.task_id == "rs-c-1001-lost-refund")
    assert (refund.policy.version, refund.role.forbidden_tools) == ("v2", ["issue_refund", "request_manager_decision"])
    assert [c.name for c in refund.goal_state.domain_checks][0] == "handoff_with_evidence"
    assert refund.reference_solution[-1].tool == "handoff_case" and refund.trial_protocol.fault_plans == []


def test_a_restriction_enforced_only_by_leave_to_call_a_read_tool_blocks():
    """On 7bb15c3 a restricting requirement "enforced" by `may: true` on a read tool released."""
    dossier, tasks, domain, policies = suite(*RETAIL)
    problems = trace_problems(requirement(dossier, "RS-R5", tools=[]), tasks, domain, policies)  # find_refund: a read
    assert problems == ["requirement RS-R5 restricts an action, but no tool rule or role permission enforces it (a "
                        "role's leave to call a read tool restricts nothing)"]
    handoff = [PermissionLink(role="support_agent", tool="handoff_case", may=True)]  # a write: the way it may act
    assert trace_problems(requirement(dossier, "RS-R5", tools=[], permissions=handoff), tasks, domain, policies) == []


def test_a_table_tool_or_policy_the_dossier_names_and_the_suite_lacks_blocks():
    """On 7bb15c3 a system naming a table `x` or a tool ' ' released."""
    dossier, tasks, domain, policies = suite(*RETAIL)
    systems = [dossier.systems[0].model_copy(update={"tables": ["cases", "x"], "tools": ["get_case", " "]})]
    sources = [dossier.sources[0].model_copy(update={"ref": "other_policy"}), *dossier.sources[1:]]
    spoilt = dossier.model_copy(update={"systems": systems, "sources": sources})
    assert trace_problems(spoilt, tasks, domain, policies) == [
        "system support_desk names table 'x', which domain retail_support does not have",
        "system support_desk names tool ' ', which domain retail_support does not have",
        "source support_policy names policy 'other_policy', which the suite does not have"]


def test_a_requirement_with_no_check_blocks():
    dossier, tasks, domain, policies = suite(*RETAIL)
    problems = trace_problems(requirement(dossier, "RS-R4", checks=[]), tasks, domain, policies)
    assert problems == ["requirement RS-R4 has no check that verifies it"]


def test_a_requirement_whose_checks_no_task_carries_blocks():
    dossier, tasks, domain, policies = suite(*CONTRACT)
    problems = trace_problems(requirement(dossier, "CR-R6", checks=["handoff_focus"]),
                              [t for t in tasks if t.task_id != "cr-change-of-intent"], domain, policies)
    assert "requirement CR-R6: none of its checks (handoff_focus) is in a released task's goal state" in problems


def test_a_cited_clause_with_no_requirement_blocks():
    dossier, tasks, domain, policies = suite(*RETAIL)
    dossier = dossier.model_copy(update={"requirements": [r for r in dossier.requirements if r.id != "RS-R5"],
                                         "routine_cases": [], "exceptions": []})
    assert trace_problems(dossier, tasks, domain, policies) == [
        "clause RS-5 is cited by 9 task(s), first rs-c-1001-lost-refund, but no requirement states it"]


def test_a_consequential_open_question_or_unresolved_contradiction_blocks_naming_who_must_resolve_it():
    dossier, tasks, domain, policies = suite(*RETAIL)
    q = [q.model_copy(update={"status": "open", "answer": None}) if q.id == "Q-2" else q
         for q in dossier.open_questions]
    x = [c.model_copy(update={"resolution": None}) if c.id == "X-1" else c for c in dossier.contradictions]
    assert trace_problems(dossier.model_copy(update={"open_questions": q, "contradictions": x}), tasks, domain,
                          policies) == [
        "open question Q-2 is consequential and unanswered; support_operations_lead must answer it: What governs a "
        "case whose policy version (v3) is not available to the agent?",
        "contradiction X-1 between support_policy and policy_table is consequential and unresolved; "
        "support_operations_lead must resolve it"]
    inconsequential = [q.model_copy(update={"consequential": False}) for q in q]
    assert trace_problems(dossier.model_copy(update={"open_questions": inconsequential}), tasks, domain,
                          policies) == []


def test_a_customization_that_moved_the_policy_alone_blocks():
    dossier, tasks, domain, policies = suite(*RETAIL)
    v2 = next(p for p in policies if p.version == "v2").as_policy()
    edited = [t.model_copy(update={"policy": v2}) if t.task_id == "rs-c-1001-lost-refund" else t for t in tasks]
    assert trace_problems(dossier, edited, domain, policies) == [
        "task rs-c-1001-lost-refund: customization manager_discretion_removed moved the policy without the tool "
        "authority or expected outcome"]


def test_a_variant_whose_goal_states_were_left_behind_blocks():
    dossier, tasks, domain, policies = suite(*RETAIL)
    dossier, moved = variant(dossier, tasks, policies)
    stale = {t.task_id: t.goal_state for t in tasks}
    left = [t.model_copy(update={"goal_state": stale[t.task_id]}) if t.task_id == "rs-c-1003-lost-response" else t
            for t in moved]
    assert trace_problems(dossier, left, domain, policies) == [
        "task rs-c-1003-lost-response: customization manager_discretion_removed moved the policy and tool authority "
        "without the expected outcome"]


def test_a_tool_permission_widened_with_no_requirement_behind_it_blocks():
    dossier, tasks, domain, policies = suite(*CONTRACT)
    role = tasks[0].role.model_copy(update={"write_tools": [*tasks[0].role.write_tools, "sign_agreement"],
                                            "forbidden_tools": ["approve_exception", "grant_data_access"]})
    widened = [t.model_copy(update={"role": role}) for t in tasks]
    assert trace_problems(dossier, widened, domain, policies) == [
        "requirement CR-R8 says contract_reviewer may not call sign_agreement, but 5 task(s) permit it, first "
        "cr-retention-v1",
        "role contract_reviewer permits write tool sign_agreement (first in cr-retention-v1), but no requirement "
        "covers it"]
