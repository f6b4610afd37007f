"""The code location as components shows a user what the hand-wired one did: the same asset keys, groups, deps,
partitions and kinds, the same checks, jobs, sensors and schedule (location_view.json was dumped from the
definitions before the move to components)."""
from __future__ import annotations

import json
from pathlib import Path

import yaml
from location_view import user_view
from pipeline_support import load_bundled
from suite_support import ROOT

import evalsuite_dagster
from evalsuite_dagster.suite.component import SuiteComponent

BEFORE = Path(__file__).with_name("location_view.json")
DEFS = ROOT / "assets" / "bundled_suites" / "defs"  # the bundled suites' project, on the component a team uses


def test_the_bundled_suites_show_the_keys_checks_jobs_and_sensors_they_showed_before(monkeypatch):
    monkeypatch.delenv("EVALSUITE_SUITES", raising=False)
    now = user_view(load_bundled())
    before = json.loads(BEFORE.read_text())
    for part in ("assets", "checks", "jobs", "sensors", "schedules"):
        assert now[part] == before[part], part


def test_every_bundled_spec_is_one_suite_component_instance():
    instances = {}
    for f in sorted(DEFS.glob("*/defs.yaml")):
        body = yaml.safe_load(f.read_text())
        if body["type"] == "evalsuite_dagster.SuiteComponent":
            instances[f.parent.name] = body["attributes"]["spec"]
    assert instances == {p.stem: f"../suites/{p.name}" for p in sorted((ROOT / "suites").glob("*.yaml"))}
    assert evalsuite_dagster.SuiteComponent is SuiteComponent  # the name the instances give resolves to it
