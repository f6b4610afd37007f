"""The code location's one Definitions object: one asset graph per suite spec.

Specs are `suites/*.yaml` beside this package, or the files and folders listed
in EVALSUITE_SUITES (separated by the OS path separator). Runs execute in one
process each (in_process_executor): trials fan out inside the harness, and a
process per step would re-import the library for every step.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import dagster as dg

from assets.automation import automation_sensor, suite_automation
from assets.resources import EvalsuiteHome
from assets.suite_graph import SuiteGraph, build_suite_graph

SUITES = Path(__file__).resolve().parent.parent / "suites"


def spec_files() -> list[Path]:
    listed = [Path(p) for p in os.environ.get("EVALSUITE_SUITES", "").split(os.pathsep) if p]
    out: list[Path] = []
    for p in listed or [SUITES]:
        out += sorted(p.glob("*.yaml")) if p.is_dir() else [p]
    return out


def build_defs(graphs: list[SuiteGraph], home: str | Path | None = None) -> dg.Definitions:
    """Definitions for these suites; `home` overrides EVALSUITE_HOME (tests use a temporary folder)."""
    names = [g.spec.name for g in graphs]
    if len(set(names)) != len(names):
        raise ValueError(f"two suite specs share a name: {names}")
    automation = [x for g in graphs for x in suite_automation(g)]
    return dg.Definitions(
        assets=[a for g in graphs for a in g.assets],
        asset_checks=[c for g in graphs for c in g.checks],
        jobs=[j for g in graphs for j in g.jobs()],
        schedules=[x for x in automation if isinstance(x, dg.ScheduleDefinition)],
        sensors=[x for x in automation if isinstance(x, dg.SensorDefinition)] + [automation_sensor()],
        resources={"home": EvalsuiteHome(home=str(home) if home else "")},
        executor=dg.in_process_executor,
    )


def graphs_of(spec_paths: Iterable[str | Path]) -> list[SuiteGraph]:
    return [build_suite_graph(p) for p in spec_paths]


GRAPHS = graphs_of(spec_files())
defs = build_defs(GRAPHS)
