"""Loading the code location starts no run: `make ui` over the demo's instance loads every bundled suite, and only
what the user asks for (or a new drop for a suite built here) may run."""
from __future__ import annotations

import dagster as dg
from pipeline_support import load_bundled, suite_instance
from suite_support import SUITE, copy_suite

from evalsuite_dagster.suite.automation import drop_folder_sensor, schedule


def _requests(defs: dg.Definitions, instance: dg.DagsterInstance) -> dict[str, int]:
    """Run requests of one tick of every schedule and sensor and two of the automation conditions, by name."""
    out = {}
    for sched in defs.schedules:
        data = sched.evaluate_tick(dg.build_schedule_context(instance=instance))
        out[sched.name] = len(data.run_requests or [])
    for sensor in defs.sensors:
        if not isinstance(sensor, dg.AutomationConditionSensorDefinition):
            out[sensor.name] = len(sensor(dg.build_sensor_context(instance=instance, definitions=defs)).run_requests)
    first = dg.evaluate_automation_conditions(defs, instance)
    out["automation"] = first.total_requested + dg.evaluate_automation_conditions(
        defs, instance, cursor=first.cursor).total_requested
    return out


def test_loading_the_bundled_suites_starts_no_run(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALSUITE_SUITES", raising=False)  # every bundled suite, as `make ui` loads them
    defs = load_bundled()

    assert len({k.path[0] for k in defs.resolve_asset_graph().get_all_asset_keys()}) > 1
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        requests = _requests(defs, instance)
    assert any(name.endswith("__drop_folder") for name in requests) and f"{SUITE}__schedule" in requests
    assert {name: n for name, n in requests.items() if n} == {}


def test_a_suite_built_here_is_rebuilt_by_a_new_drop_and_its_schedule(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    with suite_instance(tmp_path, spec) as s:
        sensor, sched = drop_folder_sensor(s.graph), schedule(s.graph)
        first = sensor(dg.build_sensor_context(instance=s.instance))
        invoices = spec.parent / SUITE / "source" / "invoices.csv"
        invoices.write_text(invoices.read_text().replace("paid", "released", 1))
        unchosen = sensor(dg.build_sensor_context(instance=s.instance, cursor=first.cursor))
        assert not unchosen.run_requests and "never built here" in unchosen.skip_reason.skip_message
        assert not sched.evaluate_tick(dg.build_schedule_context(instance=s.instance)).run_requests

        s.instance.report_runless_asset_event(dg.AssetMaterialization(s.graph.key("rights_review")))  # built here
        invoices.write_text(invoices.read_text().replace("released", "paid", 1))
        chosen = sensor(dg.build_sensor_context(instance=s.instance, cursor=unchosen.cursor))
        assert len(chosen.run_requests) == 1
        assert len(sched.evaluate_tick(dg.build_schedule_context(instance=s.instance)).run_requests) == 1
