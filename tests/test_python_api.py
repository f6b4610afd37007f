"""The Python API: `import evalsuite` stays cheap, every exported name resolves, and the notebook example in
docs/python-api.md runs as written."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from docs_support import ROOT, code_blocks, page, section

import evalsuite
from evalsuite.scoring.runlog import SCORECARD_JSON

PAGE = "python-api.md"


def example() -> str:
    (block,) = code_blocks(section(page(PAGE), "## In ten lines"), "python")
    return block


def test_importing_evalsuite_loads_no_other_module_and_no_dagster():
    code = "import sys, evalsuite; print(sorted(m for m in sys.modules if m.startswith(('evalsuite', 'dagster'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['evalsuite']"


def test_every_exported_name_resolves_and_the_reference_names_each_one():
    reference = section(page(PAGE), "## Reference")
    for name in evalsuite.__all__:
        assert getattr(evalsuite, name) is not None
        assert f"| `{name}" in reference, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        evalsuite.nope  # noqa: B018


def test_the_example_runs_as_a_plain_script(tmp_path):
    """Saved as a file and run with python, no `__main__` guard: the run's worker processes must not re-run the
    script (on 7bb15c3 they did, and it ended in FolderBusyError and BrokenPipeError)."""
    (tmp_path / "suites").symlink_to(ROOT / "suites")  # the example runs from a checkout: its paths are relative
    (tmp_path / "example.py").write_text(example())
    env = {k: v for k, v in os.environ.items() if k != "EVALSUITE_DEID_KEY"}
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stderr.count("Traceback") == 0, done.stderr[-2000:]
    printed = io.StringIO(done.stdout)
    run = evalsuite.read_run(tmp_path / "runs" / "ap_demo")
    assert (run.folder / SCORECARD_JSON).is_file() and run.scorecard is not None
    assert {r.agent for r in run.records} == {"reference", "noop"}
    tasks = {t.task_id for t in run.tasks}
    for agent in ("reference", "noop"):  # every task, twice, for each agent
        assert sorted((r.task_id, r.trial) for r in run.records if r.agent == agent) == \
            sorted((t, i) for t in tasks for i in range(2))
    assert run.pass_hat() == {"noop": {1: 0.0, 2: 0.0}, "reference": {1: 1.0, 2: 1.0}}
    assert "reference {'pass^1': 1.0, 'pass^2': 1.0}" in printed.getvalue()
    assert "noop {'pass^1': 0.0, 'pass^2': 0.0}" in printed.getvalue()
    assert not (ROOT / "runs" / "ap_demo").exists()  # nothing written into the checkout
