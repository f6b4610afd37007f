import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from harness_support import DIES_ON, CrashingAgent, make_release
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.core.identity import trial_seed
from evalsuite.releases.release import Release
from evalsuite.scoring.runlog import SCORECARD_JSON, SUMMARY, TRACES
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.pool import HarnessError
from evalsuite.trials.tracelog import IDENTITY_COLUMNS, TraceLogError

AGENTS = ["reference", "noop", "adversary"]


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return Release(make_release(ap, tmp_path_factory.mktemp("releases")))


@pytest.fixture(scope="module")
def run_args(release):
    return release.world_ref(), release.tasks(), release.run_identity()


def outcomes(records):
    return {r.key: (r.outcome, r.passed) for r in records}


def test_parallel_and_in_process_give_the_same_result_per_job(run_args):
    world, tasks, identity = run_args
    tasks = tasks[:8]
    serial = run_trials(world, tasks, AGENTS, 2, TrialSettings(identity, seed=5, workers=1))
    parallel = run_trials(world, tasks, AGENTS, 2, TrialSettings(identity, seed=5, workers=2))
    assert len(serial) == len(parallel) == 8 * 3 * 2
    assert outcomes(serial) == outcomes(parallel)
    assert [r.key for r in serial] == [r.key for r in parallel]  # returned in job order either way
    assert [r.trial_seed for r in serial] == [r.trial_seed for r in parallel]
    assert {r.outcome for r in serial if r.agent == "reference"} == {"pass"}


def test_every_record_and_summary_row_carries_the_identity(run_args, tmp_path):
    world, tasks, identity = run_args
    records = run_trials(world, tasks[:3], ["reference", "noop"], 2,
                         TrialSettings(identity, seed=3, out_dir=tmp_path, workers=1))
    for r in records:
        assert (r.suite, r.suite_version, r.task_set_sha256) == ("ap_test", "t1", identity.task_set_sha256)
        assert r.seed_sha256 == identity.seed_sha256 and r.environment_image == identity.environment_image
        assert r.tool_schemas_sha256 == identity.tool_schemas_sha256 and r.agent_config.name == r.agent
        assert r.run_seed == 3 and r.trial_seed == trial_seed(3, r.task_id, r.agent, r.trial)
        assert len(r.identity_sha256) == 64
    summary = pd.read_parquet(tmp_path / SUMMARY)
    assert len(summary) == len(records)
    assert summary[[c for c in IDENTITY_COLUMNS if c != "simulator"]].notna().all().all()
    assert {"task_id", "agent", "trial", "outcome", "passed", "seconds"} <= set(summary.columns)


def test_a_crashing_agent_is_recorded_as_infra_error(run_args):
    world, tasks, identity = run_args
    crash_on = {tasks[0].task_id, tasks[2].task_id}
    records = run_trials(world, tasks[:4], [CrashingAgent(crash_on)], 2, TrialSettings(identity, workers=1))
    assert len(records) == 8
    crashed = [r for r in records if r.task_id in crash_on]
    assert all(r.outcome == "infra_error" and not r.passed for r in crashed)
    assert all("RuntimeError: boom on" in r.error and "Traceback" in r.error for r in crashed)
    assert all(r.outcome == "pass" for r in records if r.task_id not in crash_on)


def test_an_exception_escaping_run_trial_is_an_infra_error(run_args, monkeypatch):
    world, tasks, identity = run_args

    def broken(*args, **kwargs):
        raise OSError("disk vanished")

    monkeypatch.setattr("evalsuite.trials.jobs.run_trial", broken)
    [record] = run_trials(world, tasks[:1], ["reference"], 1, TrialSettings(identity, workers=1))
    assert record.outcome == "infra_error" and "OSError: disk vanished" in record.error


def test_agent_objects_need_workers_1(run_args):
    world, tasks, identity = run_args
    with pytest.raises(ValueError, match="workers=1"):
        run_trials(world, tasks[:1], [CrashingAgent(set())], 1, TrialSettings(identity, workers=2))


def test_a_dead_worker_charges_only_its_own_trials(run_args):
    """A worker killed mid-chunk breaks the pool; only the chunk that kills a worker alone is an infra error."""
    world, tasks, identity = run_args
    tasks = tasks[:6]
    records = run_trials(world, tasks, ["dies"], 2,
                         TrialSettings(identity, workers=2, agent_factory="harness_support:make_agent"))
    assert len(records) == 12
    dead = [r for r in records if r.task_id == DIES_ON]
    assert len(dead) == 2 and all(r.outcome == "infra_error" for r in dead)
    assert all("BrokenProcessPool" in r.error for r in dead)
    assert all(r.outcome == "pass" for r in records if r.task_id != DIES_ON)


