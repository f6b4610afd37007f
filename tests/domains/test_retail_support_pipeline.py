"""The bundled retail_support suite through its Dagster asset group (one materialization), released with every
task accepted under its fault plans; `evalsuite trial replay` on that release prints one JSON object."""
from __future__ import annotations

import json

import dagster as dg
import dagster_driver as driver
from suite_support import ROOT
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.graph import build_suite_graph

SPEC = ROOT / "suites" / "retail_support.yaml"


def test_the_suite_builds_as_its_own_group_passes_acceptance_and_releases(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_HOME", str(tmp_path / "home"))
    graph = build_suite_graph(SPEC)
    defs = build_defs([graph], home=tmp_path / "home")
    assert defs.resolve_assets_def(graph.key("suite_release")).group_names_by_key[graph.key("suite_release")] \
        == "retail_support"
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        out = driver.build(defs, graph, instance)
        meta = instance.get_latest_materialization_event(graph.key("acceptance_results")).asset_materialization.metadata
    assert "| rs-c-1001-lost-refund | backend_error_on_refund | 4 |" in meta["fault_plans"].value
    assert out.success and out.blocked == [], out.blocked
    assert {g for g, (passed, _) in out.checks.items() if not passed} == set()
    assert "suite_release" in out.materialized
    audit = json.loads((tmp_path / "home" / "suites" / "retail_support" / "acceptance" / "audit.json").read_text())
    assert (audit["summary"]["accepted"], audit["summary"]["quarantined"]) == (9, 0)
    assert audit["summary"]["fault_plan_conditions"] == 2 and audit["summary"]["controls_passing"] == 0
    audit_md = (tmp_path / "home" / "suites" / "retail_support" / "acceptance" / "audit.md").read_text()
    assert "| rs-c-1003-lost-response | lost_response_on_refund | 4 |" in audit_md

    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([{"tool": "get_case", "arguments": {"case_id": "C-1007"}},
                                 {"tool": "open_investigation", "arguments": {
                                     "case_id": "C-1007", "shipment_id": "SH-1007", "note": "no scans for 12 days"}}]))
    result = CliRunner().invoke(app, ["trial", "replay", out.release, "--task", "rs-c-1007-unknown-status",
                                      "--calls", str(calls)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] and [c["outcome"] for c in report["calls"]] == ["ok", "ok"]
    bad = CliRunner().invoke(app, ["trial", "replay", out.release, "--task", "nope", "--calls", str(calls)])
    assert bad.exit_code == 2 and "no task 'nope'" in bad.stderr
