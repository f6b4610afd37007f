"""The suite as a Dagster component: each YAML instance (a project's defs/<name>/defs.yaml, the bundled ones in
assets/bundled_suites/defs/) names one suite spec and becomes that suite's asset graph, checks, jobs, schedule and
sensors.

EVALSUITE_SUITES, when set, chooses the suites instead (`make ui` on a user's own
spec, the tests): the bundled instances then build nothing and the one
ListedSuites instance (listed_suites/defs.yaml) builds a suite for each
spec file it names, in order, the first spec of a suite name winning.

Two bundled instances whose specs carry one suite name: the instance of the
first folder (by name) builds the suite, the other an invalid-spec asset
naming both instance files, as a second listed spec of a taken name does.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import dagster as dg
import yaml

from evalsuite.sourcing.spec import SpecError, load_spec
from evalsuite_dagster.shared import shared_defs
from evalsuite_dagster.suite.loading import InvalidSpec, invalid_spec_assets, listed_specs, specs_defs

INSTANCE = "defs.yaml"


class SuiteComponent(dg.Component, dg.Resolvable, dg.Model):
    """One bundled suite: the spec file, relative to the project root."""

    spec: str

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        if listed_specs() is not None:
            return dg.Definitions()
        spec = context.project_root / self.spec
        here = context.path if context.path.is_dir() else context.path.parent
        name = _suite_name(spec)  # None: specs_defs turns the spec's own error into its invalid-spec asset
        taken = _taken_by_earlier_instance(here, context.project_root, name) if name else None
        if taken is None:
            return specs_defs([spec])
        error = f"{here / INSTANCE}: spec: suite name {name} of {spec} is already used by {taken / INSTANCE}"
        return dg.Definitions(assets=invalid_spec_assets([InvalidSpec(spec, error)]))


def _taken_by_earlier_instance(here: Path, root: Path, name: str) -> Path | None:
    """The folder of the first sibling instance, by folder name before this one, whose spec loads and has this
    suite name; None when there is none."""
    for folder in sorted(p for p in here.parent.iterdir() if p.name < here.name and (p / INSTANCE).is_file()):
        raw = yaml.safe_load((folder / INSTANCE).read_text()) or {}
        other = (raw.get("attributes") or {}).get("spec") if raw.get("type", "").endswith(".SuiteComponent") else None
        if other and _suite_name(root / other) == name:
            return folder
    return None


def _suite_name(spec: Path) -> str | None:
    """The spec's suite name, None when it does not load."""
    try:
        stat = spec.stat()
    except OSError:
        return None
    return _loaded_name(str(spec), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _loaded_name(spec: str, mtime_ns: int, size: int) -> str | None:
    """Each instance asks for the names of the specs of the instances before it: a spec is loaded once per process
    for that, until its file changes (mtime and size are part of the key)."""
    try:
        return load_spec(spec).name
    except SpecError:  # a spec that does not load takes no name: its own instance shows its error
        return None


class SharedResources(dg.Component, dg.Resolvable, dg.Model):
    """What every suite of a project shares (the home folder and model endpoint resources, the executor and the
    automation sensor); one instance per project, beside its SuiteComponent instances."""

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        return shared_defs()


class ListedSuites(dg.Component, dg.Resolvable, dg.Model):
    """The suites of the spec files EVALSUITE_SUITES names; nothing when it is unset."""

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        return specs_defs(listed_specs() or [])
