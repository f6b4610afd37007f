"""The contract-review suite builds and releases through its Dagster asset graph: every gate checked and passed,
and the release materialized (one materialization of the build job: Dagster steps are slow on a shared machine)."""
from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import dagster_driver
import yaml

from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.graph import build_suite_graph

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_releases_through_the_dagster_graph(tmp_path):
    shutil.copytree(ROOT / "suites" / "contract_review", tmp_path / "contract_review")
    raw = yaml.safe_load((ROOT / "suites" / "contract_review.yaml").read_text())
    raw["acceptance"]["reference_trials"] = 1
    raw["quality"] = None  # great-expectations costs ~25 s here; test_contract_review's driver build runs it
    spec = tmp_path / "contract_review.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        graph = build_suite_graph(spec)
        out = dagster_driver.build(build_defs([graph], home=tmp_path / "home"), graph, instance)
    assert out.success and out.blocked == []
    assert {"acceptance_results", "derived_tasks", "suite_release"} <= set(out.materialized)
    gates = {"rights_cleared", "source_quality", "task_schema_valid", "reference_solvable", "not_trivially_passable"}
    assert gates <= set(out.checks) and all(out.checks[g][0] for g in gates), out.checks
    assert sorted(p.name for p in (tmp_path / "home" / "releases" / "contract_review").iterdir()) == [out.version]
