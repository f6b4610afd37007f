"""`evalsuite import-run` holds a recording to the standard of a live run: the run folder's name is derived, never
taken from the file; numbers are checked; nesting is bounded; the run folder's lock is honoured; a killed import
leaves nothing a later command reads. Each case was found by attacking 7bb15c3."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from recorded_support import openai_messages, tau2_results
from typer.testing import CliRunner

from evalsuite.cli.app import app
from evalsuite.importers.recorded.formats import RecordingError, read_recording
from evalsuite.importers.recorded.run import Origin, import_run
from evalsuite.pipeline import driver
from evalsuite.releases.release import Release
from evalsuite.scoring.runlog import AGENTS, imported_runs
from evalsuite.trials.tracelog import folder_lock

ORIGIN = Origin(license="MIT (test recording)", source="made by tests/recorded_support.py")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Release:
    built = driver.build(Path(__file__).resolve().parents[2] / "suites" / "tau2_retail.yaml",
                         tmp_path_factory.mktemp("home"))
    return Release(Path(built.release))


def _recording(release: Release, path: Path, **info) -> Path:
    """The test recording with the fields of its `info.agent_info` (or of a simulation) replaced."""
    tau2_results(release, path)
    body = json.loads(path.read_text())
    body["info"]["agent_info"].update(info)
    path.write_text(json.dumps(body))
    return path


def _scorecards(release: Release) -> Path:
    m = release.manifest
    return release.path.parents[2] / "runs" / m.suite / m.version


def test_a_model_name_that_is_a_path_names_no_folder_outside_the_agents_folder(release, tmp_path):
    model = "../../../../elsewhere/runs/tau2_airline/r1/agents/recorded:gpt-4o"
    _, out = import_run(_recording(release, tmp_path / "r.json", llm=model), release, None, ORIGIN)
    assert out.parent == _scorecards(release) / AGENTS and out.name.startswith("recorded:elsewhere-runs-tau2")
    assert "/" not in out.name and ".." not in out.name
    _, nested = import_run(_recording(release, tmp_path / "n.json", llm="openrouter/anthropic/claude-3.5"),
                           release, None, ORIGIN)
    assert nested.parent == out.parent and nested in imported_runs(_scorecards(release))


@pytest.mark.parametrize("model", ["gpt-4o\n| Verified | 1.000 |", "gpt\x00", "x" * 300,
                                   "gpt ![x](http://evil.example/x.png)"])
def test_a_model_name_that_would_write_into_the_scorecard_is_refused_in_one_line(release, tmp_path, model):
    rec = _recording(release, tmp_path / "r.json", llm=model)
    result = CliRunner().invoke(app, ["import-run", str(rec), str(release.path), "--license", "MIT",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1 and "model" in result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("field, value, says", [
    ("reward", float("nan"), "reward"), ("reward", float("inf"), "reward"), ("reward", 5, "reward"),
    ("reward", -1, "reward"), ("trial", 1e30, "trial"),
])
def test_numbers_a_recording_cannot_hold_are_refused_in_one_line(release, tmp_path, field, value, says):
    path = tau2_results(release, tmp_path / "r.json")
    body = json.loads(path.read_text())
    sim = body["simulations"][0]
    if field == "reward":
        sim["reward_info"]["reward"] = value
    else:
        sim[field] = value
    path.write_text(json.dumps(body))
    with pytest.raises(RecordingError) as err:
        read_recording(path)
    assert says in str(err.value) and "\n" not in str(err.value) and str(err.value).startswith(str(path))


def test_a_recording_nested_deeper_than_any_input_may_be_is_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 990 + "]" * 990)
    with pytest.raises(RecordingError, match="nested deeper than"):
        read_recording(path)


def test_an_import_into_a_folder_another_run_is_writing_stops_and_changes_nothing(release, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    rec = _recording(release, tmp_path / "r.json")
    with folder_lock(out):  # `evalsuite run` writing the folder in this process: a separate holder of the lock
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(1) as pool:
            error = pool.apply(_import_in_another_process, (str(rec), str(release.path), str(out)))
    assert "another process is writing this run folder" in error
    assert [p.name for p in out.iterdir()] == ["run.lock"]


def _import_in_another_process(rec: str, release: str, out: str) -> str:
    try:
        import_run(Path(rec), Release(Path(release)), Path(out), ORIGIN)
    except Exception as exc:  # noqa: BLE001 - the error is what the test reads
        return str(exc)
    return "imported"


def test_what_a_killed_import_left_is_never_read_as_a_run_and_the_next_import_sweeps_it(release, tmp_path):
    rec = _recording(release, tmp_path / "r.json")
    _, out = import_run(rec, release, None, ORIGIN, agent="swept")
    left = out.with_name(f".{out.name}-0123456789abcdef.tmp")
    left.mkdir()
    for f in out.iterdir():  # a whole staged copy: it looks like an imported run
        (left / f.name).write_bytes(f.read_bytes()) if f.is_file() else None
    assert left not in imported_runs(out.parent.parent)
    import_run(rec, release, None, ORIGIN, agent="swept")
    assert not left.exists()


def test_an_agent_name_given_for_the_folder_must_be_a_plain_name(release, tmp_path):
    with pytest.raises(RecordingError, match="--agent"):
        import_run(_recording(release, tmp_path / "r.json"), release, None, ORIGIN, agent="../../x")


def test_a_recording_of_another_domain_is_refused_before_anything_is_matched(release, tmp_path):
    """On 7bb15c3 a τ² file naming the airline domain imported onto another domain's release."""
    path = tau2_results(release, tmp_path / "r.json")
    body = json.loads(path.read_text())
    body["info"]["environment_info"] = {"domain_name": "airline"}
    path.write_text(json.dumps(body))
    with pytest.raises(RecordingError, match="the recording is of domain tau2_airline; release .* is of tau2_retail"):
        import_run(path, release, tmp_path / "run", ORIGIN)
    assert not (tmp_path / "run").exists()
    body["info"]["environment_info"] = {"domain_name": "retail"}  # its own domain: imported as before
    path.write_text(json.dumps(body))
    assert import_run(path, release, tmp_path / "run", ORIGIN)[1].is_dir()


