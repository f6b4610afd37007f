"""Pricing tokens: exact decimals from the pinned table, unknown prices left unknown, a bad table named in one line."""
from decimal import Decimal

import pandas as pd
import pytest

from evalsuite.core.prices import PriceError, load_prices, price
from evalsuite.scoring.cost import agent_cost, money


def test_the_pinned_table_prices_tokens_exactly_per_million():
    table = load_prices().table
    cost, unpriced = price({"gpt-4o-mini": (1_234_567, 89_012)}, table)
    assert cost == Decimal("0.23859225") and unpriced == []  # 1234567 x 0.15 + 89012 x 0.60, per million


def test_a_model_without_a_price_leaves_the_cost_unknown_not_zero():
    prices = load_prices()
    frame = pd.DataFrame({"passed": [True, False], "usage": ['{"gpt-4o-mini": [1000, 10]}', '{"house-model": [5, 5]}'],
                          "model_calls": pd.array([1, 1], dtype="Int64")})
    cost = agent_cost(frame, prices)
    assert cost.cost is None and cost.cost_per_trial is None and cost.unpriced_models == ["house-model"]
    assert (cost.tokens_in, cost.tokens_out, cost.model_calls) == (1005, 15, 2)
    assert money(cost.cost, "USD") == "—"


def test_cost_per_success_divides_by_passed_trials_and_is_unknown_without_one():
    prices = load_prices()
    usage = '{"gpt-4o": [400000, 100000]}'  # 1.00 + 1.00 USD
    frame = pd.DataFrame({"passed": [True, False, False], "usage": [usage] * 3,
                          "model_calls": pd.array([2, 2, 2], dtype="Int64")})
    cost = agent_cost(frame, prices)
    assert ((cost.cost, cost.cost_per_trial, cost.cost_per_success)
            == (Decimal(6), Decimal("2.000000"), Decimal("6.000000")))
    none_passed = agent_cost(frame.assign(passed=False), prices)
    assert none_passed.cost == Decimal(6) and none_passed.cost_per_success is None


def test_an_agent_that_reports_no_usage_has_no_cost():
    cost = agent_cost(pd.DataFrame({"passed": [True], "usage": [None], "model_calls": pd.array([None], dtype="Int64")}),
                      load_prices())
    assert cost.trials_with_usage == 0 and cost.cost is None and cost.tokens_in == 0


def test_a_bad_price_table_is_refused_in_one_line_naming_file_and_field(tmp_path, monkeypatch):
    bad = tmp_path / "prices.yaml"
    bad.write_text('currency: USD\nas_of: 2026-11-01\nsource: x\n'
                   'models: {m: {input_per_mtok: "-1", output_per_mtok: "1"}}\n')
    monkeypatch.setenv("EVALSUITE_PRICES", str(bad))
    with pytest.raises(PriceError) as err:
        load_prices()
    assert str(err.value).startswith(f"{bad}: models.m.input_per_mtok:") and "\n" not in str(err.value)
