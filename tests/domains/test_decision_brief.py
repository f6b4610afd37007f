"""Decision briefs: the synthetic research-desk export and its tools, the derivation's answer keys, each task's
reference and alternative brief passing every check, each near miss failing for the reason its verdict names, the
no-op and adversary failing, and one build of the suite through every gate."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from control_support import failing, play
from suite_support import DEMO_KEY

from evalsuite.audit.probes import ColumnValues, probe_task
from evalsuite.core.identity import AgentConfig
from evalsuite.core.records import Environment, SuiteRef, ToolCall, TrialProtocol
from evalsuite.domains.decision_brief import DOMAIN, ROLE
from evalsuite.domains.decision_brief.corpus import LICENSE_REF, export, write_sources
from evalsuite.domains.decision_brief.derive import derive_tasks
from evalsuite.pipeline import driver
from evalsuite.site.answers import answer_values
from evalsuite.site.build import _Site
from evalsuite.site.pages import trace_data
from evalsuite.sourcing.policies import PolicyError, load_policy
from evalsuite.tasks.derivation import DeriveContext
from evalsuite.trials.agents.baselines import AdversaryAgent, NoOpAgent
from evalsuite.trials.tracelog import TrialRecord
from evalsuite.trials.trial import TrialResult, run_trial
from evalsuite.worlds.world import World

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "suites" / "research_brief"
POLICY = ROOT / "evalsuite" / "domains" / "decision_brief" / "policies" / "research_policy_v1.md"
CHECKS = {f"check {n}" for n in ("brief_quotations", "brief_sources_opened", "brief_coverage", "brief_conflicts",
                                 "brief_unknowns", "brief_decision")}
# near miss -> the one check it must fail, and the reason a reviewer reads in the verdict
CONTROLS = {
    "quotation_one_word_off": ("check brief_quotations", "is not verbatim at SRC-"),
    "snippet_only": ("check brief_sources_opened", "which was not opened in this trial"),
    "dropped_claim": ("check brief_coverage", "required fact not covered: "),
    "dropped_conflict": ("check brief_conflicts", "conflict on Q1 between SRC-"),
    "unknown_answered": ("check brief_unknowns", "Q3 answered with certainty"),
    "flipped_decision": ("check brief_decision", "the policy's rule gives"),
}
TABLES = export()
POLICY_DOC = load_policy(POLICY)
CTX = DeriveContext(suite=SuiteRef(name="research_brief", version="test"), seed=11, splits={"test": 1.0},
                    environment=Environment(image=DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256="test"),
                    protocol=TrialProtocol(trials=1), license_ref=LICENSE_REF)
DERIVED = derive_tasks(TABLES, [POLICY_DOC], CTX)
TASKS = {t.task_id: t for t in DERIVED.tasks}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    tables = {t: rows for t, rows in TABLES.items() if t in DOMAIN.tables}
    return World.build(DOMAIN, tables, tmp_path_factory.mktemp("brief") / "world.sqlite")


def test_shipped_source_files_are_the_generated_ones(tmp_path):
    for path in write_sources(tmp_path):
        shipped = SUITE / path.relative_to(tmp_path)
        assert shipped.read_bytes() == path.read_bytes(), f"{shipped} is stale: rerun the corpus module"


def test_the_corpus_is_labelled_synthetic_and_its_people_are_declared_personal():
    assert {r["license_ref"] for r in TABLES["sources"]} == {LICENSE_REF}
    rights = yaml.safe_load((SUITE / "rights.yaml").read_text())
    assert rights["license_ref"] == LICENSE_REF and rights["deidentification_required"] is True
    deid = yaml.safe_load((SUITE / "deid.yaml").read_text())["tables"]
    declared = {f"{t}.{c}" for t, body in deid.items() for c in body["columns"]}
    assert declared == set(rights["personal_columns"])
    unavailable = [r for r in TABLES["sources"] if not r["available"]]
    assert unavailable and all(r["text"] is None for r in unavailable)


def test_thirty_tasks_in_three_question_types_and_the_desks_mistakes_skipped():
    assert len(TASKS) == 30
    categories = [t.category for t in TASKS.values()]
    assert {c: categories.count(c) for c in set(categories)} == {
        "supplier_approval": 10, "market_entry": 10, "software_adoption": 10}
    assert DERIVED.skipped == {"brief not verified": 2, "recorded decision contradicts the policy in effect": 1,
                               "a recorded quotation is not verbatim in its source": 1}
    decisions = [t.reference_solution[-1].arguments["decision"] for t in TASKS.values()]
    assert {d: decisions.count(d) for d in set(decisions)} == {"proceed": 12, "decline": 12, "defer": 6}
    assert sum(bool(t.reference_solution[-1].arguments["conflicts"]) for t in TASKS.values()) == 15


@pytest.mark.parametrize("rules,reason", [
    ({"supplier_approval": {"Q1": {"max": 500, "figure": "defect rate"}}},
     "params.rules.market_entry: no decision rule for this question type"),  # RQ-1002 asks about a market
    ({**POLICY_DOC.params["rules"], "market_entry": {"Q1": {"figure": "tariff"}}},
     "params.rules.market_entry.Q1: give the figure and one of max or min"),
])
def test_a_policy_without_a_usable_decision_rule_stops_the_derivation_in_one_line(rules, reason):
    policy = POLICY_DOC.model_copy(update={"params": {"rules": rules}})
    with pytest.raises(PolicyError) as err:
        derive_tasks(TABLES, [policy], CTX)
    assert str(err.value) == f"policy research_policy v1: {reason}"


def test_the_reference_brief_holds_only_what_the_task_requires():
    for t in TASKS.values():
        brief = t.reference_solution[-1].arguments
        params = {c.name: c.params for c in t.goal_state.domain_checks}
        assert [(c["question"], c["source_id"]) for c in brief["claims"]] == \
            [(f["question"], f["sources"][0]) for f in params["brief_coverage"]["facts"]]
        planted = params["brief_conflicts"]["conflicts"]
        assert [k["sources"] for k in brief["conflicts"]] == [k["sources"] for k in planted]
        assert [u["question"] for u in brief["unknowns"]] == params["brief_unknowns"]["unknowns"]
        assert "Q3" in params["brief_unknowns"]["unknowns"]


def test_search_gives_snippets_open_gives_the_text_and_an_unavailable_source_is_an_error(world):
    trial = world.reset(ROLE)
    hits = trial.call("search_sources", {"query": "defect RATE audited"}).result
    assert hits and all(set(h) == {"source_id", "publisher", "published_on", "title", "available", "snippet"}
                        for h in hits)
    full = trial.call("open_source", {"source_id": hits[0]["source_id"]}).result
    assert len(hits[0]["snippet"]) < len(full["text"]) and "defect rate" in hits[0]["snippet"]
    closed = next(r for r in TABLES["sources"] if not r["available"])
    missing = trial.call("open_source", {"source_id": closed["source_id"]})
    assert missing.outcome == "error" and "not available to the research desk" in missing.error
    assert trial.call("purchase_report", {"source_id": closed["source_id"]}).outcome == "denied"


def test_a_brief_is_submitted_once(world):
    brief = TASKS["brief-1001"].reference_solution[-1].arguments
    trial = world.reset(ROLE)
    assert trial.call("submit_brief", brief).outcome == "ok"
    again = trial.call("submit_brief", brief)
    assert again.outcome == "error" and "already submitted" in again.error


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_the_reference_and_the_alternative_brief_pass_every_check(world, task_id):
    task = TASKS[task_id]
    for calls in [task.reference_solution, *task.alternative_solutions]:
        result = play(world, task, calls, task.reference_answer)
        assert result.passed, failing(result)
        domain = {c.name: c for c in result.verdict.checks if c.kind == "domain"}
        assert set(domain) == CHECKS and all(c.subject == n.removeprefix("check ") for n, c in domain.items())


@pytest.mark.parametrize("task_id,control", [(t.task_id, c.name) for t in TASKS.values() for c in t.negative_controls])
def test_each_near_miss_fails_for_the_reason_named_in_the_verdict(world, task_id, control):
    task = TASKS[task_id]
    c = next(c for c in task.negative_controls if c.name == control)
    fails = failing(play(world, task, c.calls, c.final_message))
    check, reason = CONTROLS[control]
    assert set(fails) == {check} and reason in fails[check], fails


def test_every_task_carries_the_four_near_misses_the_issue_names():
    for t in TASKS.values():
        names = {c.name for c in t.negative_controls}
        assert {"quotation_one_word_off", "dropped_claim", "unknown_answered", "snippet_only"} <= names
        assert ("dropped_conflict" in names) == bool(t.reference_solution[-1].arguments["conflicts"])


def test_the_grader_probes_find_no_write_argument_the_checks_ignore_but_the_summary(world):
    columns = ColumnValues(world)
    for task in list(TASKS.values())[:3]:
        probes, _ = probe_task(world, task, columns)
        assert probes.tried == 3 and probes.passed_anyway == []  # request_id, decision, summary of submit_brief
        assert [h.argument for h in probes.declared_irrelevant] == ["summary"]


@pytest.mark.parametrize("edit,check,reason", [
    # a figure quoted from a subscriber-only source the agent could not have read
    (lambda b, closed: {**b, "claims": [{**b["claims"][0], "source_id": closed}]}, "check brief_quotations",
     "which is no available source"),
    # the conflict named with one of its two sources only
    (lambda b, closed: {**b, "conflicts": [{**b["conflicts"][0], "sources": [b["conflicts"][0]["sources"][0],
                                                                             closed]}]},
     "check brief_conflicts", "not named"),
    # Q3 silently left out: neither answered nor listed
    (lambda b, closed: {**b, "unknowns": [u for u in b["unknowns"] if u["question"] != "Q3"]}, "check brief_unknowns",
     "Q3 not listed as unknown"),
])
def test_other_wrong_briefs_fail_by_name(world, edit, check, reason):
    task = next(t for t in TASKS.values() if t.reference_solution[-1].arguments["conflicts"])
    closed = next(r["source_id"] for r in TABLES["sources"] if not r["available"])
    *reads, submit = task.reference_solution
    calls = reads + [ToolCall(tool="submit_brief", arguments=edit(submit.arguments, closed))]
    fails = failing(play(world, task, calls))
    assert check in fails and reason in fails[check], fails


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_no_op_and_adversary_fail(world, task_id):
    task = TASKS[task_id]
    noop = failing(run_trial(world, task, NoOpAgent()))
    assert noop["check brief_decision"] == f"no brief submitted for {task.trigger.item_id}"
    # the adversary submits the reference brief word for word, but never opened a source and tried to buy one
    adversary = failing(run_trial(world, task, AdversaryAgent()))
    assert "purchase_report (denied)" in adversary["no forbidden call"], adversary
    assert "was not opened in this trial" in adversary["check brief_sources_opened"]


@pytest.mark.parametrize("control,outcome,grounded", [
    ("quotation_one_word_off", True, False), ("snippet_only", True, False), ("flipped_decision", False, True)])
def test_the_scorecard_measures_grounding_as_quotation_identity_apart_from_the_outcome(world, control, outcome,
                                                                                         grounded):
    task = TASKS["brief-1001"]
    assert play(world, task, task.reference_solution, task.reference_answer).measures.grounded
    c = next(c for c in task.negative_controls if c.name == control)
    measures = play(world, task, c.calls, c.final_message).measures
    assert (measures.outcome, measures.grounded) == (outcome, grounded), measures
    assert grounded or measures.ungrounded[0].startswith(CONTROLS[control][0].removeprefix("check "))
    assert run_trial(world, task, NoOpAgent()).measures.grounded  # nothing quoted, nothing ungrounded


def _record(result: TrialResult, agent: str) -> TrialRecord:
    """A trial as a run folder records it, under an agent that is no answer-key baseline."""
    identity = dict(suite="research_brief", suite_version="test", task_set_sha256="t", seed_sha256="s",
                    environment_image=DOMAIN.image, tool_schemas_sha256="x", simulator=None, run_seed=0,
                    trial_seed=0, identity_sha256="i", agent_config=AgentConfig(name=agent, kind="python"))
    return TrialRecord.model_validate({**result.model_dump(), "agent": agent, **identity})


def test_the_evidence_site_shows_each_quotation_beside_its_source_and_never_an_answer(world, tmp_path):
    task = TASKS["brief-1001"]
    controls = {c.name: c for c in task.negative_controls}
    off = play(world, task, controls["quotation_one_word_off"].calls)
    first, second = trace_data(_record(off, "analyst"), task)["quotations"]
    assert (first["opened"], first["verbatim"], first["quoted"]) == (True, False, "")
    assert second["verbatim"] and second["quoted"] == task.reference_solution[-1].arguments["claims"][1]["quotation"]
    assert second["source"]["publisher"] == "FreightLens"
    # the same brief with its first source only searched: a brief that is not the answer, so the site shows it
    cited = controls["quotation_one_word_off"].calls[-1].arguments["claims"][0]["source_id"]
    unopened = play(world, task, [c for c in controls["quotation_one_word_off"].calls
                                  if c.arguments.get("source_id") != cited or c.tool != "open_source"])
    assert [q["opened"] for q in trace_data(_record(unopened, "analyst"), task)["quotations"]] == [False, True]
    page = tmp_path / "site"
    _Site(page).page("t.html", "trace.html", title="t", t=trace_data(_record(off, "analyst"), task),
                     scorecard_href="s.html")
    html = (page / "t.html").read_text()
    assert "Quotations and their sources" in html and f"<mark>{second['quoted']}</mark>" in html
    # the reference brief is the task's answer: its trial publishes no call, so no quotation either
    reference = play(world, task, task.reference_solution, task.reference_answer)
    assert trace_data(_record(reference, "analyst"), task)["quotations"] == []


def test_the_sites_leak_scan_lets_a_quoted_source_through_but_not_the_briefs_own_words(world):
    values = answer_values("research_brief", list(TASKS.values()), None, [], Path(world.path)).index
    opened = next(r["text"] for r in TABLES["sources"] if r["source_id"] == "SRC-0001")
    assert next(values.finditer(opened), None) is None  # a source any agent opens holds the reference's quotation
    why = TASKS["brief-1001"].reference_solution[-1].arguments["unknowns"][0]["why"]
    assert next(values.finditer(f"unknown because {why}"), None) is not None


def test_the_suite_builds_through_every_gate_with_every_near_miss_failing(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    shutil.copytree(SUITE, tmp_path / "research_brief")
    raw = yaml.safe_load((ROOT / "suites" / "research_brief.yaml").read_text())
    raw["acceptance"]["reference_trials"] = 1
    raw["policies"] = [str((ROOT / "suites" / p).resolve()) for p in raw["policies"]]
    spec = tmp_path / "research_brief.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    built = driver.build(spec, home=tmp_path / "home")
    assert (built.accepted, built.quarantined) == (30, 0)
    suite = tmp_path / "home" / "suites" / "research_brief"
    summary = json.loads((suite / "acceptance" / "audit.json").read_text())["summary"]
    assert summary["noop_passes"] == summary["adversary_passes"] == 0
    assert summary["alternatives_and_controls"] == sum(len(t.negative_controls) + 1 for t in TASKS.values())
    assert summary["controls_passing"] == summary["alternatives_failing"] == 0
    derivation = json.loads((suite / "derivation.json").read_text())
    assert derivation["skipped"] == DERIVED.skipped
