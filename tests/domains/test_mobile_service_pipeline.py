"""suites/mobile_service.yaml through the real Dagster asset graph (a small sample: 12 tasks of at most two
subtasks): generated_tasks upstream of derived_tasks with its counts as metadata, acceptance passing with the
scripted user carrying out the phone steps, and the user-simulator audit."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import dagster_driver as driver
import yaml

from evalsuite.domains.registry import domain_of as get_domain
from evalsuite.pipeline.driver import users_section
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages.derived_tasks import tasks_on_disk
from evalsuite.sourcing.spec import load_spec
from evalsuite.worlds.world import World
from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.graph import build_suite_graph

ROOT = Path(__file__).resolve().parents[2]


def small_spec(dest: Path) -> Path:
    shutil.copytree(ROOT / "suites" / "mobile_service", dest / "mobile_service")
    raw = yaml.safe_load((ROOT / "suites" / "mobile_service.yaml").read_text())
    raw["policies"] = [str((ROOT / "suites" / p).resolve()) for p in raw["policies"]]
    raw["generation"] |= {"sample": 12, "max_subtasks": 2}
    raw["acceptance"]["reference_trials"] = 1
    spec = dest / "mobile_service.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def test_the_suite_builds_through_dagster_with_generation_upstream(tmp_path):
    spec = small_spec(tmp_path)
    graph = build_suite_graph(spec)
    defs = build_defs([graph], home=tmp_path / "home")
    upstream = defs.resolve_asset_graph().get(graph.key("derived_tasks")).parent_keys
    assert graph.key("generated_tasks") in upstream
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        out = driver.build(defs, graph, instance)
        assert out.success and not out.blocked, out.blocked
        assert all(passed for passed, _ in out.checks.values())
        meta = instance.get_latest_materialization_event(graph.key("generated_tasks")).asset_materialization.metadata
        assert meta["sampled"].value == 12
        assert meta["verified"].value + meta["dropped"].value == meta["composites"].value
        assert "| mms_issue | 2 | hard |" in meta["strata"].value
        accepted = instance.get_latest_materialization_event(graph.key("acceptance_results"))
        # the acceptance report counts tasks and accepted tasks per stratum, as the audit page shows them
        assert "| intent | subtasks | persona | tasks | accepted |" in accepted.asset_materialization.metadata[
            "strata"].value
    manifest = json.loads((Path(out.release) / "manifest.json").read_text())
    assert manifest["n_tasks"] == 12 and manifest["acceptance"]["releasable"]
    # what `evalsuite audit` adds for the simulated users, on the tasks just built
    body: dict = {}
    paths = Paths(load_spec(spec), tmp_path / "home")
    audit = json.loads(paths.audit.read_text())
    assert sum(s["tasks"] for s in audit["strata"]) == 12 and sum(s["accepted"] for s in audit["strata"]) == 12
    assert "## Strata" in (paths.acceptance / "audit.md").read_text()
    section = users_section(World(get_domain("mobile_service"), paths.world), tasks_on_disk(paths), body)
    assert body["user_simulator"]["scripted_ok"] and len(body["user_simulator"]["scripted"]) == 12
    assert "never revealed a withheld value and never acted unasked: yes" in section
