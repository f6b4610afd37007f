"""Suite specs into Definitions: one suite's asset graph, jobs and automation, and an asset for each spec that
cannot be loaded.

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

from evalsuite.sourcing.spec import SpecError
from evalsuite_dagster.resources import EvalsuiteHome, ModelEndpoint
from evalsuite_dagster.site.asset import site_parts
from evalsuite_dagster.suite.automation import suite_automation
from evalsuite_dagster.suite.graph import SuiteGraph, build_suite_graph
from evalsuite_dagster.trials.celery import celery_trials_job

# the bundled specs (assets/bundled_suites/defs/*/defs.yaml name them)
SUITES = Path(__file__).resolve().parents[2] / "suites"
INVALID_GROUP = "invalid_suite_specs"

log = logging.getLogger(__name__)


def listed_specs() -> list[Path] | None:
    """The spec files EVALSUITE_SUITES names (files and folders of them, separated by the OS path separator), each
    once; None when it is unset, and the bundled suites are the location's."""
    listed = [Path(p) for p in os.environ.get("EVALSUITE_SUITES", "").split(os.pathsep) if p]
    if not listed:
        return None
    out: dict[Path, Path] = {}  # by resolved path: a file listed twice (or also inside a listed folder) is one spec
    for p in listed:
        for f in sorted(p.glob("*.yaml")) if p.is_dir() else [p]:
            out.setdefault(f.resolve(), f)
    return list(out.values())


@dataclass(frozen=True)
class InvalidSpec:
    """A suite spec that could not be turned into an asset graph, and why (one line naming the file)."""

    path: Path
    error: str


def _one_line(path: Path, exc: Exception) -> str:
    """The error as one line naming the spec file (SpecError messages already name file and key)."""
    text = str(exc).strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if isinstance(exc, SpecError):
        return " ".join(text.split())
    return f"{path}: {type(exc).__name__}: {first}" if first else f"{path}: {type(exc).__name__}"


def suite_defs(g: SuiteGraph) -> dg.Definitions:
    """Everything of one suite: its asset graph and checks, the evidence site, its jobs (the Celery trial job
    too), its schedule and sensors."""
    automation = suite_automation(g)
    site, site_job = site_parts(g)
    return dg.Definitions(assets=[*g.assets, site], asset_checks=list(g.checks),
                          jobs=[*g.jobs(), site_job, celery_trials_job(g)],
                          schedules=[x for x in automation if isinstance(x, dg.ScheduleDefinition)],
                          sensors=[x for x in automation if isinstance(x, dg.SensorDefinition)])


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
            dg.Definitions.validate_loadable(dg.Definitions.merge(suite_defs(g), dg.Definitions(resources={
                "home": EvalsuiteHome(), "model_endpoint": ModelEndpoint()})))
        except Exception as exc:  # noqa: BLE001 - any failure of one spec must leave the others loadable
            invalid.append(InvalidSpec(path, _one_line(path, exc)))
            continue
        name = g.spec.name
        if name == INVALID_GROUP:
            reserved = f"{path}: name: suite name {name} is reserved for specs that fail to load"
            invalid.append(InvalidSpec(path, reserved))
        elif name in taken:
            invalid.append(InvalidSpec(path, f"{path}: name: suite name {name} is already used by {taken[name]}"))
        else:
            taken[name] = path
            graphs.append(g)
    for bad in invalid:
        log.warning("suite spec not loaded: %s", bad.error)
    return graphs, invalid


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


def specs_defs(spec_paths: Iterable[str | Path]) -> dg.Definitions:
    """The Definitions of these specs: each usable one's suite, an invalid-spec asset for each of the others."""
    graphs, invalid = load_suites(spec_paths)
    return dg.Definitions.merge(*(suite_defs(g) for g in graphs), dg.Definitions(assets=invalid_spec_assets(invalid)))
