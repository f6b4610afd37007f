"""The code location as components shows a user what the hand-wired one did: the same asset keys, groups, deps,
partitions and kinds, the same checks, jobs, sensors and schedule (location_view.json was dumped from the
definitions before the move to components)."""
from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import yaml
from location_view import user_view
from suite_support import ROOT

from evalsuite_dagster.suite.component import SuiteComponent

BEFORE = Path(__file__).with_name("location_view.json")
DEFS = ROOT / "evalsuite_dagster" / "defs"


def test_the_bundled_suites_show_the_keys_checks_jobs_and_sensors_they_showed_before(monkeypatch):
    monkeypatch.delenv("EVALSUITE_SUITES", raising=False)
    now = user_view(dg.load_from_defs_folder(path_within_project=ROOT / "evalsuite_dagster"))
    before = json.loads(BEFORE.read_text())
    for part in ("assets", "checks", "jobs", "sensors", "schedules"):
        assert now[part] == before[part], part


def test_every_bundled_spec_is_one_suite_component_instance():
    instances = {}
    for f in sorted((DEFS / "suites").glob("*/defs.yaml")):
        body = yaml.safe_load(f.read_text())
        assert body["type"] == f"{SuiteComponent.__module__}.{SuiteComponent.__name__}", f
        instances[f.parent.name] = body["attributes"]["spec"]
    assert instances == {p.stem: f"suites/{p.name}" for p in sorted((ROOT / "suites").glob("*.yaml"))}
