"""A team's own process, as a new user has it: evalsuite installed from its wheel (not editable) into a fresh
virtual environment with the example plugin package beside it, and the team's folders outside the checkout.
The declarative expense desk (exports, YAML, SQL, Markdown only) and the plugin's ticket desk build through every
gate from the command line, the plugin is found by its entry point in the trial workers, and both load as one
Dagster project that `dagster definitions validate` passes."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from suite_support import ROOT

EXAMPLES = ROOT / "examples"


def _sh(args: list, cwd: Path, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh environment holding the two wheels; the dependencies come from the test's own environment (a .pth
    line after the venv's own site-packages), never evalsuite's checkout."""
    root = tmp_path_factory.mktemp("installed")
    source = root / "source"  # a copy, so building the wheel writes nothing into the checkout
    for part in ("evalsuite", "evalsuite_dagster"):
        shutil.copytree(ROOT / part, source / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, source / part)
    plugin = shutil.copytree(EXAMPLES / "ticket_desk_plugin", root / "plugin", ignore=shutil.ignore_patterns("suite"))
    for src in (source, plugin):
        _sh([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", root / "dist",
             src], cwd=root)
    _sh([sys.executable, "-m", "venv", "--without-pip", root / "venv"], cwd=root)
    python = root / "venv" / "bin" / "python"
    site = Path(_sh([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root)
                .stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _sh([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         *sorted((root / "dist").glob("*.whl"))], cwd=root)
    return root / "venv" / "bin"


@pytest.fixture(scope="module")
def team(tmp_path_factory) -> Path:
    """The team's folder, outside the checkout: the expense desk project, with the ticket desk suite beside it."""
    work = tmp_path_factory.mktemp("team")
    project = shutil.copytree(EXAMPLES / "expense_desk", work / "expense_desk")
    shutil.copytree(EXAMPLES / "ticket_desk_plugin" / "suite", project / "ticket_suite")
    defs = project / "expense_pipeline" / "defs" / "ticket_desk"
    defs.mkdir()
    (defs / "defs.yaml").write_text("type: evalsuite_dagster.SuiteComponent\n"
                                    "attributes:\n  spec: ticket_suite/suite.yaml\n")
    return project


@pytest.fixture(scope="module")
def env(team) -> dict:
    keep = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVALSUITE_HOME", "VIRTUAL_ENV")}
    (team.parent / "dagster").mkdir(exist_ok=True)
    return {**keep, "EVALSUITE_HOME": str(team.parent / "home"), "EVALSUITE_DEID_KEY": "t" * 64,
            "DAGSTER_HOME": str(team.parent / "dagster")}


def test_the_installed_package_is_the_wheel_and_finds_the_plugin(venv, team, env):
    where = _sh([venv / "python", "-c", "import evalsuite, ticket_desk; print(evalsuite.__file__)"], team, env)
    assert Path(where.stdout.strip()).is_relative_to(venv.parent) and not where.stdout.startswith(str(ROOT))
    listed = _sh([venv / "evalsuite", "domain", "list"], team, env).stdout
    assert "ticket_desk\tticket_desk:PACKAGE" in listed and "ap_exceptions\t" in listed


def test_both_build_from_the_command_line_and_the_plugin_runs_in_the_workers(venv, team, env):
    built = {}
    for spec in ("suite.yaml", "ticket_suite/suite.yaml"):
        out = _sh([venv / "evalsuite", "build", spec], team, env).stdout
        built[spec] = json.loads(out.strip().splitlines()[-1])
    assert built["suite.yaml"]["accepted"] == 32 and built["ticket_suite/suite.yaml"]["accepted"] == 11
    _sh([venv / "evalsuite", "run", built["ticket_suite/suite.yaml"]["release"], "--agent", "reference",
         "--agent", "noop", "--out", "runs/tickets", "--workers", "2"], team, env)
    card = json.loads((team / "runs" / "tickets" / "scorecard.json").read_text())
    assert {a["agent"]: a["curve"][0]["pass_hat"] for a in card["agents"]} == {"reference": 1.0, "noop": 0.0}


def test_the_project_loads_in_dagster_and_validates(venv, team, env):
    _sh([venv / "python", "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"], team, env)
    keys = _sh([venv / "python", "-c", "import evalsuite_dagster.project as p, dagster as dg; "
                "d = p.defs() if callable(p.defs) else p.defs; "
                "print('\\n'.join(sorted(k.to_user_string() for k in d.resolve_asset_graph().get_all_asset_keys())))"],
               team, env).stdout.split()
    for suite in ("expense_desk", "ticket_desk"):
        assert f"{suite}/suite_release" in keys and f"{suite}/scorecard" in keys, keys
