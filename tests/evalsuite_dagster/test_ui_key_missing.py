"""A user's own suite without a de-identification key: the build stops at seed_snapshot (the raw records are never
copied without the key that would de-identify them), whose assets and those below say in the UI they were not run
and why (the variable to set), not "Failed", and automation leaves them."""
from __future__ import annotations

import dagster as dg
import dagster_driver as driver
from pipeline_support import held_back_view, open_project_instance
from suite_support import copy_suite
from webserver_support import serve

from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.graph import build_suite_graph
from evalsuite_dagster.suite.held_back import KEY_MISSING, NOT_RUN_TAG

BELOW = ["seed_snapshot", "deidentified_snapshot", "derived_tasks", "acceptance_results", "suite_release"]


def test_a_build_without_a_key_leaves_the_assets_below_not_run_naming_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALSUITE_DEID_KEY")
    spec = copy_suite(tmp_path / "suite")  # the user's own copy: no demo key for it
    graph = build_suite_graph(spec)
    defs = build_defs([graph], home=tmp_path / "home")
    with open_project_instance(tmp_path / "dagster") as instance:
        before = dg.evaluate_automation_conditions(defs, instance)
        out = driver.build(defs, graph, instance)
        after = dg.evaluate_automation_conditions(defs, instance, cursor=before.cursor)
    assert not out.success and out.held_back == BELOW
    assert "set the environment variable EVALSUITE_DEID_KEY" in out.blocked[0][1]
    assert after.total_requested == 0, [r.key for r in after.results if r.true_subset.size]  # nothing relaunched

    with serve(tmp_path / "dagster", spec, tmp_path / "home", tmp_path / "webserver.log") as base:
        info, derived_page = held_back_view(base, ["rights_review", *BELOW], "de-identification key missing")
    run = info["seed_snapshot"]["latestRun"]
    assert run["status"] == "SUCCESS" and {"key": NOT_RUN_TAG, "value": KEY_MISSING} in run["tags"]
    assert all(info[s]["latestRun"]["id"] == run["id"] and info[s]["latestMaterialization"] is None for s in BELOW)
    assert "Failed" not in derived_page
    assert "de-identification key missing: set the environment variable EVALSUITE_DEID_KEY" in derived_page
