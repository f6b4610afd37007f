import json
import re
from collections import Counter
from datetime import date

import pandas as pd
import pytest

from evalsuite.deid.keys import DeidKeyError, Keyed, load_key
from evalsuite.deid.residual import residual_check
from evalsuite.deid.rules import DeidError, DeidRules, load_rules
from evalsuite.deid.surrogates import Surrogates, faker_generator
from evalsuite.deid.text import redact_patterns
from evalsuite.deid.transform import deidentify

KEY = "test-key-0123456789abcdef"
OTHER_KEY = "another-key-0123456789abcdef"


def tables() -> dict[str, pd.DataFrame]:
    vendors = pd.DataFrame(
        {
            "vendor_id": ["V-1001", "V-1002", "V-1003"],
            "vendor_name": ["Northwind Traders", "Contoso Supplies", "Fabrikam Parts"],
            "contact_name": ["Alice Johnson", "Bob Okafor", "Chen Wei Ling"],
            "contact_email": ["alice.johnson@northwind.test", "bob@contoso.test", "chen@fabrikam.test"],
            "zip": ["94107", "10001", "60601"],
        }
    )
    invoices = pd.DataFrame(
        {
            "invoice_id": ["INV-1", "INV-2", "INV-3", "INV-4", "INV-5"],
            "vendor_id": ["V-1001", "V-1001", "V-1002", "V-1003", "V-1002"],
            "amount": [120.50, 99.99, 4000.00, 15.25, 310.00],
            "currency": ["EUR", "EUR", "USD", "GBP", "USD"],
            "status": ["open", "paid", "disputed", "open", "paid"],
            "issued": ["2024-01-10", "2024-02-11", "2024-01-03", "2024-03-15", "2024-01-20"],
            "note": [
                "Spoke to alice JOHNSON, she will resend.",
                None,
                "Escalated by Bob Okafor; call +1 (415) 555-0199 or bob@contoso.test",
                "Paid to DE89 3704 0044 0532 0130 00 on 2024-03-20",
                "Refer to account 12345678901; amount 310.00 agreed on 2024-01-21 10:30",
            ],
        }
    )
    customers = pd.DataFrame({"customer_id": [7, 8], "name": ["Alice Johnson", "Dana Scully"]})
    return {"vendors": vendors, "invoices": invoices, "customers": customers}


RULES = DeidRules.model_validate(
    {
        "tables": {
            "vendors": {
                "columns": {
                    "vendor_id": {"rule": "pseudonym", "prefix": "ven_", "length": 12},
                    "vendor_name": {"rule": "keep"},
                    "contact_name": {"rule": "surrogate", "kind": "name"},
                    "contact_email": {"rule": "surrogate", "kind": "email"},
                    "zip": {"rule": "generalise", "to": "prefix", "length": 3},
                }
            },
            "invoices": {
                "columns": {
                    "vendor_id": {"rule": "pseudonym", "prefix": "ven_", "length": 12},
                    "issued": {"rule": "date_shift", "entity_column": "vendor_id", "max_days": 20},
                },
                "free_text": ["note"],
            },
            "customers": {"columns": {"name": {"rule": "surrogate", "kind": "name"}}},
        }
    }
)


def run(key: str = KEY):
    return deidentify(tables(), RULES, key=key, today=date(2025, 6, 1))


def test_joins_resolve_after_deidentification():
    src, out = tables(), run().tables
    before = src["invoices"].merge(src["vendors"], on="vendor_id", validate="many_to_one")
    after = out["invoices"].merge(out["vendors"], on="vendor_id", validate="many_to_one")
    assert len(after) == len(before) == 5
    assert after["invoice_id"].tolist() == before["invoice_id"].tolist()
    assert after["vendor_name"].tolist() == before["vendor_name"].tolist()
    assert all(re.fullmatch(r"ven_[0-9a-f]{12}", v) for v in out["vendors"]["vendor_id"])
    assert not set(out["invoices"]["vendor_id"]) & set(src["invoices"]["vendor_id"])


def test_values_assertions_depend_on_are_untouched():
    src, out = tables(), run().tables
    for column in ("invoice_id", "amount", "currency", "status"):
        pd.testing.assert_series_equal(out["invoices"][column], src["invoices"][column])
    assert out["vendors"]["zip"].tolist() == ["941", "100", "606"]


def test_customer_name_in_another_tables_note_is_replaced():
    out = run().tables
    surrogate = out["vendors"].loc[0, "contact_name"]
    note = out["invoices"].loc[0, "note"]
    assert "alice" not in note.lower() and "johnson" not in note.lower()
    assert note == f"Spoke to {surrogate}, she will resend."
    assert out["invoices"].loc[2, "note"].startswith(f"Escalated by {out['vendors'].loc[1, 'contact_name']};")


def test_pattern_detectors_redact_contact_details_but_not_dates_or_amounts():
    notes = run().tables["invoices"]["note"]
    assert "[PHONE]" in notes[2] and "[EMAIL]" in notes[2]
    assert notes[3] == "Paid to [IBAN] on 2024-03-20"
    assert notes[4] == "Refer to account [ACCOUNT]; amount 310.00 agreed on 2024-01-21 10:30"
    assert pd.isna(notes[1])