def test_a_final_message_over_the_live_agents_cap_ends_the_trial_unkept_as_live_does(release, tmp_path):
    """On 7bb15c3 a recording's 60 MB final message was kept whole and graded; a live agent's is refused at 64 KB."""
    path = tau2_results(release, tmp_path / "r.json")
    body = json.loads(path.read_text())
    huge = "refund issued " * 5000  # 70 KB: over the 64 KB cap of EVALSUITE_MCP_MESSAGE_KB
    body["simulations"][0]["messages"][-1]["content"] = huge
    path.write_text(json.dumps(body))
    _, out = import_run(path, release, tmp_path / "run", ORIGIN)
    records = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    first = next(r for r in records if r["task_id"] == "0" and r["trial"] == 0)
    assert first["outcome"] == "budget_exhausted"
    assert first["exhausted"] == "final message cap 64 KB hit (68.4 KB submitted); refused"
    assert huge not in (out / "traces.jsonl").read_text()
    assert "final message cap 64 KB hit" in (out / "scorecard.md").read_text()


def test_what_a_recording_says_is_shown_as_written_in_scorecard_md_never_as_markup(release, tmp_path):
    """On 7bb15c3 a recorded task id, a licence or a source put a comment, an image and HTML into scorecard.md."""
    path = tau2_results(release, tmp_path / "r.json")
    body = json.loads(path.read_text())
    body["simulations"][-1]["task_id"] = "999 <!-- ![x](http://evil.example/x.png) <b>\n| Verified | 1.000 |"
    body["simulations"][1]["termination_reason"] = "`max_steps` [more](http://evil.example)"
    path.write_text(json.dumps(body))
    origin = Origin(license="MIT <img src=http://evil.example/y.png>", source="[notes](javascript:alert(1))")
    _, out = import_run(path, release, tmp_path / "run", origin)
    md = (out / "scorecard.md").read_text()
    page = MarkdownIt("commonmark").enable("table").render(md)  # as a Markdown viewer shows scorecard.md
    for markup in ("<!--", "<img", "<b>", "<a ", "<code>max_steps", "<td>Verified"):
        assert markup not in page
    assert "999 &lt;!-- ![x](http://evil.example/x.png) &lt;b&gt;" in page
    assert "licence: MIT &lt;img src=http://evil.example/y.png&gt;" in page


def test_arguments_nested_deeper_than_any_input_may_be_are_refused_in_one_line(release, tmp_path):
    """On 7bb15c3 an OpenAI-format call whose arguments string nests 500 deep ended in a serialization error, and
    left the run folder behind."""
    path = openai_messages(release, tmp_path / "r.jsonl")
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    deep = json.dumps({"x": json.loads("[" * 500 + "]" * 500)})
    first["messages"][1]["tool_calls"][0]["function"]["arguments"] = deep
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(RecordingError) as err:
        import_run(path, release, tmp_path / "run", ORIGIN)
    assert str(err.value) == (f"{path}: openai_messages: a tool call's function.arguments: invalid JSON: nested "
                              "deeper than 100 levels")
    assert not (tmp_path / "run").exists()


def test_a_task_whose_trials_skip_a_number_is_refused_in_one_line_naming_the_file(release, tmp_path):
    """On 7bb15c3 a task recorded as trial 1 alone was imported, then failed rescoring naming the staged folder."""
    path = tau2_results(release, tmp_path / "r.json")
    body = json.loads(path.read_text())
    body["simulations"] = [s | {"trial": 1} for s in body["simulations"] if s["task_id"] == "0" and s["trial"] == 0]
    path.write_text(json.dumps(body))
    with pytest.raises(RecordingError, match=r"r\.json: tau2_results: task 0 has trial\(s\) 1: a task's trials are "
                                             r"numbered 0, 1, 2, … with none missing$"):
        import_run(path, release, tmp_path / "run", ORIGIN)
    assert not (tmp_path / "run").exists()


def test_an_import_that_fails_while_writing_leaves_no_folder_it_made(release, tmp_path, monkeypatch):
    from evalsuite.importers.recorded import run

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run, "_write", full)
    with pytest.raises(OSError, match="No space left"):
        import_run(_recording(release, tmp_path / "r.json"), release, tmp_path / "run", ORIGIN)
    assert not (tmp_path / "run").exists() and [p.name for p in tmp_path.iterdir()] == ["r.json"]
