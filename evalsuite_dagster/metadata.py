"""Library stage results to Dagster results: metadata values, data versions, gate failures."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg

from evalsuite.core.markdown import Markdown
from evalsuite.pipeline.stage import GateError, StageOutput


def metadata_value(value: Any) -> Any:
    if isinstance(value, Markdown):
        return dg.MetadataValue.md(str(value))
    if isinstance(value, Path):
        return dg.MetadataValue.path(str(value))
    if isinstance(value, (dict, list)):
        return dg.MetadataValue.json(value)
    return value


def to_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: metadata_value(v) for k, v in meta.items()}


def run_stage(fn: Callable[..., StageOutput], *args: Any) -> StageOutput:
    """Run a library stage; a gate that blocks inside it fails the step with the gate's name and reason."""
    try:
        return fn(*args)
    except GateError as exc:
        raise gate_failure(exc) from exc


def gate_failure(exc: GateError) -> dg.Failure:
    return dg.Failure(description=f"gate {exc.gate} blocked: {exc.reason}",
                      metadata={"gate": exc.gate, "reason": exc.reason}, allow_retries=False)


def materialized(out: StageOutput) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata=to_metadata(out.metadata), data_version=dg.DataVersion(out.data_version))
