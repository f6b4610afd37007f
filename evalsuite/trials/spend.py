"""What a run has spent on models, and its run-level cap: once reached, no new trial starts.

The cap counts the whole run folder (the records a resumed run found as well as its new ones), so a capped run
resumed under the same cap starts nothing; raise or drop the cap to finish it. Trials in flight when the cap is
reached finish and are recorded: a cap bounds what is started, not what is already being paid for.
"""
from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from evalsuite.core.prices import PriceTable, known_cost
from evalsuite.core.records import Usage
from evalsuite.trials.tracelog import TrialRecord


class RunCap(BaseModel):
    """A run's spending cap: model tokens (in + out) and cost in the price table's currency, over all its trials."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: int | None = Field(None, ge=1)
    cost: float | None = Field(None, gt=0)


class CapReached(BaseModel):
    """What run.json and the scorecard say of a run its cap stopped: which limit, what was spent, what did not run."""

    model_config = ConfigDict(extra="forbid")

    limit: str
    spent: str
    trials_not_run: int


class RunCapped(Exception):
    """The run's cap stopped it: the trials it ran are recorded, and `reached` says what did not run."""

    def __init__(self, reached: CapReached):
        super().__init__(f"run cap {reached.limit} reached ({reached.spent}); {reached.trials_not_run} trial(s) "
                         "not run: resume with a higher cap, or none, to finish")
        self.reached = reached


class Spend:
    """Tokens and cost of the trials recorded so far (the cost None once a model without a price was used)."""

    def __init__(self, prices: PriceTable | None, records: Iterable[TrialRecord] = ()):
        self.prices = prices
        self.tokens = 0
        self.trials = 0  # trials that reported usage
        self._by_model: dict[str, tuple[int, int]] = {}
        for r in records:
            self.add(r.usage)

    def add(self, usage: Usage | None) -> None:
        if usage is None:
            return
        self.trials += 1
        self.tokens += usage.tokens_in + usage.tokens_out
        for model, (i, o) in usage.by_model().items():
            a, b = self._by_model.get(model, (0, 0))
            self._by_model[model] = (a + i, b + o)

    @property
    def cost(self) -> Decimal | None:
        if self.prices is None:
            return None
        return known_cost(self._by_model, self.prices)

    def reached(self, cap: RunCap | None, in_flight: int = 0) -> str | None:
        """The cap limit this spend has reached, as a line ("tokens 50,000"), or None: another trial may start.

        The trials in flight count at the mean spend of the trials finished so far: they will be paid for
        whatever happens, so a cap that waited for them to land would be passed by a whole lane's worth."""
        if cap is None:
            return None
        share = in_flight / self.trials if self.trials else 0.0
        if cap.tokens is not None and self.tokens * (1 + share) >= cap.tokens:
            return f"tokens {cap.tokens:,}"
        if cap.cost is not None:
            cost = self.cost
            if cost is None:
                raise ValueError(f"a run cost cap needs a price for every model used: {sorted(self._by_model)}")
            if cost * (1 + Decimal(str(share))) >= Decimal(str(cap.cost)):
                return f"cost {cap.cost:g} {self.prices.currency}"
        return None

    def line(self) -> str:
        cost = self.cost
        money = "" if cost is None else f", {cost:.6f} {self.prices.currency}"
        return f"{self.tokens:,} tokens{money}"