@pytest.mark.parametrize("value, kind", [
    ("jane.doe@acme-corp.com", "email"), ("jose@müller.de", "email"), ("GB82 WEST 1234 5698 7654 32", "iban"),
    ("FR1420041010050500013M02606", "iban"), ("4111 1111 1111 1111", "card"), ("5555-5555-5555-4444", "card"),
    ("3782 822463 10005", "card"), ("+44 20 7946 0958", "phone"), ("(415) 555-2671", "phone"),
])
def test_what_the_source_scan_finds_in_a_note_the_scrub_replaces_and_the_residual_check_reports(value, kind):
    """One set of detectors: a value the source scan reports is never left in free text by de-identification
    (card numbers were: the scrub had no card detector), and the residual check names the same kind."""
    from evalsuite.sourcing.pii_scan import scan_column

    note = f"Customer wrote: {value} (see ticket)."
    assert [f.detector for f in scan_column("t", "note", pd.Series([note]))] == [kind]
    assert redact_patterns(note) == (f"Customer wrote: [{kind.upper()}] (see ticket).", Counter({kind: 1}))
    leaked = {name: df.copy() for name, df in run().tables.items()}
    leaked["invoices"].loc[1, "note"] = note
    assert residual_check(tables(), leaked, RULES).counts == {kind: 1}


def test_same_input_same_surrogate_across_tables_and_runs_and_not_across_keys():
    first, second, other = run().tables, run().tables, run(OTHER_KEY).tables
    alice_vendor = first["vendors"].loc[0, "contact_name"]
    assert first["customers"].loc[0, "name"] == alice_vendor != "Alice Johnson"
    for name in ("vendors", "invoices", "customers"):
        pd.testing.assert_frame_equal(first[name], second[name])
    assert other["vendors"].loc[0, "contact_name"] != alice_vendor
    assert other["vendors"].loc[0, "vendor_id"] != first["vendors"].loc[0, "vendor_id"]


def test_date_shift_preserves_order_per_entity_and_stays_in_range():
    src, out = tables()["invoices"], run().tables["invoices"]
    before = pd.to_datetime(src["issued"])
    after = pd.to_datetime(out["issued"])
    shift = (after - before).dt.days
    assert shift.abs().max() <= 20
    assert out["issued"].str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    for vendor, rows in src.groupby("vendor_id").groups.items():
        assert shift[rows].nunique() == 1, vendor
        assert before[rows].argsort().tolist() == after[rows].argsort().tolist()


def test_residual_check_passes_clean_output_and_catches_planted_leak_without_value():
    src = tables()
    result = run()
    assert residual_check(src, result.tables, RULES).passed

    leaked = {name: df.copy() for name, df in result.tables.items()}
    leaked["invoices"].loc[1, "note"] = "Forwarded to Chen Wei Ling"
    leaked["invoices"]["comment"] = ["", "", "mail chen@private.test", "", ""]
    report = residual_check(src, leaked, RULES)

    assert not report.passed
    assert report.counts == {"original_value": 1, "email": 1}
    places = {(f.table, f.column, f.row, f.kind, f.source) for f in report.findings}
    assert places == {
        ("invoices", "note", "1", "original_value", "vendors.contact_name"),
        ("invoices", "comment", "2", "email", None),
    }
    dumped = report.model_dump_json()
    assert "Chen Wei Ling" not in dumped and "chen@private.test" not in dumped


def test_missing_key_gives_clear_error(monkeypatch):
    monkeypatch.delenv("EVALSUITE_DEID_KEY", raising=False)
    with pytest.raises(DeidKeyError, match="key missing: set the environment variable EVALSUITE_DEID_KEY"):
        deidentify(tables(), RULES)
    with pytest.raises(DeidKeyError, match="too short"):
        deidentify(tables(), RULES, key="short")


def test_key_from_named_env_var_or_file_and_never_in_output(tmp_path, monkeypatch):
    rules = RULES.model_copy(update={"key_env": "MY_DEID_KEY"})
    assert load_key(rules, environ={"MY_DEID_KEY": KEY}) == KEY.encode()
    key_file = tmp_path / "deid.key"
    key_file.write_text(KEY + "\n")
    assert load_key(rules.model_copy(update={"key_file": key_file}), environ={}) == KEY.encode()

    monkeypatch.setenv("MY_DEID_KEY", KEY)
    result = deidentify(tables(), rules)
    assert KEY not in json.dumps(result.provenance())
    for df in result.tables.values():
        assert not df.astype(str).apply(lambda col: col.str.contains(KEY, regex=False)).any().any()


def test_provenance_records_rules_hash_method_date_and_counts():
    result = run()
    prov = result.provenance()
    assert prov["rule_set_sha256"] == RULES.sha256() and len(prov["rule_set_sha256"]) == 64
    assert prov["date"] == "2025-06-01" and "HMAC-SHA256" in prov["method"]
    note = next(c for c in result.counts if (c.table, c.column) == ("invoices", "note"))
    assert note.replacements == {"value": 2, "phone": 1, "email": 1, "iban": 1, "account": 1}
    vendor_ids = next(c for c in result.counts if (c.table, c.column) == ("invoices", "vendor_id"))
    assert (vendor_ids.rows, vendor_ids.nulls, vendor_ids.distinct) == (5, 0, 3)


