from datetime import date

import pandas as pd
import pytest

from evalsuite.sourcing.quality import QualityConfigError, TableExpectations, check_tables

EXPECTATIONS = {
    "vendors": TableExpectations(primary_key=["vendor_id"], required=["vendor_name"]),
    "invoices": TableExpectations.model_validate(
        {
            "primary_key": ["invoice_id"],
            "required": ["vendor_id", "amount", "currency"],
            "foreign_keys": {"vendor_id": "vendors.vendor_id"},
            "value_sets": {"currency": ["EUR", "USD", "GBP"], "status": ["open", "paid", "disputed"]},
            "ranges": {"amount": {"min": 0}, "issued": {"min": "2020-01-01", "max": "2030-12-31"}},
        }
    ),
    "lines": TableExpectations(
        primary_key=["invoice_id", "line_no"], foreign_keys={"invoice_id": "invoices.invoice_id"}
    ),
}


def tables() -> dict[str, pd.DataFrame]:
    vendors = pd.DataFrame(
        {"vendor_id": ["V-1", "V-2", "V-3"], "vendor_name": ["Northwind", "Contoso", "Fabrikam"]}
    )
    invoices = pd.DataFrame(
        {
            "invoice_id": [1, 2, 3, 4],
            "vendor_id": ["V-1", "V-1", "V-2", "V-3"],
            "amount": [120.5, 99.99, 4000.0, 15.25],
            "currency": ["EUR", "EUR", "USD", "GBP"],
            "status": ["open", "paid", None, "open"],
            "issued": pd.to_datetime(["2024-01-10", "2024-02-11", "2024-01-03", "2024-03-15"]),
        }
    )
    lines = pd.DataFrame({"invoice_id": [1, 1, 2, 3, 4], "line_no": [1, 2, 1, 1, 1], "sku": list("abcde")})
    return {"vendors": vendors, "invoices": invoices, "lines": lines}


def failures(report) -> set[tuple[str, str, str]]:
    return {(f.expectation_type, f.table, f.column) for f in report.failures}


def test_clean_tables_pass_and_keep_gx_statistics():
    report = check_tables(tables(), EXPECTATIONS)
    assert report.success, report.summary()
    assert report.failures == [] and all(r.exception is None for r in report.results)
    assert set(report.statistics) == {"vendors", "invoices", "lines"}
    assert report.statistics["invoices"]["unsuccessful_expectations"] == 0
    assert report.statistics["invoices"]["evaluated_expectations"] == len(
        [r for r in report.results if r.table == "invoices"]
    )
    kinds = {r.expectation_type for r in report.results}
    assert {"expect_compound_columns_to_be_unique", "expect_column_values_to_be_between"} <= kinds


def test_duplicate_key_fails_naming_table_and_column():
    data = tables()
    data["invoices"] = pd.concat([data["invoices"], data["invoices"].iloc[[3]]], ignore_index=True)
    report = check_tables(data, EXPECTATIONS)
    assert not report.success
    assert failures(report) == {("expect_column_values_to_be_unique", "invoices", "invoice_id")}
    (failure,) = report.failures
    assert failure.unexpected_count == 2 and failure.element_count == 5
    assert failure.describe().startswith("expect_column_values_to_be_unique on invoices.invoice_id: 2 of 5")


def test_duplicate_compound_key_fails():
    data = tables()
    data["lines"].loc[1, "line_no"] = 1
    report = check_tables(data, EXPECTATIONS)
    assert failures(report) == {("expect_compound_columns_to_be_unique", "lines", "invoice_id,line_no")}


def test_null_key_fails_naming_table_and_column():
    data = tables()
    data["vendors"].loc[2, "vendor_id"] = None
    report = check_tables(data, EXPECTATIONS)
    # V-3 vanishes from the vendors, so its invoice now dangles as well.
    assert failures(report) == {
        ("expect_column_values_to_not_be_null", "vendors", "vendor_id"),
        ("expect_column_values_to_be_in_set", "invoices", "vendor_id"),
    }


def test_dangling_foreign_key_in_a_personal_column_fails_without_reporting_the_value():
    data = tables()
    data["invoices"].loc[2, "vendor_id"] = "V-404"
    report = check_tables(data, EXPECTATIONS, personal={"invoices.vendor_id"})
    assert failures(report) == {("expect_column_values_to_be_in_set", "invoices", "vendor_id")}
    assert report.failures[0].unexpected_count == 1
    assert "V-404" not in report.model_dump_json()


def test_missing_required_column_fails_as_missing_not_as_gx_errors():
    data = tables()
    data["invoices"] = data["invoices"].drop(columns=["amount"])
    report = check_tables(data, EXPECTATIONS)
    assert failures(report) == {("expect_column_to_exist", "invoices", "amount")}
    assert all(r.exception is None for r in report.results)


def test_missing_referenced_column_fails_on_the_target_table():
    data = tables()
    data["vendors"] = data["vendors"].rename(columns={"vendor_id": "id"})
    expectations = {"invoices": EXPECTATIONS["invoices"]}
    report = check_tables(data, expectations)
    assert failures(report) == {("expect_column_to_exist", "vendors", "vendor_id")}


def test_value_outside_its_set_fails_naming_table_and_column():
    data = tables()
    data["invoices"].loc[0, "currency"] = "XXX"
    report = check_tables(data, EXPECTATIONS)
    assert failures(report) == {("expect_column_values_to_be_in_set", "invoices", "currency")}
    assert "invoices.currency" in report.summary()[0]


def test_value_outside_its_range_fails():
    data = tables()
    data["invoices"].loc[1, "amount"] = -5.0
    data["invoices"].loc[2, "issued"] = pd.Timestamp(date(2031, 1, 1))
    report = check_tables(data, EXPECTATIONS)
    assert failures(report) == {
        ("expect_column_values_to_be_between", "invoices", "amount"),
        ("expect_column_values_to_be_between", "invoices", "issued"),
    }


def test_expectations_for_absent_tables_are_a_config_error():
    with pytest.raises(QualityConfigError, match="vendors"):
        check_tables({"invoices": tables()["invoices"]}, {"invoices": EXPECTATIONS["invoices"]})
