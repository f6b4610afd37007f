"""What every suite of the code location shares: the resources, the executor and the automation sensor.

Runs execute in one process each (in_process_executor): trials fan out inside
the harness, and a process per step would re-import the library for every step.
"""
from __future__ import annotations

from pathlib import Path

import dagster as dg

from evalsuite_dagster.resources import EvalsuiteHome, ModelEndpoint
from evalsuite_dagster.suite.automation import automation_sensor


def shared_defs(home: str | Path | None = None) -> dg.Definitions:
    """`home` overrides EVALSUITE_HOME (tests use a temporary folder)."""
    return dg.Definitions(
        sensors=[automation_sensor()],
        resources={"home": EvalsuiteHome(home=str(home) if home else ""),
                   "model_endpoint": ModelEndpoint.from_env()},  # openai agents' key and address, from EnvVars
        executor=dg.in_process_executor)

