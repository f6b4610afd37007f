"""The bundled suites' code location, by module name: the Dagster project in the checkout's assets/ folder, which
workspace.yaml loads through evalsuite_dagster.project as a team's own project is loaded.

assets/bundled_suites/defs/<suite>/defs.yaml   one SuiteComponent per bundled suite (suite/component.py)
assets/bundled_suites/defs/listed_suites/      the suites of the spec files EVALSUITE_SUITES names, when set
assets/bundled_suites/defs/shared/             SharedResources: resources, executor and the automation sensor

`build_defs` gives the same Definitions for suite graphs built in Python, on a home folder of one's choosing
(the tests, benchmarks and `make demo`).
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from evalsuite_dagster.shared import shared_defs
from evalsuite_dagster.suite.graph import SuiteGraph
from evalsuite_dagster.suite.loading import InvalidSpec, invalid_spec_assets, suite_defs

LOCATION = "evalsuite_dagster.definitions"  # the location name workspace.yaml gives: group pages live under it


BUNDLED = Path(__file__).resolve().parent.parent / "assets"  # the checkout's project of the bundled suites


@dg.definitions
def defs() -> dg.Definitions:
    if not (BUNDLED / "pyproject.toml").is_file():
        raise FileNotFoundError(f"{BUNDLED}: the bundled suites' project is part of a checkout; a project of your "
                                "own loads through evalsuite_dagster.project (docs/own-process.md)")
    if str(BUNDLED) not in sys.path:
        sys.path.insert(0, str(BUNDLED))
    return dg.load_from_defs_folder(path_within_project=BUNDLED)


def build_defs(graphs: Sequence[SuiteGraph], home: str | Path | None = None,
               invalid: Sequence[InvalidSpec] = ()) -> dg.Definitions:
    """Definitions for these suites (and an asset for each unusable spec); `home` overrides EVALSUITE_HOME."""
    return dg.Definitions.merge(*(suite_defs(g) for g in graphs), dg.Definitions(assets=invalid_spec_assets(invalid)),
                                shared_defs(home))


def lineage_path(group: str) -> str:
    """A group's own graph in the UI; /asset-groups/<group>/lineage without the location opens the global lineage."""
    return f"/locations/{LOCATION}/asset-groups/{group}/lineage"
