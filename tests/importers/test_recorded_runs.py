"""`evalsuite import-run` on the τ²-retail release: recordings made from its gold actions with mistakes put in
(tests/recorded_support.py), imported from each format, replayed open loop, regraded and scored."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from recorded_support import openai_messages, tau2_results
from typer.testing import CliRunner

from evalsuite.cli.app import app
from evalsuite.importers.recorded.formats import RecordingError, read_recording
from evalsuite.importers.recorded.run import Origin, import_run, licence_beside
from evalsuite.pipeline import driver
from evalsuite.releases.release import Release
from evalsuite.releases.runs import rescore
from evalsuite.scoring.runlog import read_recording as read_notes
from evalsuite.scoring.runlog import read_records, read_run, read_scorecard

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = Origin(license="MIT (test recording)", source="made by tests/recorded_support.py")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Release:
    home = tmp_path_factory.mktemp("tau2_home")
    return Release(Path(driver.build(ROOT / "suites" / "tau2_retail.yaml", home).release))


@pytest.fixture(scope="module")
def imported(release, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("recorded")
    card, out = import_run(tau2_results(release, tmp / "results.json"), release, tmp / "run", ORIGIN)
    return card, out


def _notes(out: Path) -> dict[tuple[str, int], object]:
    return {(n.task_id, n.trial): n for n in read_notes(out).notes}


def test_each_trial_is_regraded_by_evalsuite_and_disagreements_say_why(imported):
    card, out = imported
    records = {(r.task_id, r.trial): r for r in read_records(out)}
    assert {k: r.passed for k, r in records.items()} == {("0", 0): True, ("0", 1): False, ("1", 0): False,
                                                          ("1", 1): True, ("2", 0): False}
    r = card.recording
    assert (r.tasks, r.trials, r.agree) == (3, 5, 2)
    assert list(r.quarantined) == ["2"] and "reference-solution call(s) raised" in r.quarantined["2"][0]
    reasons = {(d.task_id, d.trial): d.reason for d in r.disagreements}
    assert set(reasons) == {("0", 1), ("1", 0), ("1", 1)}
    assert reasons["0", 1].startswith("the original's own DB check fails the replayed calls too")
    assert reasons["1", 0] == ("task corrected since the recording: gold write #1 (exchange_delivered_order_items) now "
                               "has other item_ids, new_item_ids")
    assert reasons["1", 1].startswith("replay diverged: #") and "an error when recorded, ok now" in reasons["1", 1]
    assert [(s.recorded_task, s.reason) for s in r.skipped] == [("999", "no task 999 in the release")]


def test_every_call_answered_differently_now_is_reported_with_both_outputs(imported, release):
    _, out = imported
    notes = _notes(out)
    edited = notes["0", 0].diffs
    assert len(edited) == 1 and edited[0].tool == "get_order_details" and not edited[0].flipped
    assert json.loads(edited[0].recorded)["status"] == "EDITED"
    assert json.loads(edited[0].replayed)["status"] == "delivered"
    flipped = notes["1", 1].diffs
    assert [(d.tool, d.recorded_error, d.replayed_error, d.write) for d in flipped] == [
        ("exchange_delivered_order_items", True, False, True)]
    assert notes["0", 1].diffs == [] and notes["1", 0].diffs == []


def test_the_db_basis_is_the_originals_check_on_the_same_calls(imported):
    _, out = imported
    assert all(n.state_passed == n.original_db for n in _notes(out).values())


def test_the_scorecard_puts_regraded_and_recorded_pass_k_side_by_side(imported):
    card, out = imported
    r = card.recording
    assert [p.pass_hat for p in r.regraded] == [p.pass_hat for p in card.agents[0].curve] == [1 / 3]
    assert [p.pass_hat for p in r.recorded] == [0.5]  # task 2 has one trial: pass^1 only
    assert all(p.pass_hat_low <= p.pass_hat <= p.pass_hat_high for p in r.recorded + r.regraded)
    md = (out / "scorecard.md").read_text()
    assert "## Recorded run, regraded" in md and "task corrected since the recording" in md
    assert "licence: MIT (test recording)" in md and "model: scripted-test-model" in md


def test_the_folder_is_a_run_folder_rescored_from_itself(imported, release):
    card, out = imported
    before = (out / "scorecard.json").read_text()
    assert rescore(out) == card and (out / "scorecard.json").read_text() == before
    run = read_run(out)
    assert run.recording is not None and run.recording.provenance.sha256 == run.records[0].agent_config.recording
    assert {r.agent_config.kind for r in run.records} == {"recorded"}
    assert {t.task_id for t in run.tasks} == {"0", "1", "2"}  # the recorded tasks: their own task set and identity
    assert read_scorecard(out).task_set_sha256 == run.records[0].task_set_sha256 != release.manifest.task_set_sha256


def test_a_recorded_trial_keeps_its_conversation_in_the_trace(imported):
    _, out = imported
    record = next(r for r in read_records(out) if (r.task_id, r.trial) == ("0", 0))
    said = [(e.actor, e.arguments["text"]) for e in record.trace if e.tool == "message"]
    assert said[0] == ("agent", "Hi! How can I help you today?") and said[-1] == ("agent", "Your exchange is done.")
    assert record.final_message == "Your exchange is done."


def test_openai_messages_import_to_the_same_verdicts(release, imported, tmp_path):
    card, _ = imported
    other, _ = import_run(openai_messages(release, tmp_path / "trials.jsonl"), release, tmp_path / "run",
                          ORIGIN.model_copy(update={"model": "scripted-test-model"}))
    assert [p.pass_hat for p in other.recording.regraded] == [p.pass_hat for p in card.recording.regraded]
    reasons = {(d.task_id, d.trial): d.reason for d in other.recording.disagreements}
    # without the recorded task's gold the file cannot show a correction: the original's check says it instead
    assert reasons["1", 0].startswith("the original's own DB check fails the replayed calls too")


def test_tau_bench_logs_match_tasks_by_user_and_gold_writes(release, tmp_path):
    tasks = {t.task_id: t for t in release.tasks()}
    entries = []
    for index, task_id in ((7, "1"), (3, "0")):  # τ-bench's indices are not τ²'s
        calls = tasks[task_id].reference_solution
        entries.append({"task_id": index, "trial": 0, "reward": 1.0, "traj": [
            {"role": "user", "content": "hi"},
            *[{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
                "name": c.tool, "arguments": json.dumps(c.arguments)}}]} for i, c in enumerate(calls)],
            {"role": "user", "content": "thanks ###STOP###"}],
            "info": {"task": {"user_id": "yusuf_rossi_9620", "instruction": "exchange",
                              "actions": [{"name": c.tool, "kwargs": c.arguments} for c in calls]}}})
    path = tmp_path / "log.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(RecordingError, match="does not say which model"):
        import_run(path, release, tmp_path / "run", ORIGIN)
    card, out = import_run(path, release, tmp_path / "run", ORIGIN.model_copy(update={"model": "gpt-test"}))
    assert read_notes(out).task_map == {"7": "1", "3": "0"}
    assert card.agents[0].agent == "recorded:gpt-test" and card.recording.agree == 2


@pytest.mark.parametrize("body, message", [
    ("{}", "not a recording"),
    ('[{"task_id": "0", "messages": [{"role": "robot"}]}]', "openai_messages: 0.messages.0.role: Input should be"),
    ('{"info": {"agent_info": {}}, "simulations": [{"task_id": "0"}]}', "tau2_results: simulations.0.messages: "
                                                                          "Field required"),
    ('[{"task_id": 1, "trial": 0, "reward": 1, "traj": [], "info": {"task": {"user_id": "u"}}}]',
     "tau_bench_trajectories: 0.info.task.actions: Field required"),
    ("{not json", ":1: invalid JSON: "),  # the file and its line, as every JSON input is read (core.io.parse_json)
])
def test_a_bad_recording_is_one_line_naming_the_file_and_field(tmp_path, body, message):
    path = tmp_path / "rec.json"
    path.write_text(body)
    with pytest.raises(RecordingError) as err:
        read_recording(path)
    assert str(err.value).startswith(f"{path}:") and message in str(err.value) and "\n" not in str(err.value)


def test_a_run_folder_of_another_run_is_never_overwritten(release, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "traces.jsonl").write_text("")
    with pytest.raises(RecordingError, match="holds something other than an imported run"):
        import_run(tau2_results(release, tmp_path / "r.json"), release, tmp_path / "run", ORIGIN)
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["traces.jsonl"]


def test_the_licence_comes_from_a_license_file_beside_the_recording(tmp_path):
    (tmp_path / "LICENSE").write_text("MIT License\n\nCopyright (c) 2024 Sierra\n\nPermission is hereby granted")
    assert licence_beside(tmp_path / "rec.json") == "MIT License, Copyright (c) 2024 Sierra (LICENSE beside the " \
                                                    "recording)"
    assert licence_beside(tmp_path / "sub" / "rec.json") is None


def test_the_command_prints_the_disagreements_and_writes_where_dagster_looks(release, tmp_path):
    rec = tau2_results(release, tmp_path / "results.json")
    result = CliRunner().invoke(app, ["import-run", str(rec), str(release.path), "--license", "MIT",
                                      "--agent", "cli-import"])
    assert result.exit_code == 0, result.output
    assert "replay diverged" in result.output and "task corrected since" in result.output
    m = release.manifest
    home = release.path.parents[2]  # the home the release was built in
    assert (home / "runs" / m.suite / m.version / "agents" / "cli-import" / "scorecard.json").is_file()
    bad = CliRunner().invoke(app, ["import-run", str(tmp_path / "missing.json"), str(release.path)])
    assert bad.exit_code == 2 and "cannot read the recording" in bad.output


def test_the_evidence_site_shows_the_provenance_the_disagreements_and_the_recorded_outputs(imported, release,
                                                                                           tmp_path):
    from evalsuite.site.build import build_site

    _, out = imported
    summary = build_site([release.path, out], tmp_path / "site")
    assert (summary.scorecards, summary.traces) == (1, 5)
    page = next((tmp_path / "site" / "scorecards").glob("*.html")).read_text()
    assert "Recorded run, regraded" in page and "MIT (test recording)" in page and "scripted-test-model" in page
    assert "task corrected since the recording" in page and "replay diverged" in page
    traces = {p.name: json.loads(p.read_text()) for p in (tmp_path / "site" / "data" / "traces").rglob("*.json")}
    # the gold calls: their writes are the reference solution's effects, so the trial is a summary
    assert "writes reproduce the reference solution's effects" in traces["0-0.json"]["withheld"]
    assert traces["0-0.json"]["steps"] == []
    shown = {name: t for name, t in traces.items() if t["withheld"] is None}
    assert all(t["other"]["recording"]["recorded_task"] == name[0] for name, t in shown.items())
    assert {t["verdict"]["passed"] for t in traces.values()} == {True, False}  # every trial says how it was graded


def test_the_pipeline_reports_an_imported_run_as_a_trial_run_of_the_release(imported, release, tmp_path):
    from evalsuite.pipeline.paths import Paths
    from evalsuite.pipeline.stages import trial_traces
    from evalsuite.sourcing.spec import load_spec

    spec = load_spec(ROOT / "suites" / "tau2_retail.yaml")
    paths = Paths(spec, tmp_path / "home")
    version = release.manifest.version
    paths.releases.mkdir(parents=True)
    (paths.releases / spec.name).mkdir()
    (paths.releases / spec.name / version).symlink_to(release.path)
    card, out = import_run(tau2_results(release, tmp_path / "r.json"), Release(paths.release(spec.name, version)),
                           None, ORIGIN)
    assert out == paths.agent_run(version, "recorded:scripted-test-model")
    assert trial_traces.imported_agents(paths, version) == ["recorded:scripted-test-model"]
    meta = trial_traces.run(spec, paths, version, "recorded:scripted-test-model").metadata
    assert (meta["kind"], meta["license"], meta["model"], meta["disagreements"]) == (
        "recorded", "MIT (test recording)", "scripted-test-model", 3)
    assert meta["pass^1 regraded"] == round(1 / 3, 4) and meta["pass^1 recorded"] == 0.5
    assert "## Recorded run, regraded" in str(meta["recorded_run"])


def test_a_recorded_trial_that_ended_without_a_stop_counts_as_out_of_budget(release, tmp_path):
    task = {t.task_id: t for t in release.tasks()}["0"]
    messages = [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
        "name": c.tool, "arguments": json.dumps(c.arguments)}}]} for i, c in enumerate(task.reference_solution)]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps({"task_id": "0", "trial": i, "reward": 0.0, "messages": messages,
                                          "stopped": i == 0}) for i in range(2)) + "\n")
    _, out = import_run(path, release, tmp_path / "run", ORIGIN.model_copy(update={"model": "m"}))
    outcomes = {r.trial: (r.outcome, r.exhausted) for r in read_records(out)}
    assert outcomes[0] == ("pass", None)  # the gold calls, stopped: evalsuite passes what the recording failed
    assert outcomes[1][0] == "budget_exhausted" and "ended without a stop" in outcomes[1][1]
    assert all(n.state_passed for n in read_notes(out).notes)  # its effects are graded all the same
