"""The run folder as one thing: read whole, written whole, read in its older version, written by one process at a
time (three `evalsuite run` processes started at once on the same --out), and repaired by a command where an older
version left a trial recorded twice."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from harness_support import lock_held, make_release
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.scoring.runlog import (
    FILES,
    LOCK,
    RUN_JSON,
    SCHEMA_VERSION,
    SCORECARD_JSON,
    SUMMARY,
    TRACES,
    read_run,
    write_run,
)

AGENTS = ["--agent", "reference", "--agent", "noop", "--agent", "adversary"]


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return make_release(ap, tmp_path_factory.mktemp("releases"), n_tasks=12)


def _run(release, out, *extra):
    return ["run", str(release), *AGENTS, "--trials", "2", "--out", str(out), "--workers", "1", "--no-progress", *extra]


@pytest.fixture(scope="module")
def run_dir(release, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = CliRunner().invoke(app, _run(release, out))
    assert result.exit_code == 0, result.output
    return out


def test_a_run_read_and_written_elsewhere_reads_back_equal_and_rescores_the_same(run_dir, tmp_path):
    run = read_run(run_dir)
    assert run.agents == ["adversary", "noop", "reference"] and len(run.records) == 12 * 3 * 2
    assert run.schema_version == SCHEMA_VERSION and run.scorecard.suite == "ap_test"
    assert run.pass_hat()["reference"] == {1: 1.0, 2: 1.0} and run.pass_hat()["noop"] == {1: 0.0, 2: 0.0}
    copy = write_run(run, tmp_path / "copy")
    assert {p.name for p in copy.iterdir()} == set(FILES)
    again = read_run(copy)
    assert again.model_dump(exclude={"folder"}) == run.model_dump(exclude={"folder"})
    before = (copy / SCORECARD_JSON).read_bytes()
    (copy / SCORECARD_JSON).unlink()
    result = CliRunner().invoke(app, ["score", str(copy)])
    assert result.exit_code == 0, result.output
    assert (copy / SCORECARD_JSON).read_bytes() == before == (run_dir / SCORECARD_JSON).read_bytes()


def test_a_run_folder_written_before_the_schema_version_reads_as_version_1(run_dir, tmp_path):
    old = write_run(read_run(run_dir), tmp_path / "old")
    meta = json.loads((old / RUN_JSON).read_text())
    del meta["schema_version"]
    (old / RUN_JSON).write_text(json.dumps(meta))
    assert read_run(old).schema_version == 1
    result = CliRunner().invoke(app, ["score", str(old)])
    assert result.exit_code == 0, result.output


def test_three_runs_at_once_on_one_folder_leave_it_whole(release, tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-m", "evalsuite.cli", *_run(release, out)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    done = [(p.returncode, stderr) for p in procs for _, stderr in [p.communicate(timeout=300)]]
    assert any(code == 0 for code, _ in done), done
    for code, stderr in done:  # a writer that did not get the folder says so in one line, naming it
        if code != 0:
            assert code == 2 and "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
            assert f"{out}: another process is writing this run folder (it holds {out / LOCK})" in stderr
    run = read_run(out)  # every trial once: 12 tasks x 3 agents x 2 trials
    assert len(run.records) == 72 and len({r.key for r in run.records}) == 72
    assert (out / TRACES).read_text().count("\n") == 72
    for args in (["score", str(out)], _run(release, out)):  # and the folder still scores and resumes
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output


def _duplicated(run_dir, folder):
    """A copy of run_dir as an older evalsuite left it after runs at once: exact repeats of two lines, a later
    record of a failed trial that now says it passed, another of a passed trial that says it failed, amid the
    other lines, and a torn tail."""
    write_run(read_run(run_dir), folder)
    lines = (folder / TRACES).read_bytes().splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    failed = next(r for r in records if not r["passed"])
    passed = next(r for r in records if r["passed"])
    lied = [json.dumps({**failed, "passed": True, "outcome": "pass"}).encode() + b"\n",
            json.dumps({**passed, "passed": False, "outcome": "fail"}).encode() + b"\n"]
    (folder / SCORECARD_JSON).unlink()
    (folder / TRACES).write_bytes(b"".join([*lines[:30], lines[3], lied[0], *lines[30:50], lines[40], lied[1],
                                            *lines[50:], lines[7][:40]]))
    return lines


def test_a_folder_with_trials_recorded_twice_is_repaired_by_a_command_and_scores_as_the_clean_run(
        release, run_dir, tmp_path):
    dup = tmp_path / "dup"
    clean = _duplicated(run_dir, dup)
    for args in (["score", str(dup)], _run(release, dup)):  # before: every later run or score exits 2, naming the fix
        refused = CliRunner().invoke(app, args)
        assert refused.exit_code == 2 and "recorded twice" in refused.stderr, refused.output
        assert f"`evalsuite runs repair {dup}` keeps the first record of each trial" in refused.stderr
    result = CliRunner().invoke(app, ["runs", "repair", str(dup)])
    assert result.exit_code == 0, result.output
    assert (f"{dup / TRACES}: repaired: kept 72 trials; dropped 2 exact duplicate line(s), 2 conflicting "
            "duplicate(s) (the first record of each trial kept), a truncated final line") in result.stdout
    assert (dup / TRACES).read_bytes() == b"".join(clean)  # the first record of each trial, byte for byte
    pd.testing.assert_frame_equal(pd.read_parquet(dup / SUMMARY), pd.read_parquet(run_dir / SUMMARY))
    scored = CliRunner().invoke(app, ["score", str(dup)])
    assert scored.exit_code == 0, scored.output
    assert (dup / SCORECARD_JSON).read_bytes() == (run_dir / SCORECARD_JSON).read_bytes()
    again = CliRunner().invoke(app, ["runs", "repair", str(dup)])
    assert again.exit_code == 0 and f"{dup / TRACES}: nothing to repair (72 trials, each recorded once)" in again.stdout
    assert "summary rewritten" not in again.stdout


def test_repair_holds_the_folder_lock_so_a_repair_while_another_process_writes_exits_2_and_changes_nothing(
        run_dir, tmp_path):
    dup = tmp_path / "dup"
    _duplicated(run_dir, dup)
    before = (dup / TRACES).read_bytes()
    with lock_held(dup):
        result = CliRunner().invoke(app, ["runs", "repair", str(dup)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert result.stderr.strip() == (f"error: {dup}: another process is writing this run folder (it holds "
                                     f"{dup / LOCK}); wait for it to finish, or use another --out")
    assert (dup / TRACES).read_bytes() == before
    missing = CliRunner().invoke(app, ["runs", "repair", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no traces (not a run folder)" in missing.stderr
