"""Acceptance quarantines the tasks a reviewer would reject, and releases the rest."""
import json
import time

import pytest

from evalsuite.audit.acceptance import (
    AcceptanceReport,
    audit_markdown,
    in_process_runner,
    run_acceptance,
    strata_table,
)
from evalsuite.core.records import ToolCall
from evalsuite.pipeline import driver
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages.suite_release import release
from evalsuite.releases.release import Release
from evalsuite.sourcing.spec import Acceptance, load_spec
from evalsuite.trials.agents.baselines import ReferenceAgent
from evalsuite.worlds.world import World


class WallClockReference(ReferenceAgent):
    """A reference whose last write happens only in the afternoon: it depends on wall-clock time."""

    def run(self, task, env):
        calls = task.solution_calls()
        if task.task_id.endswith("-clock") and time.localtime(time.time()).tm_hour < 12:
            calls = calls[:-1]
        for call in calls:
            env.call(call.tool, call.arguments)
        return task.reference_answer or ""


def _broken(ap):
    held = [t for t in ap.tasks if t.goal_state.assertions[0].expect["status"] == "on_hold"]
    good = held[0]
    wrong = good.model_copy(deep=True, update={"task_id": "broken-wrong-goal"})
    wrong.goal_state.assertions[0].expect["status"] = "released"
    clock = held[1].model_copy(deep=True, update={"task_id": "broken-clock"})
    noop = good.model_copy(deep=True, update={"task_id": "broken-noop"})
    inv = noop.goal_state.assertions[0]
    noop.goal_state.assertions = [inv.model_copy(update={"expect": {"status": "blocked"}})]  # already true at seed
    noop.reference_solution = [c for c in noop.solution_calls() if c.tool.startswith("get_")]
    return [wrong, clock, noop]


@pytest.fixture
def morning_and_afternoon(monkeypatch):
    """Trials that run at 09:00 and 15:00 alternately, as a suite run across a day would."""
    hours = iter([9, 15] * 100)
    monkeypatch.setattr(time, "localtime", lambda *_: time.struct_time((2026, 6, 30, next(hours), 0, 0, 1, 181, 0)))


def test_acceptance_quarantines_each_deliberately_broken_task(ap, morning_and_afternoon):
    tasks = ap.tasks[:6] + _broken(ap)
    runner = in_process_runner(ap.world, {"reference": WallClockReference()})
    report = run_acceptance(tasks, Acceptance(reference_trials=4, max_quarantined_fraction=0.5), runner)
    by_id = {t.task_id: t for t in report.tasks}
    assert by_id["broken-wrong-goal"].quarantined and "unsolvable" in by_id["broken-wrong-goal"].reasons[0]
    assert "assertion[0]" in " ".join(by_id["broken-wrong-goal"].failing_checks)
    clock = by_id["broken-clock"]
    assert clock.quarantined and not clock.reference_stable and clock.reference_passes == 2
    assert any("flaky: the reference solution passed 2 of 4" in r for r in clock.reasons)
    assert by_id["broken-noop"].noop_passes and any("no-op" in r for r in by_id["broken-noop"].reasons)
    assert report.accepted_ids == [t.task_id for t in ap.tasks[:6]]
    assert report.summary["quarantined"] == 3 and report.summary["releasable"]


def test_a_reference_call_that_raises_is_reported_with_its_action_id(ap):
    task = ap.tasks[0].model_copy(deep=True, update={"task_id": "gold-raises"})
    task.reference_solution[-1].action_id = "act-9"
    task.reference_solution[-1].arguments["invoice_id"] = "INV-NOPE"
    report = run_acceptance([task], Acceptance(reference_trials=2), in_process_runner(ap.world))
    audit = report.tasks[0]
    assert audit.quarantined
    assert [(g.action_id, g.tool) for g in audit.gold_replay_errors] == [("act-9", task.reference_solution[-1].tool)]
    assert "not found" in audit.gold_replay_errors[0].error


def test_adjudication_requires_two_reviewers_when_the_spec_asks(ap):
    from evalsuite.core.records import Adjudication, Review
    one = ap.tasks[0].model_copy(deep=True, update={"task_id": "one-reviewer"})
    one.adjudication = Adjudication(reviews=[Review(reviewer="a", date="2026-10-01", decision="agree")])
    split = ap.tasks[0].model_copy(deep=True, update={"task_id": "disagree"})
    split.adjudication = Adjudication(reviews=[Review(reviewer="a", date="2026-10-01", decision="agree"),
                                               Review(reviewer="b", date="2026-10-02", decision="disagree")])
    settled = split.model_copy(deep=True, update={"task_id": "settled"})
    settled.adjudication.resolution = "AP-3 text: variance above 2% goes to the buyer; b's reading overruled"
    report = run_acceptance([one, split, settled], Acceptance(reference_trials=1, require_adjudication=True),
                            in_process_runner(ap.world))
    assert [t.quarantined for t in report.tasks] == [True, True, False]
    assert "1 reviewer sign-off" in report.tasks[0].reasons[0]
    assert "disagree" in report.tasks[1].reasons[0]


