"""Issue 25: person names (and spelled-out e-mails, lower-case IBANs) in declared free-text notes of the bundled AP
suite are scrubbed, found by the source scan and the residual check, and what the notes' checks depend on stays."""
from __future__ import annotations

import pandas as pd
import pytest
from suite_support import DEMO_KEY, ROOT, SUITE

from evalsuite.core.pii import find_in_text
from evalsuite.deid.residual import residual_check
from evalsuite.deid.rules import load_rules
from evalsuite.deid.transform import deidentify
from evalsuite.sourcing.pii_scan import scan_column
from evalsuite.sourcing.snapshot import read_sources
from evalsuite.sourcing.spec import load_spec

NAMES = ["B. Ortiz", "K. Lamb", "Okonkwo-Bright, Marguerite", "Marguerite Okonkwo-Bright",
         "marguerite okonkwo-bright", "Dr. Hannah Schmidt", "Ms. Okonkwo-Bright", "Siobhan O'Connor",
         "Maria J. Garcia", "Pieter de Vries"]
SPELLED = ["zed dot quill at protonmail dot example", "zed [at] protonmail [dot] example"]
IBANS = ["gb82 west 1234 5698 7654 32", "de89 3704 0044 0532 0130 00"]


@pytest.fixture(scope="module")
def ap():
    spec = load_spec(ROOT / "suites" / f"{SUITE}.yaml")
    return read_sources(spec), load_rules(spec.resolve(spec.deid))


def _planted(tables: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """40 notes of the exception queue, each naming someone (and some an e-mail or IBAN) next to the invoice id
    and the amount a check of the note depends on."""
    queue = tables["exception_queue"].copy()
    planted = []
    for i, row in enumerate(queue.index[:40]):
        who = NAMES[i % len(NAMES)]
        extra = [SPELLED[i % 2], IBANS[i % 2], ""][i % 3]
        queue.loc[row, "note"] = f"Called {who} about {queue.loc[row, 'invoice_id']} (32849.25 EUR), Berlin office. " \
                                 f"Kelley Inc agreed in March. {'Send it to ' + extra if extra else ''}".strip()
        planted += [who] + ([extra] if extra else [])
    return {**tables, "exception_queue": queue}, planted


def test_names_spelled_emails_and_lower_case_ibans_in_notes_are_scrubbed_and_the_ids_and_amounts_stay(ap):
    tables, rules = ap
    planted_tables, planted = _planted(tables)
    out = deidentify(planted_tables, rules, key=DEMO_KEY).tables
    notes = out["exception_queue"]["note"][:40]
    leaked = [value for value in planted if any(value.lower() in note.lower() for note in notes)]
    assert leaked == [], f"{len(leaked)} planted values survive: {sorted(set(leaked))}"
    for note, invoice in zip(notes, planted_tables["exception_queue"]["invoice_id"][:40]):
        assert invoice in note and "32849.25 EUR" in note and "Berlin office" in note and "Kelley Inc" in note
    stand_in = dict(zip(planted_tables["purchase_orders"]["buyer"], out["purchase_orders"]["buyer"]))
    for i, note in enumerate(notes):  # a buyer's name becomes the buyer's stand-in, any other name [NAME]
        who = NAMES[i % len(NAMES)]
        assert f"Called {stand_in[who] if who in stand_in else '[NAME]'} about" in note, note
    assert residual_check(planted_tables, out, rules).passed


def test_the_residual_check_reports_what_the_scrub_would_have_removed(ap):
    tables, rules = ap
    out = deidentify(tables, rules, key=DEMO_KEY).tables
    assert residual_check(tables, out, rules).passed  # surrogates named in notes are ours, not leaks
    leaked = {name: df.copy() for name, df in out.items()}
    leaked["exception_queue"].loc[0, "note"] = "Called Okonkwo-Bright, Marguerite about it."
    leaked["exception_queue"].loc[1, "note"] = f"mail {SPELLED[0]}"
    leaked["exception_queue"].loc[2, "note"] = f"refund to {IBANS[0]}"
    assert residual_check(tables, leaked, rules).counts == {"name": 1, "email": 1, "iban": 1}


def test_the_bundled_buyer_names_are_found_by_the_scan_and_released_only_as_surrogates(ap):
    tables, rules = ap
    buyers = tables["purchase_orders"]["buyer"]
    assert {f.detector: f.count for f in scan_column("purchase_orders", "buyer", buyers)} == {"person_name": 63}
    out = deidentify(tables, rules, key=DEMO_KEY).tables
    released = pd.concat([df.astype(str).stack() for df in out.values()])
    assert not released.str.contains("Ortiz|K. Lamb", regex=True).any()
    assert out["purchase_orders"]["buyer"].dropna().nunique() == 2  # still two buyers, each with one stand-in


@pytest.mark.parametrize("text, kind", [
    ("Okonkwo-Bright, Marguerite", "name"), ("b. ortiz", None), ("B. Ortiz", "name"), ("K. Lamb", "name"),
    ("zed dot quill at protonmail dot example", "email"), ("gb82 west 1234 5698 7654 32", "iban"),
    ("Hayes, Johnson and Shannon", None), ("Gould-Foster, Berlin", None), ("we may price it in March", None),
    ("priced at 12.50 EUR", None), ("look at it. Then call", None), ("hydraulic hose", None),
])
def test_one_detector_module_for_free_text(text, kind):
    assert [k for *_, k in find_in_text(f"Note: {text}.")] == ([kind] if kind else [])
