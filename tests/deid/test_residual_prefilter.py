"""The residual scan's prefilters (RE2 over a whole column) never rule out a value the full scan would report."""
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from evalsuite.core.pii import ValueIndex, find_in_text, may_hold_hits

ORIGINALS = ["Roberto Davis", "browningjason@hamilton.com", "GB82WEST12345698765432", "VEN-0007", "B. Ortiz",
             "+44 20 7946 0958", "Okonkwo-Bright, Marguerite"]
# Texts each of which the full scan reports something in: every detector, and originals plain and disguised.
LEAKS = ["mail browningjason@hamilton.com today", "zed at proton dot me", "zed[at]proton(dot)me",
         "gb82 west 1234 5698 7654 32", "GB82WEST12345698765432", "card 4111 1111 1111 1111", "acct 12345678",
         "call +1 (415) 555-2671", "R o b e r t o  D a v i s", "davis, roberto", "Dr. Hannah Schmidt", "B.Ortiz",
         "B. Ortiz", "paid by maria garcia", "ask VEN-0007 again", "browningjason at hamilton dot com",
         "Okonkwo-Bright,\tMarguerite", "Hannah\x1cSchmidt", "rob at erto davis", "rob dot erto davis",
         "Hannah\x0bSchmidt", "Zoë Müller", "José Davis-Ortiz"]
# Pieces the fuzzed texts are made of: words the detectors and the index know, digits, and every separator.
PIECES = st.sampled_from(["Roberto", "roberto", "Davis", "DAVIS", "davis", "at", "dot", "AT", "@", "hamilton",
                          "browning", "jason", "com", "GB82", "gb", "82", "WEST", "1234", "5698", "7654", "32", "VEN",
                          "0007", "B", "Ortiz", "Dr", "Hannah", "Schmidt", "4111", "+44", "20", "7946", "0958", "(",
                          ")", "[", "]", ".", ",", "-", "_", " ", "  ", "\t", "\x1c", "\x0b", "\n", "é", "x", "7"])


def index() -> ValueIndex:
    out = ValueIndex(disguised=True)
    for value in ORIGINALS:
        out.add(value, "", "t.c")
    return out.freeze()


def ruled_out(texts: list[str]) -> tuple[list[str], list[str]]:
    """The texts the prefilters rule out that the full scan reports: (for patterns, for original values)."""
    arr, idx = pa.array(texts, pa.string()), index()
    hold, occur = may_hold_hits(arr), idx.may_occur_in(arr)
    return ([t for t, maybe in zip(texts, hold) if not maybe and find_in_text(t)],
            [t for t, maybe in zip(texts, occur) if not maybe and next(idx.finditer(t), None) is not None])


def test_every_known_leak_stays_a_candidate_while_plain_ids_amounts_and_dates_are_ruled_out():
    assert all(find_in_text(t) or next(index().finditer(t), None) for t in LEAKS)  # each one is a finding
    assert ruled_out(LEAKS) == ([], [])
    plain = ["PAY-B0000001", "49999.99", "INV-40000", "EUR", "paid", "2024-05-01T10:00"]
    arr = pa.array(plain + [None], pa.string())
    assert not may_hold_hits(arr)[[0, 1, 2, 3, 4, 6]].any()
    assert not index().may_occur_in(arr).any()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(PIECES, min_size=1, max_size=12).map("".join), min_size=1, max_size=20))
def test_what_the_full_scan_reports_is_never_ruled_out(texts):
    assert ruled_out(texts) == ([], [])


def test_a_column_arrow_cannot_hold_is_scanned_in_full():
    from evalsuite.deid.residual import residual_check
    from evalsuite.deid.rules import DeidRules

    notes = pd.DataFrame({"note": ["broken \ud800 text", "write to zed@proton.me", "PAY-0001"]}, dtype=object)
    report = residual_check({"notes": notes}, {"notes": notes}, DeidRules.model_validate({"tables": {}}))
    assert report.counts == {"email": 1} and [f.row for f in report.findings] == ["1"]
