"""The code location: Dagster loads the defs folder beside this module and merges what it finds.

defs/suites/<name>/defs.yaml   one SuiteComponent per bundled suite (suite/component.py)
defs/listed_suites/defs.yaml   the suites of the spec files EVALSUITE_SUITES names, when set
defs/shared.py                 resources, executor and the automation sensor every suite shares

`build_defs` gives the same Definitions for suite graphs built in Python, on a home folder of one's choosing
(the tests, benchmarks and `make demo`).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from evalsuite_dagster.defs.shared import shared_defs
from evalsuite_dagster.suite.graph import SuiteGraph
from evalsuite_dagster.suite.loading import InvalidSpec, invalid_spec_assets, suite_defs

LOCATION = "evalsuite_dagster.definitions"  # the location name workspace.yaml gives: group pages live under it


@dg.definitions
def defs() -> dg.Definitions:
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)


def build_defs(graphs: Sequence[SuiteGraph], home: str | Path | None = None,
               invalid: Sequence[InvalidSpec] = ()) -> dg.Definitions:
    """Definitions for these suites (and an asset for each unusable spec); `home` overrides EVALSUITE_HOME."""
    return dg.Definitions.merge(*(suite_defs(g) for g in graphs), dg.Definitions(assets=invalid_spec_assets(invalid)),
                                shared_defs(home))


def lineage_path(group: str) -> str:
    """A group's own graph in the UI; /asset-groups/<group>/lineage without the location opens the global lineage."""
    return f"/locations/{LOCATION}/asset-groups/{group}/lineage"