def test_drop_removes_column_and_rules_must_match_tables():
    rules = DeidRules.model_validate({"tables": {"customers": {"columns": {"name": {"rule": "drop"}}}}})
    out = deidentify(tables(), rules, key=KEY).tables
    assert list(out["customers"].columns) == ["customer_id"]
    bad = DeidRules.model_validate({"tables": {"customers": {"columns": {"nmae": {"rule": "drop"}}}}})
    with pytest.raises(DeidError, match=r"customers.*\['nmae'\]"):
        deidentify(tables(), bad, key=KEY)


def test_load_rules_names_file_and_field(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("tables:\n  vendors:\n    columns:\n      zip: {rule: blur}\n")
    with pytest.raises(DeidError, match=r"rules\.yaml: tables\.vendors\.columns\.zip: "):
        load_rules(path)


def test_fast_faker_names_are_the_values_stock_faker_draws():
    from faker import Factory

    stock, fast = Factory.create("en_US"), faker_generator("en_US")
    for seed in range(200):
        stock.seed_instance(seed)
        fast.seed_instance(seed)
        drawn = [(g.name(), g.company(), g.user_name()) for g in (stock, fast)]
        assert drawn[0] == drawn[1]


def test_value_index_prefers_longest_whole_word_match_case_insensitively():
    from evalsuite.core.pii import ValueIndex

    index = ValueIndex()
    for value, new in [("Ann Lee", "A"), ("Ann Lee-Smith", "B"), ("+1 555 0100", "P"), ("Li", "short")]:
        index.add(value, new, "t.c")
    index.freeze()
    assert index.replace("ann lee-smith, ANN LEE and Annie Leeds") == ("B, A and Annie Leeds", 2)
    assert index.replace("call +1 555 0100 now; Li said") == ("call P now; Li said", 1)


def test_date_shift_keeps_the_dates_form_and_generalise_to_month():
    frame = pd.DataFrame(
        {
            "who": ["a", "a", None],
            "at": pd.to_datetime(["2024-01-31", "2024-02-01", "2024-05-05"]),
            "on": [date(2024, 1, 31), None, date(2024, 5, 5)],
            "born": ["1980-07-14", "1991-12-01", None],
        }
    )
    rules = DeidRules.model_validate(
        {
            "tables": {
                "t": {
                    "columns": {
                        "at": {"rule": "date_shift", "entity_column": "who"},
                        "on": {"rule": "date_shift", "entity_column": "who"},
                        "born": {"rule": "generalise", "to": "month"},
                    }
                }
            }
        }
    )
    out = deidentify({"t": frame}, rules, key=KEY).tables["t"]
    assert pd.api.types.is_datetime64_any_dtype(out["at"])
    assert out["at"][1] - out["at"][0] == pd.Timedelta(days=1)
    assert isinstance(out["on"][0], date) and pd.isna(out["on"][1])
    assert (out["on"][0] - date(2024, 1, 31)).days == (out["at"][0] - frame["at"][0]).days
    assert out["born"].tolist()[:2] == ["1980-07", "1991-12"] and pd.isna(out["born"][2])


def test_surrogate_never_equals_another_records_real_value():
    rule = RULES.tables["customers"].columns["name"]
    unlucky = Surrogates(Keyed(KEY.encode())).surrogate(rule, "Alice Johnson")  # what Alice would get
    frame = pd.DataFrame({"customer_id": [1, 2], "name": ["Alice Johnson", unlucky]})
    rules = DeidRules.model_validate({"tables": {"customers": {"columns": {"name": rule.model_dump()}}}})
    first = deidentify({"customers": frame}, rules, key=KEY).tables["customers"]
    again = deidentify({"customers": frame}, rules, key=KEY).tables["customers"]
    assert unlucky not in first["name"].tolist()
    assert first["name"].tolist() == again["name"].tolist()
    assert residual_check({"customers": frame}, {"customers": first}, rules).passed


def test_the_method_name_in_provenance_stays_as_first_published():
    """Provenance feeds every task record and so the release version: moving the code must not rename the method."""
    from evalsuite.deid.transform import METHOD

    assert METHOD.startswith("evalsuite.deid/1: HMAC-SHA256 keyed pseudonyms")


def test_every_surrogate_kind_a_rule_accepts_can_be_drawn():
    """deid.yaml's schema (SurrogateKind) and the draws (SURROGATE_KINDS) name the same kinds: a kind the schema
    accepted but nothing draws would fail mid-build instead of at the rules file."""
    from typing import get_args

    from evalsuite.deid.rules import SurrogateKind
    from evalsuite.deid.surrogates import SURROGATE_KINDS

    assert set(get_args(SurrogateKind)) == set(SURROGATE_KINDS)
