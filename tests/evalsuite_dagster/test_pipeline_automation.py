"""The graph's shape and automation: keys, groups, gates, code versions, schedule, sensors, validation."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import dagster_driver as driver
from pipeline_support import suite_instance
from suite_support import ROOT, SUITE, copy_suite, expire_license

from evalsuite.pipeline.registry import build_stages
from evalsuite.sourcing.spec import load_spec
from evalsuite_dagster.suite.automation import drop_folder_sensor, schedule

TRIAL_STAGES = ["trial_traces", "scorecard", "leaderboard", "evidence_site"]  # the partitioned <suite>_trials group
BUILD_STAGES = [s.name for s in build_stages(load_spec(ROOT / "suites" / f"{SUITE}.yaml"))]
STAGES = ["source_records", *BUILD_STAGES, *TRIAL_STAGES]


def test_one_graph_per_suite_with_prefix_group_gates_and_code_versions(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    with suite_instance(tmp_path, spec) as s:
        graph = s.defs.resolve_asset_graph()
        keys = {k for k in graph.get_all_asset_keys() if k.path[0] == SUITE}
        assert keys == {dg.AssetKey([SUITE, name]) for name in STAGES}
        for key in keys:
            node = graph.get(key)
            assert node.group_name == (f"{SUITE}_trials" if key.path[1] in TRIAL_STAGES else SUITE)
            if key.path[1] != "source_records":
                assert node.code_version, key
        checks = {(c.asset_key.path[1], c.name): c for c in graph.asset_check_keys}
        assert set(checks) == {("rights_review", "rights_cleared"), ("seed_snapshot", "source_quality"),
                               ("seed_snapshot", "personal_data_declared"),
                               ("deidentified_snapshot", "no_residual_pii"),
                               ("deidentified_snapshot", "joins_preserved"),
                               ("derived_tasks", "task_schema_valid"), ("derived_tasks", "assertions_cite_policy"),
                               ("derived_tasks", "masked_fields_justified"),
                               ("acceptance_results", "reference_solvable"),
                               ("acceptance_results", "reference_stable"),
                               ("acceptance_results", "not_trivially_passable"), ("acceptance_results", "resettable")}
        # the gates do not fail their run (evalsuite_dagster/suite/held_back.py); automation waits for them instead
        assert not any(graph.get_check_spec(k).blocking for k in graph.asset_check_keys)
        assert all(graph.get_check_spec(k).description.startswith("Gate: ") for k in graph.asset_check_keys)
        for stage in BUILD_STAGES:
            condition = graph.get(s.graph.key(stage)).automation_condition
            assert [c.get_label() for c in condition.children] == ["eager", "all_deps_gates_passed"]
        traces = graph.get(s.graph.key("trial_traces")).partitions_def
        assert isinstance(traces, dg.MultiPartitionsDefinition)
        assert {d.name for d in traces.partitions_defs} == {"version", "agent"}


def test_schedule_comes_from_the_spec_cron(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    with suite_instance(tmp_path, spec) as s:
        sched = schedule(s.graph)
        assert sched.cron_schedule == s.graph.spec.schedule == "0 6 * * 1"
        assert sched.job_name == s.graph.build_job


def test_drop_folder_sensor_fires_on_changed_content_not_on_touch(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    drop = spec.parent / SUITE / "source"
    with suite_instance(tmp_path, spec) as s:
        sensor = drop_folder_sensor(s.graph)
        tick = lambda cursor: sensor(dg.build_sensor_context(instance=s.instance, cursor=cursor))  # noqa: E731
        first = tick(None)  # the files found at the first look are no new drop
        assert not first.run_requests
        assert not tick(first.cursor).run_requests  # nothing changed
        s.instance.report_runless_asset_event(dg.AssetMaterialization(s.graph.key("rights_review")))  # built here

        invoices = drop / "invoices.csv"
        later = time.time() + 60
        os.utime(invoices, (later, later))  # touched, content unchanged
        touched = tick(first.cursor)
        assert not touched.run_requests and "no file added" in touched.skip_reason.skip_message

        invoices.write_text(invoices.read_text().replace("paid", "released", 1))  # content changed
        changed = tick(touched.cursor)
        assert len(changed.run_requests) == 1
        assert changed.run_requests[0].tags["evalsuite/changed"] == "invoices.csv"
        assert not tick(changed.cursor).run_requests  # once per change

        (drop / "credit_notes.csv").write_text("credit_note_id,invoice_id\nCN-1,INV-40000\n")  # a new file lands
        landed = tick(changed.cursor)
        assert landed.run_requests[0].tags["evalsuite/changed"] == "credit_notes.csv"


def test_drop_folder_sensor_first_look_after_a_build_only_records_the_cursor(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    with suite_instance(tmp_path, spec) as s:
        s.instance.report_runless_asset_event(dg.AssetMaterialization(s.graph.key("rights_review")))  # built before
        first = drop_folder_sensor(s.graph)(dg.build_sensor_context(instance=s.instance))
        assert not first.run_requests and first.cursor


def test_definitions_validate(tmp_path):
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    (tmp_path / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    dagster = str(Path(sys.executable).parent / "dagster")
    run = subprocess.run([dagster, "definitions", "validate", "-w", "workspace.yaml"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "All code locations passed validation" in run.stdout + run.stderr


def test_automation_requests_nothing_below_a_gate_that_blocked(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    expire_license(spec)
    with suite_instance(tmp_path, spec) as s:
        tick = lambda defs, cursor: dg.evaluate_automation_conditions(defs=defs, instance=s.instance, cursor=cursor)  # noqa: E731
        before = tick(s.defs, None)
        out = driver.build(s.defs, s.graph, s.instance, selection=["rights_review"])
        assert out.checks == {"rights_cleared": (False, "ERROR")}
        blocked = tick(s.defs, before.cursor)  # rights_review updated, but its gate failed
        assert not blocked.get_requested_partitions(s.graph.key("seed_snapshot"))
        rights = spec.parent / SUITE / "rights.yaml"
        rights.write_text(rights.read_text().replace("expires: 2020-01-01", "expires: 2027-12-31"))
        s2 = s.reload()
        assert driver.build(s2.defs, s2.graph, s2.instance, selection=["rights_review"]).success
        cleared = tick(s2.defs, blocked.cursor)
        assert cleared.get_requested_partitions(s2.graph.key("seed_snapshot")) == {None}