def test_a_worker_that_cannot_start_stops_the_run_with_its_cause(run_args, tmp_path):
    world, tasks, identity = run_args
    gone = world.model_copy(update={"path": str(tmp_path / "missing.sqlite")})
    with pytest.raises(HarnessError, match="world file not found"):
        run_trials(gone, tasks[:2], ["noop"], 1, TrialSettings(identity, workers=2))


def test_resume_skips_recorded_trials_and_drops_a_truncated_tail(run_args, tmp_path):
    world, tasks, identity = run_args
    first = run_trials(world, tasks[:3], ["reference"], 2, TrialSettings(identity, out_dir=tmp_path, workers=1))
    traces = tmp_path / TRACES
    lines = traces.read_text().splitlines(keepends=True)
    traces.write_text("".join(lines[:4]) + lines[4][:100])  # as if killed while writing line 5
    again = run_trials(world, tasks[:3], ["reference"], 2, TrialSettings(identity, out_dir=tmp_path, workers=1))
    assert [r.key for r in again] == [r.key for r in first]
    assert [r.seconds for r in again[:4]] == [r.seconds for r in first[:4]]  # kept, not rerun
    assert [r.seconds for r in again[4:]] != [r.seconds for r in first[4:]]  # the lost two were rerun
    final = traces.read_text().splitlines()
    assert len(final) == 6 and final[:4] == [line.rstrip("\n") for line in lines[:4]]


def test_a_corrupt_line_is_an_error_naming_file_and_line(run_args, tmp_path):
    world, tasks, identity = run_args
    run_trials(world, tasks[:2], ["noop"], 2, TrialSettings(identity, out_dir=tmp_path, workers=1))
    traces = tmp_path / TRACES
    lines = traces.read_text().splitlines(keepends=True)
    lines[1] = lines[1][:50] + "\n"
    traces.write_text("".join(lines))
    with pytest.raises(TraceLogError, match=f"{traces}:2: corrupt"):
        run_trials(world, tasks[:2], ["noop"], 2, TrialSettings(identity, out_dir=tmp_path, workers=1))


def test_traces_of_another_identity_are_refused(run_args, tmp_path):
    world, tasks, identity = run_args
    run_trials(world, tasks[:1], ["noop"], 1, TrialSettings(identity, seed=1, out_dir=tmp_path, workers=1))
    with pytest.raises(HarnessError, match="run_seed differ"):
        run_trials(world, tasks[:1], ["noop"], 1, TrialSettings(identity, seed=2, out_dir=tmp_path, workers=1))
    other = identity.model_copy(update={"suite_version": "t2"})
    with pytest.raises(HarnessError, match="suite_version differ"):
        run_trials(world, tasks[:1], ["noop"], 1, TrialSettings(other, seed=1, out_dir=tmp_path, workers=1))


def _cli(release, out, *extra):
    return ["run", str(release.path), "--agent", "reference", "--agent", "noop", "--trials", "3",
            "--out", str(out), "--workers", "1", "--no-progress", *extra]


def test_a_killed_run_resumes_without_rerunning_and_scores_like_an_uninterrupted_one(release, tmp_path):
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    total = len(release.tasks()) * 2 * 3
    proc = subprocess.Popen([sys.executable, "-m", "evalsuite.cli", *_cli(release, killed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    traces = killed / TRACES
    deadline = time.monotonic() + 30
    while not (traces.exists() and traces.read_bytes().count(b"\n") >= 40):
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the run wrote no traces in time"
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    before = traces.read_bytes().split(b"\n")
    kept = [json.loads(line) for line in before[:-1]]  # complete lines only; the tail may be cut
    assert 40 <= len(kept) < total

    runner = CliRunner()
    unfinished = runner.invoke(app, ["score", str(killed)])
    assert unfinished.exit_code == 2 and "rerun `evalsuite run`" in unfinished.output

    resumed = runner.invoke(app, _cli(release, killed))
    assert resumed.exit_code == 0, resumed.output
    after = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(after) == total and len({(r["task_id"], r["agent"], r["trial"]) for r in after}) == total
    assert after[: len(kept)] == kept  # finished trials kept verbatim (same seconds): not rerun

    fresh = runner.invoke(app, _cli(release, clean))
    assert fresh.exit_code == 0, fresh.output
    assert (killed / SCORECARD_JSON).read_text() == (clean / SCORECARD_JSON).read_text()
    a, b = (pd.read_parquet(d / SUMMARY) for d in (killed, clean))
    cols = ["task_id", "agent", "trial", "outcome", "passed", "trial_seed", "identity_sha256"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
