"""Model agents run as a user runs them (`evalsuite run ... --agent openai:MODEL`): a run cap that stops new trials
and a folder that resumes, and the response cache that answers repeats and marks the run that used it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from harness_support import make_release
from scripted_model import serve_reference
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.scoring.runlog import RUN_JSON, SCORECARD_JSON, SCORECARD_MD, TRACES

AGENT = "openai:gpt-4o-mini"


@pytest.fixture
def model(ap, monkeypatch):
    with serve_reference(monkeypatch, ap.tasks, "sk-test") as served:
        yield served


@pytest.fixture
def release(ap, tmp_path):
    return make_release(ap, tmp_path / "releases", n_tasks=10)


def _run(release, out, *extra):
    trials = [] if "--trials" in extra else ["--trials", "1"]
    result = CliRunner().invoke(app, ["run", str(release), "--agent", AGENT, *trials, "--out", str(out),
                                      "--workers", "1", "--no-progress", *extra])
    assert result.exit_code == 0, result.output
    return result


def _lines(out):
    return [json.loads(line) for line in (out / TRACES).read_text().splitlines()]


def test_a_run_cap_stops_new_trials_scores_what_ran_and_the_folder_finishes_later(release, model, tmp_path):
    out = tmp_path / "run"
    capped = _run(release, out, "--max-tokens", "4000", "--max-in-flight", "2")
    ran = _lines(out)
    assert 2 <= len(ran) < 10  # the cap was reached after a few trials; at most the two in flight went past it
    spent_before_last = sum(c["tokens_in"] + c["tokens_out"] for r in ran[:-2] for c in r["usage"]["model_calls"])
    assert spent_before_last < 4000
    card = json.loads((out / SCORECARD_JSON).read_text())
    assert card["capped"]["limit"] == "tokens 4,000" and card["capped"]["trials_not_run"] == 10 - len(ran)
    assert card["agents"][0]["tasks"] == len(ran) and card["tasks_planned"] == 10
    assert "CAPPED: run cap tokens 4,000 reached" in capped.output
    assert "CAPPED" in (out / SCORECARD_MD).read_text()

    _run(release, out)  # no cap now: the rest run, nothing runs twice
    after = _lines(out)
    assert len(after) == 10 and after[:len(ran)] == ran
    card = json.loads((out / SCORECARD_JSON).read_text())
    assert card["capped"] is None and card["agents"][0]["tasks"] == 10


def test_the_response_cache_answers_repeats_marks_them_and_the_run_identity(release, model, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    _run(release, first, "--cache")
    requests = len(model.served)
    assert requests >= 10 and not any(c["cached"] for r in _lines(first) for c in r["usage"]["model_calls"])
    _run(release, second, "--cache")
    assert len(model.served) == requests  # every request of the second run came from the cache
    calls = [c for r in _lines(second) for c in r["usage"]["model_calls"]]
    assert calls and all(c["cached"] for c in calls)
    assert json.loads((second / RUN_JSON).read_text())["identity"]["response_cache"] is True
    assert {r["outcome"] for r in _lines(second)} == {"pass"}
    assert all(r["response_cache"] for r in _lines(second))
    assert json.loads((second / SCORECARD_JSON).read_text())["response_cache"] is True
    assert "CACHED" in (second / SCORECARD_MD).read_text()

    fresh = CliRunner().invoke(app, ["run", str(release), "--agent", AGENT, "--trials", "1", "--out", str(second),
                                     "--workers", "1", "--no-progress"])
    assert fresh.exit_code == 2 and "holds another run (identity differ" in fresh.output  # never pooled with fresh


def test_a_model_run_killed_mid_way_resumes_with_no_trial_lost_or_run_twice(ap, release, tmp_path, monkeypatch):
    from evalsuite.trials.local_model import serve_local_model

    out = tmp_path / "run"
    with serve_local_model(ap.tasks, max_requests=2000, median_ms=60) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        args = ["run", str(release), "--agent", AGENT, "--trials", "3", "--out", str(out), "--workers", "1",
                "--no-progress", "--max-in-flight", "4"]
        proc = subprocess.Popen([sys.executable, "-m", "evalsuite.cli", *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not ((out / TRACES).exists() and (out / TRACES).read_bytes().count(b"\n") >= 8):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the run wrote no traces in time"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)  # four trials in flight die with it
        proc.wait()
        kept = [json.loads(line) for line in (out / TRACES).read_bytes().split(b"\n")[:-1]]
        assert 8 <= len(kept) < 30
        _run(release, out, "--trials", "3", "--max-in-flight", "4")
    after = _lines(out)
    keys = [(r["task_id"], r["trial"]) for r in after]
    assert len(after) == 30 and len(set(keys)) == 30  # every planned trial once: none lost, none run twice
    assert after[:len(kept)] == kept and {r["outcome"] for r in after} == {"pass"}


def test_a_run_resumed_against_another_endpoint_or_model_is_refused_in_one_line(release, model, tmp_path,
                                                                                monkeypatch):
    """On 7bb15c3 resuming with another OPENAI_BASE_URL pooled two endpoints' trials under one identity (its config
    said base_url: null)."""
    from evalsuite.core.identity import AgentConfig
    from evalsuite.releases.release import Release
    from evalsuite.releases.runs import run_release
    from evalsuite.scoring.runlog import RunFolderError

    out = tmp_path / "run"
    _run(release, out)
    first = os.environ["OPENAI_BASE_URL"]
    assert json.loads((out / RUN_JSON).read_text())["identity"]["agent_configs"][AGENT]["base_url"] == first
    before = (out / TRACES).read_bytes()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    resumed = CliRunner().invoke(app, ["run", str(release), "--agent", AGENT, "--trials", "2", "--out", str(out),
                                       "--workers", "1", "--no-progress"])
    assert resumed.exit_code == 2 and len(resumed.output.strip().splitlines()) == 1
    assert f"agent_config of {AGENT} (base_url {first!r} then, 'http://127.0.0.1:9/v1' now)" in resumed.output
    assert (out / TRACES).read_bytes() == before and len(model.served) >= 10  # nothing sent, nothing pooled

    monkeypatch.setenv("OPENAI_BASE_URL", first)
    named = tmp_path / "named"
    run_release(Release(release), [AgentConfig(name="bot", kind="openai", model="gpt-4o-mini")], named, trials=1)
    with pytest.raises(RunFolderError, match="agent_config of bot \\(model 'gpt-4o-mini' then, 'gpt-4o' now\\)"):
        run_release(Release(release), [AgentConfig(name="bot", kind="openai", model="gpt-4o")], named, trials=1)


def test_an_endpoint_url_holding_credentials_is_refused_before_anything_is_written(release, tmp_path, monkeypatch):
    """The endpoint a run used is written into run.json and the scorecard: a URL carrying a password or a key would
    publish it there."""
    out = tmp_path / "run"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:hunter2@127.0.0.1:9/v1")
    refused = CliRunner().invoke(app, ["run", str(release), "--agent", AGENT, "--trials", "1", "--out", str(out),
                                       "--workers", "1", "--no-progress"])
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1, refused.output
    assert "endpoint URL holds credentials" in refused.output and "hunter2" not in refused.output
    assert not out.exists()

    from evalsuite.core.identity import AgentConfig

    with pytest.raises(ValueError, match="base_url: the endpoint URL holds credentials"):
        AgentConfig(name="bot", kind="openai", model="m", base_url="https://api.example/v1?api_key=sk-123")
    assert AgentConfig(name="bot", kind="openai", model="m", base_url="https://api.example/v1").base_url
