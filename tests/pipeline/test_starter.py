"""`evalsuite new`: a folder of exports becomes a starter project that loads as it stands, finds the keys and the
personal columns, and stops a build at the first gap with one line."""
from __future__ import annotations

import json

import yaml
from suite_support import ROOT
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.pipeline.preflight import domain_for
from evalsuite.sourcing.spec import load_spec

EXPORTS = ROOT / "examples" / "expense_desk" / "exports"
RUNNER = CliRunner()


def test_a_starter_project_loads_and_names_what_is_left(tmp_path):
    out = tmp_path / "project"
    made = RUNNER.invoke(app, ["new", str(EXPORTS), "--out", str(out), "--name", "expenses"])
    assert made.exit_code == 0, made.output
    assert "personal columns found: employees.email, employees.name" in made.stdout
    spec = load_spec(out / "suite.yaml")
    domain = domain_for(spec).domain
    assert sorted(domain.tools) == ["get_employees", "get_expense_reports", "get_resolved_cases"]
    assert domain.tables["expense_reports"].primary_key.columns.keys() == ["report_id"]
    rights = yaml.safe_load((out / "rights.yaml").read_text())
    assert rights["personal_columns"] == ["employees.email", "employees.name"] and rights["permitted_uses"] == []
    deid = yaml.safe_load((out / "deid.yaml").read_text())
    assert deid["tables"]["employees"]["columns"]["email"] == {"rule": "surrogate", "kind": "email"}
    built = RUNNER.invoke(app, ["build", str(out / "suite.yaml"), "--home", str(tmp_path / "home")],
                          env={"EVALSUITE_DEID_KEY": "k" * 64})
    assert built.exit_code == 2 and json.loads(built.stdout)["blocked"] == "rights_cleared"
    assert built.stderr.strip().splitlines() == [
        "error: gate rights_cleared blocked: expenses_export: use build_environments not permitted; "
        "expenses_export: use derive_tasks not permitted"]
    assert not (tmp_path / "home" / "releases").exists()


def test_a_starter_refuses_a_full_folder_and_a_folder_without_exports(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    (tmp_path / "empty").mkdir()
    for exports, out, says in ((EXPORTS, tmp_path / "taken", "not empty"),
                               (tmp_path / "empty", tmp_path / "new", "no .csv or .parquet exports")):
        result = RUNNER.invoke(app, ["new", str(exports), "--out", str(out), "--name", "expenses"])
        assert result.exit_code == 2 and says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine" and not (tmp_path / "new").exists()
