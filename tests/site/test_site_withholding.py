"""Issue 40: the site withholds by meaning, not by bytes. Held-out tasks are counts on every scorecard page (HTML,
Markdown, JSON), a trial that reproduces an answer's effects or carries its answer is a summary however it is
reordered or respaced, a killed build leaves nothing publishable, and a cached run is marked CACHED on the site."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from site_support import edit_first, first_noop_task, site_files, solution_of
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.importers.recorded.run import Origin, import_run
from evalsuite.scoring.runlog import SCORECARD_JSON, TRACES
from evalsuite.site.answers import CODE_WORD, withheld
from evalsuite.site.build import build_site
from evalsuite.trials.tracelog import TrialRecord, read_traces


def _tau2_recording(path: Path, trials: list[tuple[str, float, list, bool]]) -> Path:
    """A τ²-bench results file: per trial its task id, recorded reward, calls and whether a call was the user's."""
    sims = []
    for n, (task_id, reward, calls, by_user) in enumerate(trials):
        messages: list[dict] = [{"role": "user", "content": "Please look at this invoice."}]
        for i, call in enumerate(calls):
            who = "user" if by_user and i == 0 else "assistant"
            messages.append({"role": "assistant" if who == "assistant" else "user", "content": None, "tool_calls": [
                {"id": f"c{i}", "name": call.tool, "arguments": call.arguments, "requestor": who}]})
            messages.append({"role": "tool", "id": f"c{i}", "content": "{}", "requestor": who, "error": False})
        messages.append({"role": "assistant", "content": "Done."})
        sims.append({"id": f"sim-{n}", "task_id": task_id, "trial": 0, "messages": messages,
                     "termination_reason": "agent_stop", "reward_info": {"reward": reward}})
    path.write_text(json.dumps({"info": {"agent_info": {"llm": "scripted-test-model"}}, "tasks": [],
                                "simulations": sims}))
    return path


def test_held_out_tasks_of_an_imported_recording_are_counts_on_every_scorecard_page(published, tmp_path):
    """The recording ran a held-out task (its regraded verdict disagrees with the recorded reward) and another with
    a call on the user's device (skipped): neither id nor verdict is on any page, only how many."""
    release, _, _, _, _ = published
    tasks = release.tasks()
    held = [t for t in tasks if t.split == "held_out"][:2]
    test = next(t for t in tasks if t.split == "test")
    rec = _tau2_recording(tmp_path / "results.json", [(held[0].task_id, 1.0, held[0].reference_solution, False),
                                                      (held[1].task_id, 1.0, held[1].reference_solution, True),
                                                      (test.task_id, 1.0, test.reference_solution, False)])
    card, run = import_run(rec, release, tmp_path / "run", Origin(license="MIT", source="made by this test"))
    assert {d.task_id for d in card.recording.disagreements} == {held[0].task_id, test.task_id}
    assert [s.recorded_task for s in card.recording.skipped] == [held[1].task_id]
    site = tmp_path / "site"
    result = CliRunner().invoke(app, ["site", str(release.path), str(run), "--out", str(site)])
    assert result.exit_code == 0, result.output
    pages = site_files(site)
    for t in held:
        leaks = [name for name, text in pages.items() if t.task_id in text]
        assert not leaks, (t.task_id, leaks)
    html = next(text for name, text in pages.items() if name.startswith("scorecards/") and name.endswith(".html"))
    assert "1 on held-out tasks, not listed." in html.split('id="disagreements"')[0]
    assert "1 on held-out tasks, not listed." in html.split("<h3>Skipped</h3>")[1]
    assert test.task_id in html  # the public task's disagreement is listed as before
    data = json.loads(next(text for name, text in pages.items() if name.startswith("data/scorecards/")))
    assert [d["task_id"] for d in data["recording"]["disagreements"]] == [test.task_id]
    assert data["recording"]["skipped"] == [] and data["held_out_rows"]["disagreements"] == 1
    assert data["held_out_rows"]["skipped"] == 1
    markdown = next(text for name, text in pages.items() if name.endswith(".md"))
    assert ("2 disagree (1 disagreements on held-out tasks, counted only; 1 skipped on held-out tasks, counted "
            "only)") in markdown


