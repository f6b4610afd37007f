"""A quality failure shows up to five of the offending values, masked in the columns declared personal, and the
source_quality gate's one line carries them."""
from __future__ import annotations

import pandas as pd
import pytest
from suite_support import DEMO_KEY, SUITE, copy_suite, rewrite_csv

from evalsuite.pipeline import driver
from evalsuite.pipeline.stage import GateError
from evalsuite.sourcing.quality import TableExpectations, check_tables

CURRENCIES = TableExpectations(primary_key=["invoice_id"], value_sets={"currency": ["EUR", "USD"]})


def test_a_failure_shows_at_most_five_distinct_offending_values():
    bad = ["XA1", "XB2", "XC3", "XD4", "XE5", "XF6", "XA1"]
    data = {"invoices": pd.DataFrame({"invoice_id": range(9), "currency": ["EUR", "USD", *bad]})}
    (failure,) = check_tables(data, {"invoices": CURRENCIES}).failures
    assert failure.unexpected_count == 7
    assert failure.unexpected_values == ["'XA1'", "'XB2'", "'XC3'", "'XD4'", "'XE5'"]
    assert failure.describe().endswith("7 of 9 rows unexpected, e.g. 'XA1', 'XB2', 'XC3', 'XD4', 'XE5'")


def test_duplicate_keys_show_the_key_and_values_of_personal_columns_are_masked():
    data = {"people": pd.DataFrame({"person_id": [7, 7, 8], "email": ["ann.lee@example.com", "bob@example.com", None],
                                    "pair": [1, 1, 2]})}
    expectations = {"people": TableExpectations(primary_key=["person_id"],
                                                value_sets={"email": ["nobody@example.com"]})}
    report = check_tables(data, expectations, personal={"people.email"})
    shown = {f.expectation_type: f.unexpected_values for f in report.failures}
    assert shown["expect_column_values_to_be_unique"] == ["'7'"]
    assert "example.com" not in report.model_dump_json() and len(shown["expect_column_values_to_be_in_set"]) == 2


def test_the_source_quality_gate_names_the_offending_values(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    spec = copy_suite(tmp_path / "suite")

    def odd_currency(rows):
        rows[0]["currency"], rows[1]["currency"] = "XXX", "ZZZ"

    rewrite_csv(spec.parent / SUITE / "source" / "vendor_master.csv", odd_currency)
    with pytest.raises(GateError) as blocked:
        driver.build(spec, tmp_path / "home")
    assert blocked.value.gate == "source_quality"
    assert "vendor_master.currency: 2 of" in blocked.value.reason and "e.g. 'XXX', 'ZZZ'" in blocked.value.reason
