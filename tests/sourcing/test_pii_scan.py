"""The personal-data scan: each detector finds what it is for (checksums included) and leaves look-alikes alone."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalsuite.core.pii import card_valid, iban_valid
from evalsuite.sourcing import pii_scan
from evalsuite.sourcing.pii_scan import cards_valid, mask, scan_column
from evalsuite.sourcing.snapshot import write_snapshot

# Business values that look like nothing personal: ids, invoice numbers, amounts, dates, codes, statuses.
NEAR_MISSES = [
    "INV-55100", "INV-2024-000123", "1012-645", "PO-7000", "GR-7000-1", "CASE-9100", "#W2611340",
    "16728.19", "32849.25", "1,234,567.89", "1 234 567", "-4403.07", "0.64", "batch 7/12 total 16492.19",
    "paid 3502.74 EUR",
    "2024-01-15", "2025-03-17T07:30:00", "2025-03-17 07:30", "15/01/2024", "03.17.2025",
    "US", "EUR", "GBP", "DE", "USD 1200", "on_hold", "price_variance", "approval log and posted invoice",
    "6469567736", "357962501027", '["6469567736", "8426249116"]', "8310926033",
    "INV-55100 blocked: price variance on line 1", "INV-55101 held for price variance; variance 11.68 EUR per unit.",
    "Net 30 days, 3-way match on line 2", "Suite 991", "hydraulic hose", "Gould-Foster", "Kelley Inc",
    "Smith, Johnson and Williams", "Water Bottle", "Office Chair",
    "GB82WEST12345698765433",  # an IBAN with its check digits wrong
    "DE8937040044053201300",  # one digit short of a German IBAN
    "AB12CDEF3456GHIJ",  # an id shaped like an IBAN of no country
    "4111 1111 1111 1112",  # a Visa-shaped number failing Luhn
    "9111 1111 1111 1113",  # Luhn-valid, but no issuer starts with 9
    "price@10", "user@localhost",
]


def detectors(values, column="c") -> dict[str, int]:
    return {f.detector: f.count for f in scan_column("t", column, pd.Series(values, dtype=object))}


def test_no_detector_fires_on_business_values_that_only_look_like_personal_data():
    assert detectors(NEAR_MISSES) == {}
    for value in NEAR_MISSES:  # nor alone, where one value is the whole column
        assert detectors([value]) == {}, value


@pytest.mark.parametrize("value, detector", [
    ("jane.doe@acme-corp.com", "email"),
    ("Reach me at j.o'neil+ap@corp.co.uk please", "email"),
    ("+44 20 7946 0958", "phone"),
    ("(415) 555-2671", "phone"),
    ("+49 30 12345678", "phone"),
    ("Called him at 212-555-0199 about it", "phone"),
    ("GB82 WEST 1234 5698 7654 32", "iban"),
    ("DE89370400440532013000", "iban"),
    ("pay to FR1420041010050500013M02606 by friday", "iban"),
    ("4111 1111 1111 1111", "card"),
    ("3782 822463 10005", "card"),
    ("card 5555-5555-5555-4444 on file", "card"),
    ("986 Sunset Drive", "postal_address"),
    ("12 Main St, Springfield", "postal_address"),
    ("Hauptstraße 5", "postal_address"),
    ("12 rue de la Paix", "postal_address"),
])
def test_each_detector_finds_one_value_among_ordinary_ones(value, detector):
    found = detectors([*NEAR_MISSES, value, value])
    assert found == {detector: 2}  # rows, not distinct values


@pytest.mark.parametrize("value", [
    "pay GB82WEST12345698765432 EUR 100 by friday",  # an IBAN in one run, a currency code after it
    "BE68 5390 0754 7034 PAID",  # printed in groups of four, ending on a whole group, a word after it
])
def test_an_iban_followed_by_another_word_is_found(value):
    """The IBAN is cut at its country's registered length, so the word after it no longer spoils its check."""
    assert detectors([*NEAR_MISSES, value]) == {"iban": 1}


def test_an_address_whose_domain_is_not_ascii_is_an_email():
    assert detectors(["jose@müller.de", "ann@exämple.com"]) == {"email": 2}


def test_checksums_decide_ibans_and_cards():
    assert iban_valid("GB82WEST12345698765432") and iban_valid("GB82 WEST 1234 5698 7654 32")
    assert not iban_valid("GB82WEST12345698765433") and not iban_valid("XX82WEST12345698765432")
    assert card_valid("4111111111111111") and card_valid("378282246310005") and card_valid("6011111111111117")
    assert not card_valid("4111111111111112")  # Luhn
    assert not card_valid("0000000000000000")  # Luhn-valid, one repeated digit, no issuer
    assert not card_valid("41111111111111")  # Visa prefix, Luhn-valid length 14: not a Visa length
    bare = ["4111111111111111", "4111111111111112", "378282246310005", "6011111111111117", "9111111111111113"]
    assert cards_valid(pa.array(bare, pa.large_string())).tolist() == [card_valid(b) for b in bare]