def track_worlds(monkeypatch) -> tuple[list[World], set[int]]:
    """(every World opened from now on, the ids of those closed)."""
    opened, closed = [], set()
    init, close = World.__init__, World.close

    def tracked_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        opened.append(self)

    def tracked_close(self):
        closed.add(id(self))
        close(self)

    monkeypatch.setattr(World, "__init__", tracked_init)
    monkeypatch.setattr(World, "close", tracked_close)
    return opened, closed


def test_audit_command_writes_json_and_markdown_for_the_bundled_suite(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", "test-key-not-a-secret-0001")
    opened, closed = track_worlds(monkeypatch)
    report = driver.audit("suites/ap_exceptions.yaml", tmp_path / "audit", home=tmp_path / "home")
    # a build and its audit open a world per stage; each is closed as its stage ends (a large world is three
    # copies of its file in memory), not left to the garbage collector
    assert opened and [str(w.path) for w in opened if id(w) not in closed] == []
    body = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert len(body["tasks"]) == report.summary["tasks"] >= 40
    first = body["tasks"][0]
    for key in ("task_id", "gold_replay_errors", "noop_passes", "adversary_passes", "reference_stable", "quarantined",
                "reasons"):
        assert key in first
    assert body["summary"]["quarantined"] == 0
    assert "# Acceptance audit" in (tmp_path / "audit" / "audit.md").read_text()
    # grader probes: every write argument of every reference nudged; the AP goals reject every near miss but the
    # free-text fields they declare irrelevant
    probes = [t["grader_probes"] for t in body["tasks"]]
    assert sum(p["tried"] for p in probes) >= 150 and [h for p in probes for h in p["passed_anyway"]] == []
    assert {h["argument"] for p in probes for h in p["declared_irrelevant"]} == {"reason", "subject", "body"}
    assert "original_check" not in first and "## Grader probes" in (tmp_path / "audit" / "audit.md").read_text()
    paths = Paths(load_spec("suites/ap_exceptions.yaml"), tmp_path / "home")
    rel = Release(release(load_spec("suites/ap_exceptions.yaml"), paths))
    assert rel.manifest.n_tasks == report.summary["accepted"] and rel.manifest.quarantined == []


def test_two_ledger_sign_offs_adjudicate_a_task_the_record_itself_does_not(ap):
    """The review ledger (`evalsuite review`) counts as much as reviews written into the record."""
    import datetime as dt

    from evalsuite.audit.reviews import ReviewEntry, goal_sha256
    task = ap.tasks[0].model_copy(deep=True, update={"task_id": "ledger-signed"})
    signs = [ReviewEntry(task_id=task.task_id, goal_sha256=goal_sha256(task), kind="sign", reviewer=who,
                         decision="agree", at=dt.datetime(2026, 12, 2, 9, i)) for i, who in enumerate(("a", "b"))]
    settings = Acceptance(reference_trials=1, require_adjudication=True)
    assert run_acceptance([task], settings, in_process_runner(ap.world), signs).tasks[0].adjudicated
    assert not run_acceptance([task], settings, in_process_runner(ap.world)).tasks[0].adjudicated


def test_an_alternative_solution_runs_as_the_reference_through_the_real_runner(ap):
    task = ap.tasks[0]
    read_first = [ToolCall(tool="get_invoice", arguments={"invoice_id": task.reference_solution[0].arguments.get(
        "invoice_id", "INV-NOPE")}), *task.reference_solution]
    task = task.model_copy(deep=True, update={"task_id": "with-alternative", "alternative_solutions": [read_first]})
    report = run_acceptance([task], Acceptance(reference_trials=1), in_process_runner(ap.world))
    assert report.summary["alternatives_and_controls"] == 1 and report.summary["alternatives_failing"] == 0
    assert not report.tasks[0].quarantined


def test_the_audit_page_shows_the_strata_as_a_table():
    summary = {"tasks": 3, "accepted": 2, "quarantined": 1, "quarantined_fraction": 1 / 3,
               "max_quarantined_fraction": 0.5, "reference_trials": 1, "releasable": True}
    strata = [{"intent": "mms_issue", "issues": 2, "persona": "Easy", "tasks": 3, "accepted": 2}]
    page = audit_markdown(AcceptanceReport(tasks=[], summary=summary, strata=strata), "t")
    assert ("|\n\n## Strata\n\nTasks and accepted tasks per sampling stratum.\n\n"
            "| intent | issues | persona | tasks | accepted |\n|---|---|---|---|---|\n"
            "| mms_issue | 2 | Easy | 3 | 2 |") in page
    assert strata_table([]) == ""  # a suite drawn from no strata: no table (and no section above)

