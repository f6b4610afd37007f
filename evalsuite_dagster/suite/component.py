"""The suite as a Dagster component: each YAML instance (defs/suites/<name>/defs.yaml) names one suite spec and
becomes that suite's asset graph, checks, jobs, schedule and sensors.

EVALSUITE_SUITES, when set, chooses the suites instead (`make ui` on a user's own
spec, the tests): the bundled instances then build nothing and the one
ListedSuites instance (defs/listed_suites/defs.yaml) builds a suite for each
spec file it names, in order, the first spec of a suite name winning.
"""
from __future__ import annotations

import dagster as dg

from evalsuite_dagster.suite.loading import listed_specs, specs_defs


class SuiteComponent(dg.Component, dg.Resolvable, dg.Model):
    """One bundled suite: the spec file, relative to the project root."""

    spec: str

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        if listed_specs() is not None:
            return dg.Definitions()
        return specs_defs([context.project_root / self.spec])


class ListedSuites(dg.Component, dg.Resolvable, dg.Model):
    """The suites of the spec files EVALSUITE_SUITES names; nothing when it is unset."""

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        return specs_defs(listed_specs() or [])
