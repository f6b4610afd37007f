"""Several writers on one run folder: three `evalsuite run` processes started at once on the same --out."""
import os
import subprocess
import sys

import pytest
from harness_support import make_release
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.scoring.runlog import read_run

AGENTS = ["--agent", "reference", "--agent", "noop", "--agent", "adversary"]


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return make_release(ap, tmp_path_factory.mktemp("releases"), n_tasks=12)


def test_three_runs_at_once_on_one_folder_leave_it_whole(release, tmp_path):
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "evalsuite.cli", "run", str(release), *AGENTS, "--trials", "2", "--out", str(out),
            "--workers", "1", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(3)]
    done = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    assert any(code == 0 for code, _, _ in done), done
    for code, stdout, stderr in done:  # a writer that did not get the folder says so in one line
        if code != 0:
            assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
            assert str(out) in stderr and "another" in stderr, stderr
    run = read_run(out)  # every trial once: 12 tasks x 3 agents x 2 trials
    assert len(run.records) == 72 and len({r.key for r in run.records}) == 72
    for args in (["score", str(out)], ["run", str(release), *AGENTS, "--trials", "2", "--out", str(out),
                                       "--workers", "1", "--no-progress"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
