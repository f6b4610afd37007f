"""Bad suites are stopped at the right gate, no release folder appears, and a later run cannot slip past it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import dagster_driver as driver
from pipeline_support import latest, suite_instance
from suite_support import copy_suite, corrupt_resolution, edit_spec, expire_license, leak_email


def gates(outcome: driver.BuildOutcome) -> list[str]:
    return [gate for gate, _ in outcome.blocked]


def test_expired_license_is_blocked_at_rights_cleared(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    expire_license(spec)
    with suite_instance(tmp_path, spec) as s:
        out = driver.build(s.defs, s.graph, s.instance)
        assert not out.success and gates(out) == ["rights_cleared"]
        assert "expired license on 2020-01-01" in out.blocked[0][1]
        assert sorted(out.materialized) == ["policy_documents", "rights_review"]  # nothing past the failed gate ran
        assert latest(s.instance, s.graph.key("rights_review")).metadata["license_decision"].value == "blocked"
        assert s.releases() == []
        again = driver.build(s.defs, s.graph, s.instance, selection=["suite_release"])
        assert not again.success and gates(again) == ["rights_cleared"]
        assert s.releases() == []


def test_leaked_personal_value_is_blocked_at_no_residual_pii(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    email = leak_email(spec)
    with suite_instance(tmp_path, spec) as s:
        out = driver.build(s.defs, s.graph, s.instance)
        assert not out.success and gates(out) == ["no_residual_pii"]
        assert "purchase_orders.buyer" in out.blocked[0][1]
        assert "deidentified_snapshot" in out.materialized and "derived_tasks" not in out.materialized
        findings = _check_metadata(s, "deidentified_snapshot", "no_residual_pii")
        assert email not in json.dumps(findings)  # the report says where, never the value
        assert s.releases() == []
        again = driver.build(s.defs, s.graph, s.instance,
                             selection=["derived_tasks", "acceptance_results", "suite_release"])
        assert not again.success and gates(again) == ["no_residual_pii"]
        alone = driver.build(s.defs, s.graph, s.instance, selection=["suite_release"])
        assert not alone.success and gates(alone) == ["no_residual_pii"]
        assert s.releases() == []


def test_unsolvable_task_is_blocked_at_reference_solvable(tmp_path):
    spec = copy_suite(tmp_path / "suite", max_quarantined_fraction=0.0)
    corrupt_resolution(spec)
    with suite_instance(tmp_path, spec) as s:
        out = driver.build(s.defs, s.graph, s.instance)
        assert not out.success and gates(out) == ["reference_solvable"]
        assert "INV-00000 not found" in out.blocked[0][1]
        assert "acceptance_results" in out.materialized and "suite_release" not in out.materialized
        assert "| ap-exc-" in latest(s.instance, s.graph.key("acceptance_results")).metadata["quarantined_tasks"].value
        assert s.releases() == []
        # A second run that selects suite_release alone is not stopped by the checks; the asset refuses itself.
        again = driver.build(s.defs, s.graph, s.instance, selection=["suite_release"])
        assert not again.success and gates(again) == ["reference_solvable"]
        assert s.releases() == []
        # Within the quarantine the spec allows, the task is quarantined, the gate only warns, the rest ships.
        edit_spec(spec, max_quarantined_fraction=0.1)
        s2 = s.reload()
        third = driver.build(s2.defs, s2.graph, s2.instance, selection=["acceptance_results", "suite_release"])
        assert third.success and third.checks["reference_solvable"] == (False, "WARN")
        manifest = json.loads((Path(third.release) / "manifest.json").read_text())
        assert len(manifest["quarantined"]) == 1 and "unsolvable" in manifest["quarantined"][0]["reasons"][0]


def test_cli_build_names_the_blocking_gate(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    expire_license(spec)
    run = subprocess.run([sys.executable, "-m", "evalsuite.cli", "build", str(spec), "--home", str(tmp_path / "home")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert json.loads(run.stdout.strip().splitlines()[-1])["blocked"] == "rights_cleared"
    assert "gate rights_cleared blocked: erp_ap_export: expired license on 2020-01-01" in run.stderr
    assert not (tmp_path / "home" / "releases").exists()


def _check_metadata(s, stage: str, check: str) -> dict:
    import dagster as dg

    key = dg.AssetCheckKey(s.graph.key(stage), check)
    record = s.instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
    evaluation = record.event.dagster_event.event_specific_data
    return {k: getattr(v, "value", v) for k, v in evaluation.metadata.items()}
