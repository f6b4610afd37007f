"""Price tables: what a model's tokens cost per million, as a provider lists it, and the exact cost of tokens.

The pinned table is `prices.yaml` beside this module; EVALSUITE_PRICES names another. Scorecards price stored
traces with it (evalsuite.scoring.cost), and a trial's cost limit prices its calls as they are made.
"""
from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evalsuite.core.hashing import file_sha256
from evalsuite.core.io import YamlModelError, load_yaml_model

PRICES_ENV = "EVALSUITE_PRICES"
PINNED = Path(__file__).with_name("prices.yaml")
MILLION = Decimal(1_000_000)


class PriceError(YamlModelError):
    """A price table that cannot be used; one line naming the file and field."""


class Price(BaseModel):
    """A model's price per million tokens, as the provider lists it."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: Decimal = Field(ge=0)
    output_per_mtok: Decimal = Field(ge=0)


class PriceTable(BaseModel):
    """Prices per model name (the `model` of an agent config, as sent to the endpoint)."""

    model_config = ConfigDict(extra="forbid")

    currency: str = Field(pattern=r"^[A-Z]{3}$")
    as_of: dt.date
    source: str
    models: dict[str, Price]


class PricedTable(BaseModel):
    """A loaded table with where it came from: a scorecard names the prices it used."""

    path: str
    sha256: str
    table: PriceTable


def load_prices(path: str | Path | None = None) -> PricedTable:
    """The price table at path, else EVALSUITE_PRICES, else the pinned one."""
    path = Path(path or os.environ.get(PRICES_ENV) or PINNED)
    table = load_yaml_model(path, PriceTable, PriceError)
    return PricedTable(path=str(path), sha256=file_sha256(path), table=table)


def price(tokens: dict[str, tuple[int, int]], table: PriceTable) -> tuple[Decimal, list[str]]:
    """The exact cost of these tokens, and the models the table has no price for (their tokens are not counted)."""
    total, unpriced = Decimal(0), []
    for model, (tin, tout) in sorted(tokens.items()):
        p = table.models.get(model)
        if p is None:
            unpriced.append(model)
            continue
        total += (tin * p.input_per_mtok + tout * p.output_per_mtok) / MILLION
    return total, unpriced


def known_cost(tokens: dict[str, tuple[int, int]], table: PriceTable) -> Decimal | None:
    """The exact cost of these tokens, or None when a model among them has no price (never a made-up zero)."""
    total, unpriced = price(tokens, table)
    return None if unpriced else total
