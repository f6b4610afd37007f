"""Dagster code location: thin wiring of evalsuite library calls into assets, checks, sensors and schedules."""
import warnings

import dagster as dg

# observable_source_asset and MultiToSingleDimensionPartitionMapping are marked beta in Dagster 1.13;
# both are used deliberately (see suite/graph.py), so their warnings are noise in every run log.
warnings.filterwarnings("ignore", category=dg.BetaWarning)

# The components a team's own Dagster project names in its defs.yaml files (`type: evalsuite_dagster.SuiteComponent`).
from evalsuite_dagster.suite.component import ListedSuites, SharedResources, SuiteComponent  # noqa: E402

__all__ = ["ListedSuites", "SharedResources", "SuiteComponent"]
