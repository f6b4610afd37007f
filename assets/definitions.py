"""The code location's one Definitions object: one asset graph per suite spec.

Specs are `suites/*.yaml` beside this package, or the files and folders listed
in EVALSUITE_SUITES (separated by the OS path separator). Runs execute in one
process each (in_process_executor): trials fan out inside the harness, and a
process per step would re-import the library for every step.

A spec that cannot be loaded (malformed YAML, unknown key, missing file, a
definition Dagster rejects, a suite name already taken) does not take the code
location down: the other suites load, and the bad spec appears as one asset in
the group `invalid_suite_specs`, keyed by the spec file's stem, whose
description is the one-line error and whose materialization fails with it.
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from assets.automation import automation_sensor, suite_automation
from assets.celery_trials import celery_trials_job
from assets.resources import EvalsuiteHome, ModelEndpoint
from assets.site import site_parts
from assets.suite_graph import SuiteGraph, build_suite_graph
from evalsuite.sourcing.spec import SpecError

SUITES = Path(__file__).resolve().parent.parent / "suites"
INVALID_GROUP = "invalid_suite_specs"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InvalidSpec:
    """A suite spec that could not be turned into an asset graph, and why (one line naming the file)."""

    path: Path
    error: str


def spec_files() -> list[Path]:
    listed = [Path(p) for p in os.environ.get("EVALSUITE_SUITES", "").split(os.pathsep) if p]
    out: dict[Path, Path] = {}  # by resolved path: a file listed twice (or also inside a listed folder) is one spec
    for p in listed or [SUITES]:
        for f in sorted(p.glob("*.yaml")) if p.is_dir() else [p]:
            out.setdefault(f.resolve(), f)
    return list(out.values())


def _one_line(path: Path, exc: Exception) -> str:
    """The error as one line naming the spec file (SpecError messages already name file and key)."""
    text = str(exc).strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if isinstance(exc, SpecError):
        return " ".join(text.split())
    return f"{path}: {type(exc).__name__}: {first}" if first else f"{path}: {type(exc).__name__}"


def _suite_parts(g: SuiteGraph) -> dict:
    automation = suite_automation(g)
    site, site_job = site_parts(g)  # the evidence site of each scored release (assets/site.py)
    return {"assets": [*g.assets, site], "asset_checks": list(g.checks), "jobs": [*g.jobs(), site_job],
            "schedules": [x for x in automation if isinstance(x, dg.ScheduleDefinition)],
            "sensors": [x for x in automation if isinstance(x, dg.SensorDefinition)]}


def load_suites(spec_paths: Iterable[str | Path]) -> tuple[list[SuiteGraph], list[InvalidSpec]]:
    """The asset graph of every usable spec, in order, and the specs that are not usable.

    A spec is usable when it loads, its own definitions pass Dagster's validation, and no earlier
    spec has the same suite name (the first one of a name wins).
    """
    graphs: list[SuiteGraph] = []
    invalid: list[InvalidSpec] = []
    taken: dict[str, Path] = {}
    for raw in spec_paths:
        path = Path(raw)
        try:
            g = build_suite_graph(path)
            dg.Definitions.validate_loadable(dg.Definitions(**_suite_parts(g), resources={
                "home": EvalsuiteHome(), "model_endpoint": ModelEndpoint()}))
        except Exception as exc:  # noqa: BLE001 - any failure of one spec must leave the others loadable
            invalid.append(InvalidSpec(path, _one_line(path, exc)))
            continue
        name = g.spec.name
        if name == INVALID_GROUP:
            invalid.append(InvalidSpec(path, f"{path}: name: suite name {name} is reserved for specs that fail to load"))
        elif name in taken:
            invalid.append(InvalidSpec(path, f"{path}: name: suite name {name} is already used by {taken[name]}"))
        else:
            taken[name] = path
            graphs.append(g)
    for bad in invalid:
        log.warning("suite spec not loaded: %s", bad.error)
    return graphs, invalid


def graphs_of(spec_paths: Iterable[str | Path]) -> list[SuiteGraph]:
    """The asset graphs of the usable specs (see load_suites for the others)."""
    return load_suites(spec_paths)[0]


def invalid_spec_assets(invalid: Sequence[InvalidSpec]) -> list[dg.AssetsDefinition]:
    """One asset per unusable spec in the group `invalid_suite_specs`: the error is its description, and
    materializing it fails with the error, so the UI shows the spec and why it is not loaded."""
    out, used = [], set()
    for bad in invalid:
        stem = re.sub(r"[^A-Za-z0-9_]", "_", bad.path.stem) or "spec"
        name, n = stem, 1
        while name in used:  # same stem in two folders
            n += 1
            name = f"{stem}_{n}"
        used.add(name)
        out.append(_invalid_spec_asset(bad, name))
    return out


def _invalid_spec_asset(bad: InvalidSpec, name: str) -> dg.AssetsDefinition:
    @dg.asset(key=dg.AssetKey([INVALID_GROUP, name]), group_name=INVALID_GROUP, description=bad.error, kinds={"yaml"},
              metadata={"spec_path": dg.MetadataValue.path(str(bad.path)), "error": dg.MetadataValue.text(bad.error)})
    def _asset() -> None:
        raise dg.Failure(description=bad.error, allow_retries=False)

    return _asset


def build_defs(graphs: list[SuiteGraph], home: str | Path | None = None,
               invalid: Sequence[InvalidSpec] = ()) -> dg.Definitions:
    """Definitions for these suites (and an asset for each unusable spec); `home` overrides EVALSUITE_HOME (tests use a
    temporary folder). Graphs must have distinct suite names: load_suites keeps the first of each name."""
    names = [g.spec.name for g in graphs]
    if len(set(names)) != len(names):
        raise ValueError(f"two suite specs share a name: {names}")
    parts = [_suite_parts(g) for g in graphs]
    return dg.Definitions(
        assets=[a for p in parts for a in p["assets"]] + invalid_spec_assets(invalid),
        asset_checks=[c for p in parts for c in p["asset_checks"]],
        jobs=[j for p in parts for j in p["jobs"]] + [celery_trials_job(g) for g in graphs],  # assets/celery_trials.py
        schedules=[s for p in parts for s in p["schedules"]],
        sensors=[s for p in parts for s in p["sensors"]] + [automation_sensor()],
        resources={"home": EvalsuiteHome(home=str(home) if home else ""),
                   "model_endpoint": ModelEndpoint.from_env()},  # openai agents' key and address, from EnvVars
        executor=dg.in_process_executor,
    )


GRAPHS, INVALID = load_suites(spec_files())
defs = build_defs(GRAPHS, invalid=INVALID)
