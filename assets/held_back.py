"""A build step whose input a gate blocked: not run, and said so on every asset the gate holds back.

Dagster fails a run whose blocking check fails with ERROR, and its UI then shows every asset that run
planned but did not materialize as "Failed" (dagster-io/dagster#28789), though none of them ran. So the
gates are checks that report ERROR without failing the run, and each stage refuses its own input (the
library's `require`): the refusing step yields nothing, Dagster skips every step below it, and an
observation on each asset held back names the gate and its reason. The run is tagged with the gate.
"""
from __future__ import annotations

from collections.abc import Iterator

import dagster as dg

from evalsuite.pipeline.stage import GateError, Stage

NOT_RUN_TAG = "evalsuite/not_run"


def upstream_block(stage: Stage, exc: GateError) -> bool:
    """A gate that guards this stage's input (not one of its own gates, whose failure is this step's)."""
    return exc.gate not in {g.name for g in stage.gates}


def held_back(context: dg.AssetExecutionContext, keys: list[dg.AssetKey], exc: GateError) -> Iterator:
    """The observations saying `keys` were not run because of `exc`; tags the run with the gate."""
    reason = str(exc)  # "gate <name> blocked: <reason>"
    context.log.warning(f"not run: {', '.join(k.to_user_string() for k in keys)}: {reason}")
    context.instance.add_run_tags(context.run.run_id, {NOT_RUN_TAG: exc.gate})
    for key in keys:
        yield dg.AssetObservation(asset_key=key, description=f"Not run: {reason}",
                                  metadata={"not_run": reason, "gate": exc.gate, "gate_reason": exc.reason})


def planned_below(context: dg.AssetExecutionContext, key: dg.AssetKey) -> list[dg.AssetKey]:
    """`key` and every asset below it that this run was to materialize, in build order."""
    layer = context.job_def.asset_layer
    below = dg.AssetSelection.assets(key).downstream().resolve(layer.asset_graph)
    selected = context.run.asset_selection or layer.selected_asset_keys  # empty: the whole job
    return [k for k in layer.asset_graph.toposorted_asset_keys if k in below and k in selected]
