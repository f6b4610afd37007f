"""The command line explains itself: its version, a build's progress per stage and what derivation kept."""
from __future__ import annotations

import json
import tomllib

from suite_support import DEMO_KEY, ROOT, copy_suite
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.pipeline.registry import build_stages
from evalsuite.sourcing.spec import load_spec

RUNNER = CliRunner()


def test_version_prints_the_installed_version_of_the_project():
    result = RUNNER.invoke(app, ["--version"])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"evalsuite {project['version']}"


def test_build_shows_a_bar_over_the_stages_and_what_derivation_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    spec = copy_suite(tmp_path / "suite")
    shown = RUNNER.invoke(app, ["build", str(spec), "--home", str(tmp_path / "home"), "--progress"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["accepted"] == 49  # stdout stays the one JSON line
    assert "derived_tasks: 56 cases → 49 tasks; skipped: 7 outcome not verified" in shown.stderr
    stages = len(build_stages(load_spec(spec)))  # the stages this spec builds (AP has no generation stage)
    assert stages >= 7 and f"{stages}/{stages}" in shown.stderr
    quiet = RUNNER.invoke(app, ["build", str(spec), "--home", str(tmp_path / "home")])  # stderr is not a terminal
    assert quiet.exit_code == 0 and quiet.stderr == ""
