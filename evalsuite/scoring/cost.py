"""Cost: the tokens a trial's agent spent, priced per model from a price table, summed per agent beside pass^k.

Latency stays in the traces (per trial, per tool call, per model call) and summary.parquet, not in the
scorecard: a scorecard is recomputed identically from stored traces, and wall times never repeat.

Traces keep what was measured (tokens in and out and the latency of every model
call, the latency of every tool call and of the trial); prices are applied
here, when a scorecard is built, so a price change reprices stored traces
without rerunning them, and the scorecard names the table it used (its sha256).
The table (evalsuite.core.prices) is the pinned `evalsuite/core/prices.yaml`, or the file named by
EVALSUITE_PRICES. Money is Decimal throughout: prices per million tokens as
written in the table, sums exact, per-trial and per-success figures rounded
half-even to CENT_FRACTION of the currency.
"""
from __future__ import annotations

import json
from decimal import ROUND_HALF_EVEN, Decimal

import pandas as pd
from pydantic import BaseModel

from evalsuite.core.prices import PricedTable, price

CENT_FRACTION = Decimal("0.000001")  # per-trial costs of cheap models are fractions of a cent

class AgentCost(BaseModel):
    """One agent's spend over its trials. Costs are None when no trial reported usage (a baseline, an external
    program) or a model it used has no price (listed in unpriced_models): never a made-up zero."""

    trials: int
    trials_with_usage: int
    model_calls: int
    tokens_in: int
    tokens_out: int
    currency: str
    cost: Decimal | None
    cost_per_trial: Decimal | None
    successes: int  # passed trials
    cost_per_success: Decimal | None  # cost / passed trials; None also when none passed
    unpriced_models: list[str]


def usage_by_model(frame: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """(tokens in, tokens out) per model over a summary frame's `usage` column (JSON per trial, or missing)."""
    out: dict[str, tuple[int, int]] = {}
    for raw in frame.get("usage", pd.Series(dtype=object)).dropna():
        for model, (i, o) in json.loads(raw).items():
            a, b = out.get(model, (0, 0))
            out[model] = (a + int(i), b + int(o))
    return out


def _per(total: Decimal | None, n: int) -> Decimal | None:
    return None if total is None or n == 0 else (total / n).quantize(CENT_FRACTION, rounding=ROUND_HALF_EVEN)


def agent_cost(group: pd.DataFrame, prices: PricedTable) -> AgentCost:
    """An agent's cost from its rows of a summary frame (evalsuite.trials.tracelog.summary_frame)."""
    reported = group["usage"].notna() if "usage" in group else pd.Series(False, index=group.index)
    tokens = usage_by_model(group)
    total, unpriced = price(tokens, prices.table)
    cost = total if reported.any() and not unpriced else None
    successes = int(group["passed"].sum())
    calls = int(group.loc[reported, "model_calls"].sum()) if reported.any() else 0
    return AgentCost(
        trials=len(group), trials_with_usage=int(reported.sum()), model_calls=calls,
        tokens_in=sum(i for i, _ in tokens.values()), tokens_out=sum(o for _, o in tokens.values()),
        currency=prices.table.currency, cost=cost, cost_per_trial=_per(cost, len(group)), successes=successes,
        cost_per_success=_per(cost, successes), unpriced_models=unpriced)


def money(value: Decimal | None, currency: str) -> str:
    """A cost as a table cell: `0.004210 USD`, or `—` when it is not known."""
    return "—" if value is None else f"{value:f} {currency}"
