"""The run folder as one thing: read whole, written whole, read in its older version, and written by one
process at a time (three `evalsuite run` processes started at once on the same --out)."""
import json
import os
import subprocess
import sys

import pytest
from harness_support import make_release
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.scoring.runlog import (
    FILES,
    LOCK,
    RUN_JSON,
    SCHEMA_VERSION,
    SCORECARD_JSON,
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
