"""A build step that cannot run on its input: not run, and said so on every asset it holds back.

Dagster fails a run whose step fails, and its UI then shows every asset that run planned but did not
materialize as "Failed" (dagster-io/dagster#28789), though none of them ran; automation then requests
them again. Two refusals are not failures of the step: a gate that blocked the step's input (the gates
are checks that report ERROR without failing the run; each stage refuses its own input, the library's
`require`), and a de-identification key that is not set (the user's secret, which no retry brings). The
refusing step yields nothing, Dagster skips every step below it, and an observation on each asset held
back names the reason. The run is tagged with what held it back (the gate, or `deid_key`).
"""
from __future__ import annotations

from collections.abc import Iterator

import dagster as dg

from evalsuite.deid.keys import DeidKeyError
from evalsuite.pipeline.stage import GateError, Stage

NOT_RUN_TAG = "evalsuite/not_run"
KEY_MISSING = "deid_key"  # the tag value of a run held back for want of a de-identification key


def upstream_block(stage: Stage, exc: GateError) -> bool:
    """A gate that guards this stage's input (not one of its own gates, whose failure is this step's)."""
    return exc.gate not in {g.name for g in stage.gates}


def held_back(context: dg.AssetExecutionContext, keys: list[dg.AssetKey], exc: GateError) -> Iterator:
    """The observations saying `keys` were not run because the gate of `exc` blocked; tags the run with it."""
    yield from not_run(context, keys, str(exc), exc.gate, {"gate": exc.gate, "gate_reason": exc.reason})


def key_missing(context: dg.AssetExecutionContext, keys: list[dg.AssetKey], exc: DeidKeyError) -> Iterator:
    """The observations saying `keys` were not run because no de-identification key is set (the message names
    the variable, never a key)."""
    yield from not_run(context, keys, str(exc), KEY_MISSING, {})


def not_run(context: dg.AssetExecutionContext, keys: list[dg.AssetKey], reason: str, held_by: str,
            metadata: dict) -> Iterator:
    context.log.warning(f"not run: {', '.join(k.to_user_string() for k in keys)}: {reason}")
    context.instance.add_run_tags(context.run.run_id, {NOT_RUN_TAG: held_by})
    for key in keys:
        yield dg.AssetObservation(asset_key=key, description=f"Not run: {reason}",
                                  metadata={"not_run": reason, "held_by": held_by, **metadata})


def planned_below(context: dg.AssetExecutionContext, key: dg.AssetKey) -> list[dg.AssetKey]:
    """`key` and every asset below it that this run was to materialize, in build order."""
    layer = context.job_def.asset_layer
    below = dg.AssetSelection.assets(key).downstream().resolve(layer.asset_graph)
    selected = context.run.asset_selection or layer.selected_asset_keys  # empty: the whole job
    return [k for k in layer.asset_graph.toposorted_asset_keys if k in below and k in selected]
