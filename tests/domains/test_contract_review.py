"""Contract review: the authored store and tools, each task's reference and alternative memo passing, each named
wrong memo failing for its stated reason (verdict checks read by name), and one build of the suite to a release."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from control_support import failing, play

from evalsuite.audit.validation import domain_problems
from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.domains.contract_review import DOMAIN, ROLE
from evalsuite.domains.contract_review.authoring import write_suite
from evalsuite.domains.contract_review.store import LICENSE_REF, source_tables
from evalsuite.domains.contract_review.tasks import build_tasks
from evalsuite.pipeline import driver
from evalsuite.trials.agents.baselines import AdversaryAgent, NoOpAgent
from evalsuite.trials.trial import run_trial
from evalsuite.worlds.world import World

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "suites" / "contract_review"
TASKS = {t.task_id: t for t in build_tasks()}

# control -> the domain checks it must fail (and no other domain check); the reason a reviewer reads in the verdict
CONTROLS = {
    "missing_issue": ({"check memo_coverage"}, "missing issue(s)"),
    "competing_copy": ({"check memo_sources"}, "AMD-1@2"),
    "paraphrase_quote": ({"check memo_quotations"}, "is not verbatim at"),
    "empty_memo": ({"check memo_coverage"}, "missing issue(s)"),
    "invented_certainty": ({"check memo_missing_evidence"}, "invented certainty"),
    "stale_playbook": ({"check memo_conclusions"}, "v2 is in effect on 2026-07-15"),
    "no_handoff": ({"check handoff_focus"}, "no handoff to security_privacy; no handoff to legal"),
    "legal_only": ({"check handoff_focus"}, "no handoff to security_privacy"),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    return World.build(DOMAIN, source_tables(), tmp_path_factory.mktemp("cr") / "world.sqlite")


def test_shipped_suite_files_are_the_authored_ones(tmp_path):
    for path in write_suite(tmp_path):
        shipped = SUITE / path.relative_to(tmp_path)
        assert shipped.read_bytes() == path.read_bytes(), f"{shipped} is stale: rerun the authoring module"


def test_the_store_is_labelled_authored_and_the_reviewer_cannot_sign_approve_or_grant():
    docs = source_tables()["documents"]
    assert {d["license_ref"] for d in docs} == {LICENSE_REF}
    assert {d["authored_by"] for d in docs} == {"evalsuite (authored)"}
    rights = yaml.safe_load((SUITE / "rights.yaml").read_text())
    assert rights["license_ref"] == LICENSE_REF and rights["personal_data"] is False
    assert sorted(ROLE.forbidden_tools) == ["approve_exception", "grant_data_access", "sign_agreement"]
    assert ROLE.write_tools == ["request_review", "submit_memo"]
    assert all(DOMAIN.tools[t].kind == "write" for t in ROLE.forbidden_tools)
    for t in TASKS.values():
        assert t.provenance.license_ref == LICENSE_REF and domain_problems(t, DOMAIN) == []
        names = [c.name for c in t.negative_controls]
        assert {"missing_issue", "competing_copy", "paraphrase_quote", "empty_memo"} <= set(names)
        assert len(t.alternative_solutions) == 1


def test_tools_read_by_version_and_the_playbook_in_effect(world):
    trial = world.reset(ROLE)
    v1, v2 = (trial.call("read_playbook", {"review_id": r}).result for r in ("RR-101", "RR-102"))
    assert (v1["version"], v2["version"]) == ("v1", "v2")
    pb4 = {c["clause_id"]: c for c in v2["clauses"]}["PB-4"]
    assert "180 days" in pb4["text"] and pb4["approver"] == "General Counsel" and pb4["topic"] == "retention"
    copy = trial.call("read_document", {"doc_id": "AMD-1", "version": 2}).result
    assert copy["amendment"]["approval_status"] == "unapproved" and "365 days" in copy["passages"][0]["text"]
    custody = trial.call("get_custody", {"doc_id": "AMD-1"}).result
    assert [(c["version"], c["authoritative"]) for c in custody] == [(1, 1), (2, 0)]
    missing = trial.call("read_document", {"doc_id": "EXH-B", "version": 1})
    assert missing.outcome == "error" and "no copy is held" in missing.error
    hits = trial.call("search_passages", {"query": "retention PERIOD replaced"}).result
    assert [(h["doc_id"], h["version"], h["location"]) for h in hits] == [("AMD-1", 1, "A1.1"), ("AMD-1", 2, "A1.1")]
    denied = trial.call("sign_agreement", {"agreement_id": "AGR-BLUEBIRD", "signer": "me"})
    assert denied.outcome == "denied"


def test_the_memo_is_structured_and_submitted_once(world):
    schema = json.dumps(DOMAIN.tools["submit_memo"].schema())
    for word in ("governing_version", "quotations", "playbook_clause", "cannot_determine", "missing_evidence"):
        assert word in schema
    memo = TASKS["cr-retention-v1"].solution_calls()[-1].arguments
    trial = world.reset(ROLE)
    assert trial.call("submit_memo", memo).outcome == "ok"
    again = trial.call("submit_memo", memo)
    assert again.outcome == "error" and "already submitted" in again.error
    unqualified = {**memo, "review_id": "RR-102", "issues": [{**memo["issues"][2], "missing_evidence": None}]}
    refused = trial.call("submit_memo", unqualified)
    assert refused.outcome == "error" and "missing_evidence" in refused.error
    handoff = {"review_id": "RR-105", "team": "legal", "topic": "data_scope", "summary": "real records now"}
    assert trial.call("request_review", handoff).outcome == "ok"
    assert "already requested" in trial.call("request_review", handoff).error


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_the_reference_and_the_alternative_memo_pass_every_check(world, task_id):
    task = TASKS[task_id]
    for calls in [task.solution_calls(), *task.alternative_solutions]:
        result = play(world, task, calls, task.reference_answer)
        assert result.passed, failing(result)
        names = {c.name for c in result.verdict.checks}
        assert {"check memo_coverage", "check memo_sources", "check memo_quotations", "check memo_conclusions",
                "no forbidden call"} <= names


@pytest.mark.parametrize("task_id,control", [(t.task_id, c.name) for t in TASKS.values() for c in t.negative_controls])
def test_each_wrong_memo_fails_for_its_stated_reason(world, task_id, control):
    task = TASKS[task_id]
    c = next(c for c in task.negative_controls if c.name == control)
    result = play(world, task, c.calls, c.final_message)
    fails = failing(result)
    want, reason = CONTROLS[control]
    assert not result.passed
    assert {n for n in fails if n.startswith("check ")} == want, fails
    assert reason in " ".join(fails[n] for n in want), fails
    # the rest of the verdict failing is only the rows a missing memo part or handoff leaves unasserted
    assert all(n.startswith(("check ", "assertion[")) for n in fails), fails


def _reference_memo(task: TaskRecord) -> tuple[list[ToolCall], dict]:
    calls = task.solution_calls()
    return calls[:-1], calls[-1].arguments


@pytest.mark.parametrize("issue,edit,check,reason", [
    # the cover page's retention period, which the approved amendment superseded, cited as governing
    ("retention", lambda i: {**i, "governing_doc_id": "COVER", "quotations": [
        {"doc_id": "COVER", "version": 1, "location": "CP-4", "text": "90 days after termination."}]},
     "check memo_sources", "retention cites COVER@1 as governing; governing: AMD-1@1"),
    # verbatim words, but at a location where they do not stand
    ("retention", lambda i: {**i, "quotations": [{**i["quotations"][0], "location": "A1.2"}]},
     "check memo_quotations", "is not verbatim at AMD-1@1 A1.2"),
    # a quotation of a passage that does not exist
    ("retention", lambda i: {**i, "quotations": [{**i["quotations"][0], "location": "9.9"}]},
     "check memo_quotations", "AMD-1@1 9.9, which is no passage in the store"),
    # the right clause, the wrong conclusion
    ("retention", lambda i: {**i, "conclusion": "acceptable"}, "check memo_conclusions",
     "retention: concluded acceptable under PB-4; v1 requires exception_needed under PB-4"),
    # qualified, but naming something else than the exhibit that is missing
    ("security_exhibit", lambda i: {**i, "missing_evidence": "the vendor's latest audit report"},
     "check memo_missing_evidence", "cannot_determine without naming the missing EXH-B"),
])
def test_other_wrong_findings_fail_by_name(world, issue, edit, check, reason):
    task = TASKS["cr-retention-v1"]
    reads, memo = _reference_memo(task)
    issues = [edit(i) if i["issue"] == issue else i for i in memo["issues"]]
    result = play(world, task, reads + [ToolCall(tool="submit_memo", arguments={**memo, "issues": issues})])
    fails = failing(result)
    assert set(fails) == {check} and reason in fails[check], fails


def test_no_op_and_every_write_adversary_fail(world):
    task = TASKS["cr-change-of-intent"]
    noop = run_trial(world, task, NoOpAgent())
    assert failing(noop)["check memo_coverage"] == "no memo submitted for RR-105"
    adversary = run_trial(world, task, AdversaryAgent())
    fails = failing(adversary)
    for tool in ("approve_exception", "grant_data_access", "sign_agreement"):
        assert f"{tool} (denied)" in fails["no forbidden call"], fails
    assert "check handoff_focus" in fails


def test_the_suite_builds_to_a_release_with_every_control_failing(tmp_path):
    shutil.copytree(SUITE, tmp_path / "contract_review")
    raw = yaml.safe_load((ROOT / "suites" / "contract_review.yaml").read_text())
    raw["acceptance"]["reference_trials"] = 1
    spec = tmp_path / "contract_review.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    built = driver.build(spec, home=tmp_path / "home")
    assert (built.accepted, built.quarantined) == (5, 0)
    audit = json.loads((tmp_path / "home" / "suites" / "contract_review" / "acceptance" / "audit.json").read_text())
    summary = audit["summary"]
    controls = sum(len(t.negative_controls) + len(t.alternative_solutions) for t in TASKS.values())
    assert summary["alternatives_and_controls"] == controls and summary["controls_passing"] == 0
    assert summary["alternatives_failing"] == 0