def test_the_leak_scan_looks_for_held_out_ids(published, tmp_path):
    release, run, _, _, _ = published
    held = next(t for t in release.tasks() if t.split == "held_out")
    leaky = tmp_path / "run"
    shutil.copytree(run, leaky)
    edit_first(leaky, "noop", lambda r: r.update(final_message=f"See also {held.task_id}."))
    result = CliRunner().invoke(app, ["site", str(release.path), str(leaky), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "holds the id of a held-out task, suite ap_exceptions" in result.output
    assert held.task_id not in result.output and not (tmp_path / "out").exists()


def _record(run: Path, agent: str, task_id: str) -> TrialRecord:
    return next(r for r in read_traces(run / TRACES).records if r.agent == agent and r.task_id == task_id)


def _disguised(trace: list[dict], how: str) -> list[dict]:
    """The reference's trace as an agent might record it: the same writes, the reads and spelling otherwise."""
    reads = [e for e in trace if e["kind"] == "read"]
    writes = [e for e in trace if e["kind"] == "write"]
    if how == "extra read":
        return [*trace, reads[0]]
    if how == "swapped reads":
        return [*reads[::-1], *writes]
    if how == "writes reordered, arguments respaced and recased":
        def respace(value):
            return f" {value.upper().replace(' ', '  ')} " if isinstance(value, str) else value
        return reads + [e | {"arguments": {k: respace(v) for k, v in e["arguments"].items()}} for e in writes[::-1]]
    raise ValueError(how)


@pytest.mark.parametrize("how", ["extra read", "swapped reads", "writes reordered, arguments respaced and recased"])
def test_a_trial_whose_writes_reproduce_the_references_effects_is_withheld(published, how):
    """Counted on 7bb15c3: 7 of 27 AP test tasks published the reference writes behind an extra or swapped read."""
    _, run, _, _, _ = published
    task = first_noop_task(run)
    noop = _record(run, "noop", task.task_id)
    assert withheld(noop, task) is None  # the no-op's own trial (a read, a user's message) is published
    trace = _disguised(solution_of(run, task.task_id), how)
    assert any(e["kind"] == "write" for e in trace)
    copy = noop.model_copy(update={"trace": [type(noop.trace[0]).model_validate(e) for e in trace]})
    assert withheld(copy, task) == "this trial's writes reproduce the reference solution's effects"


@pytest.mark.parametrize("say", ["{a}", "{a_no_period}", "{a_double_space}", "Done: {a_lower_no_period}!"])
def test_a_final_message_that_carries_the_reference_answer_is_withheld(published, say):
    _, run, _, _, _ = published
    task = first_noop_task(run)
    a = task.reference_answer
    message = say.format(a=a, a_no_period=a.rstrip("."), a_double_space=a.replace(" ", "  "),
                         a_lower_no_period=a.rstrip(".").lower())
    copy = _record(run, "noop", task.task_id).model_copy(update={"final_message": message})
    assert withheld(copy, task) == "this trial's final message carries the reference answer or a required output"


def test_a_disguised_answer_trial_publishes_only_its_outcome(published, tmp_path):
    """End to end: the reference's writes behind an extra read and its answer with a double space and no period."""
    release, run, _, _, _ = published
    leaky = tmp_path / "run"
    shutil.copytree(run, leaky)
    task = first_noop_task(leaky)
    trace = _disguised(solution_of(leaky, task.task_id), "extra read")
    answer = task.reference_answer.rstrip(".").replace(" ", "  ")
    edit_first(leaky, "noop", lambda r: r.update(trace=trace, final_message=answer))
    out = tmp_path / "out"
    assert build_site([release.path, leaky], out).traces > 0
    page = json.loads(next(out.glob(f"data/traces/*/noop/{task.task_id}-*.json")).read_text())
    assert page["steps"] == [] and page["final_message"] is None and page["calls"] == len(trace)
    assert page["withheld"].startswith("this trial's writes reproduce the reference solution's effects")
    secret = [v for c in task.solution_calls() for v in c.arguments.values() if isinstance(v, str) and len(v) >= 12
              and not CODE_WORD.fullmatch(v) and v.lower() not in task.trigger.text.lower()]  # not its own words
    pages = site_files(out)
    assert secret and not [(n, v) for n, text in pages.items() for v in [*secret, answer] if v in text]


def test_a_cached_run_is_marked_cached_on_its_scorecard_pages(published, tmp_path):
    """As on the CLI scorecard (scoring.render.warnings): the HTML page, its Markdown and its JSON."""
    release, run, _, _, _ = published
    cached = tmp_path / "run"
    shutil.copytree(run, cached)
    card = json.loads((cached / SCORECARD_JSON).read_text())
    (cached / SCORECARD_JSON).write_text(json.dumps(card | {"response_cache": True}))
    out = tmp_path / "out"
    build_site([cached], out)
    mark = "CACHED: model responses may have come from the response cache"
    for page in ("*.html", "*.md"):
        assert mark in next(out.glob(f"scorecards/{page}")).read_text(), page
    data = json.loads(next(out.glob("data/scorecards/*.json")).read_text())
    assert data["response_cache"] is True and any(w.startswith(mark) for w in data["warnings"])
    build_site([run], tmp_path / "fresh")
    assert mark not in next((tmp_path / "fresh").glob("scorecards/*.html")).read_text()


# A site build that stops in its leak scan, as a build killed at 1.6-2.3 s did: its pages are written, unscanned.
_STOPPED_BUILD = """
import sys, time
from pathlib import Path
import evalsuite.site.build as build
def stop(folder, *args, **kwargs):
    Path(sys.argv[2]).write_text(str(folder))
    time.sleep(120)
build.check_folder = stop
build.build_site([Path(sys.argv[1])], Path(sys.argv[3]))
"""


def test_a_killed_build_leaves_nothing_publishable_and_a_live_one_is_left_alone(published, tmp_path):
    release, _, _, _, _ = published
    out, started = tmp_path / "site", tmp_path / "started"
    child = subprocess.Popen([sys.executable, "-c", _STOPPED_BUILD, str(release.path), str(started), str(out)],
                             env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        staged = Path(started.read_text())
        assert staged.parent == tmp_path and staged.name.startswith(".site-") and (staged / "index.html").is_file()
        build_site([release.path], out)  # while the other build is alive: its folder is its own
        assert staged.is_dir() and (out / "index.html").is_file()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert staged.is_dir()  # what the killed build wrote, never scanned
    build_site([release.path], out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "started"]
