"""Resources: where a suite's artifacts live (the project home folder)."""
from __future__ import annotations

from pathlib import Path

import dagster as dg

from evalsuite.core.home import home_dir
from evalsuite.pipeline.paths import Paths
from evalsuite.sourcing.spec import SuiteSpec


class EvalsuiteHome(dg.ConfigurableResource):
    """The home folder for seeds, tasks, releases and runs; EVALSUITE_HOME (default ./.evalsuite) when unset."""

    home: str = ""

    def root(self) -> Path:
        return Path(self.home).resolve() if self.home else home_dir()

    def paths(self, spec: SuiteSpec) -> Paths:
        return Paths(spec, self.root())
