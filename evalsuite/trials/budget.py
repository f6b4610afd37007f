"""What one trial may still spend: its limits (core.identity.TrialLimits) against the model calls it has made.

Checked before every model request, so a trial stops at the first request past a limit; the wall-time limit is
the trial engine's (evalsuite.trials.engine), which cancels the agent when its time is up.
"""
from __future__ import annotations

from decimal import Decimal

from evalsuite.core.identity import TrialLimits
from evalsuite.core.prices import PriceTable, known_cost
from evalsuite.core.records import Usage


def over_limit(usage: Usage, limits: TrialLimits | None, prices: PriceTable | None) -> str | None:
    """Which limit the calls so far have reached (as a line for the trial record), or None: the next call may go."""
    if limits is None:
        return None
    calls, tokens = len(usage.model_calls), usage.tokens_in + usage.tokens_out
    if limits.model_calls is not None and calls >= limits.model_calls:
        return f"model calls: {calls} of {limits.model_calls}"
    if limits.tokens is not None and tokens >= limits.tokens:
        return f"tokens: {tokens:,} of {limits.tokens:,}"
    if limits.cost is not None:
        if prices is None:
            raise ValueError("a cost limit needs a price table")
        cost = known_cost(usage.by_model(), prices)
        if cost is None:
            raise ValueError(f"a cost limit needs a price for every model used: {sorted(usage.by_model())}")
        if cost >= Decimal(str(limits.cost)):
            return f"cost: {cost:f} of {Decimal(str(limits.cost)):f} {prices.currency}"
    return None