def test_bare_digit_runs_count_as_cards_only_when_most_of_the_column_are():
    rng = np.random.default_rng(7)
    ids = [str(x) for x in rng.integers(4 * 10**15, 5 * 10**15, 2000)]  # Visa-prefixed ids: ~10% pass Luhn by chance
    assert sum(card_valid(i) for i in ids) > 100
    assert detectors(ids) == {}
    cards = [i for i in ids if card_valid(i)]
    assert detectors(cards + ids[:10]) == {"card": len(cards) + sum(card_valid(i) for i in ids[:10])}


def test_person_names_are_judged_by_column():
    names = ["Roberto Davis", "Lisa Crawford", "Dr. Anna Schmidt", "Jean-Pierre Dubois", "Maria J. Garcia",
             "Ahmed Khan"]
    assert detectors(names) == {"person_name": 6}
    companies = ["Gould-Foster", "Kelley Inc", "Smith, Johnson and Williams", "Lisa Crawford", "Acme Industrial LLC"]
    assert detectors(companies) == {}  # one name among company names is below the column share
    assert detectors(["Maria", "John", "Lisa"]) == {}  # single-word name columns are not detected (documented)


def test_examples_are_masked_and_no_raw_value_reaches_the_report():
    values = ["jane.doe@acme-corp.com", "GB82 WEST 1234 5698 7654 32", "+44 20 7946 0958", "986 Sunset Drive"]
    findings = pii_scan.scan_tables({"contacts": pd.DataFrame({"v": values})})
    assert {f.detector: f.examples for f in findings} == {
        "email": ["j***@a***.com"], "iban": ["GB***32"], "phone": ["+***58"], "postal_address": ["9*** S*** D***"]}
    dumped = json.dumps([f.model_dump() for f in findings])
    assert not any(v in dumped for v in values)
    assert mask("Roberto Davis", "person_name") == "R*** D***" and mask("12345", "card") == "***"


def test_floats_booleans_and_dates_are_not_scanned_and_integers_are():
    table = pd.DataFrame({"amount": [4111111111111111.0], "ok": [True], "on": pd.to_datetime(["2024-01-15"]),
                          "card_no": [4111111111111111], "email": ["jane@acme.com"]})
    found = [(f.column, f.detector) for f in pii_scan.scan_tables({"t": table})]
    assert found == [("card_no", "card"), ("email", "email")]


def test_a_snapshot_scan_is_recorded_reused_and_redone_when_the_snapshot_changes(tmp_path):
    tables = {"vendors": pd.DataFrame({"vendor_id": ["V-1", "V-2"], "email": ["a.b@acme.com", None],
                                       "total": [1.5, 2.5]})}
    write_snapshot(tables, tmp_path / "seed")
    record = tmp_path / "pii_scan.json"
    report = pii_scan.scan_on_record(tmp_path / "seed", record, declared=set())
    assert report.columns == ["vendors.vendor_id", "vendors.email"] and report.undeclared == ["vendors.email"]
    assert [f.line() for f in report.blocking()] == ["vendors.email: 1 email value"]
    again = pii_scan.scan_on_record(tmp_path / "seed", record, declared={"vendors.email"})
    assert again.undeclared == [] and again.findings == report.findings
    on_disk = json.loads(record.read_text())
    assert on_disk["declared"] == ["vendors.email"] and on_disk["sha256"] == report.sha256
    tables["vendors"].loc[1, "email"] = "c.d@acme.com"
    write_snapshot(tables, tmp_path / "seed")
    assert pii_scan.scan_on_record(tmp_path / "seed", record, declared=set()).findings[0].count == 2


@pytest.mark.parametrize("value, detector", [("jane.doe@acme-corp.com", "email"), ("+44 20 7946 0958", "phone"),
                                             ("DE89370400440532013000", "iban"), ("4111 1111 1111 1111", "card"),
                                             ("986 Sunset Drive", "postal_address")])
def test_a_column_of_ids_and_amounts_has_no_finding_until_one_value_holds_one(value, detector):
    ordinary = [f"PAY-B{i:07d}" for i in range(3000)] + [f"{i}.{i % 100:02d}" for i in range(3000)]
    assert detectors(ordinary) == {}
    assert detectors([*ordinary, value]) == {detector: 1}
