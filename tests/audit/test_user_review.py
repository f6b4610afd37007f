"""Human review of LLM-simulated users: a run's conversations sampled into a sheet a reviewer fills, and the tally."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from harness_support import make_release
from scripted_model import Always
from typer.testing import CliRunner

from evalsuite.audit.user_review import read_sheet, tally
from evalsuite.cli import app
from evalsuite.core.records import Simulator
from evalsuite.domains.mobile_service.generate import sample_world
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release

LLM = Simulator(model="sim-user", version="v1", temperature=0.0, seed=3)  # kind None: an LLM user


@pytest.fixture
def run(tmp_path, endpoint):
    """A run folder of the reference on conversational tasks whose user is an LLM (the scripted endpoint)."""
    endpoint.script = Always({"content": "Sure, I did that. Anything else?"})
    world, gen = sample_world(tmp_path / "world.sqlite", n=6, max_subtasks=1)
    tasks = [t.model_copy(update={"user_scenario": t.user_scenario.model_copy(update={"simulator": LLM})})
             for t in gen.tasks]
    release = Release(make_release(SimpleNamespace(tasks=tasks, world=world), tmp_path / "releases"))
    run_release(release, ["reference"], tmp_path / "run", trials=2, workers=1)
    return tmp_path / "run", tasks


def test_a_sample_of_llm_conversations_is_written_reviewed_and_tallied(run, tmp_path):
    run_dir, tasks = run
    sheet = tmp_path / "review.jsonl"
    out = CliRunner().invoke(app, ["users", "sample", str(run_dir), "--out", str(sheet), "--n", "4", "--seed", "1"])
    assert out.exit_code == 0, out.output
    assert f"4 of {2 * len(tasks)} conversation(s)" in out.output
    items = read_sheet(sheet)
    assert len(items) == 4 and all(i.error_class is None and i.simulator == LLM for i in items)
    first = items[0]
    assert first.transcript[0].who == "agent" and first.transcript[1].who == "user"
    assert first.transcript[1].text == "Sure, I did that. Anything else?"  # the LLM user's own words
    again = tmp_path / "again.jsonl"
    CliRunner().invoke(app, ["users", "sample", str(run_dir), "--out", str(again), "--n", "4", "--seed", "1"])
    assert again.read_text() == sheet.read_text()  # the same seed, the same sheet

    # the reviewer fills in three of the four lines; the fourth stays unreviewed
    lines = [json.loads(line) for line in sheet.read_text().splitlines()]
    for line, verdict in zip(lines, ["none", "task-critical", "benign"]):
        line["error_class"], line["note"] = verdict, "read by Ada"
    sheet.write_text("".join(json.dumps(line) + "\n" for line in lines))
    t = tally(read_sheet(sheet))
    assert (t.conversations, t.reviewed, t.by_class) == (4, 3, {"none": 1, "benign": 1, "task-critical": 1})
    assert t.task_critical_rate == pytest.approx(1 / 3) and 0 < t.task_critical_low < 1 / 3 < t.task_critical_high
    shown = CliRunner().invoke(app, ["users", "tally", str(sheet)])
    assert shown.exit_code == 0 and json.loads(shown.output)["reviewed"] == 3


def test_a_wrong_class_in_the_sheet_is_one_line_naming_file_line_and_field(run, tmp_path):
    run_dir, _ = run
    sheet = tmp_path / "review.jsonl"
    CliRunner().invoke(app, ["users", "sample", str(run_dir), "--out", str(sheet), "--n", "2"])
    lines = sheet.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["error_class"] = "critical"
    sheet.write_text(lines[0] + "\n" + json.dumps(bad) + "\n")
    out = CliRunner().invoke(app, ["users", "tally", str(sheet)])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == [
        f"error: {sheet}:2: error_class: Input should be 'none', 'benign' or 'task-critical'"]


def test_a_run_without_llm_users_has_nothing_to_review(tmp_path):
    world, gen = sample_world(tmp_path / "world.sqlite", n=3, max_subtasks=1)  # scripted users
    release = Release(make_release(SimpleNamespace(tasks=gen.tasks, world=world), tmp_path / "releases"))
    run_release(release, ["reference"], tmp_path / "run", trials=1, workers=1)
    out = CliRunner().invoke(app, ["users", "sample", str(tmp_path / "run"), "--out", str(tmp_path / "s.jsonl")])
    assert out.exit_code == 2 and "no conversation with an LLM user to review" in out.output
    assert not (tmp_path / "s.jsonl").exists()
    scripted = CliRunner().invoke(app, ["users", "sample", str(tmp_path / "run"), "--out", str(tmp_path / "s.jsonl"),
                                        "--scripted"])
    assert scripted.exit_code == 0 and len(read_sheet(tmp_path / "s.jsonl")) == 3
