"""The personal-data scan: every source column checked for e-mails, phones, IBANs, cards, person names and addresses.

The scan runs on the seed snapshot whatever the rights manifest claims, so a
manifest that says `personal_data: false` cannot carry contact data into a
release unnoticed. Each column is scanned in full, never sampled, over its
distinct values (pyarrow value_counts): vectorized RE2 prefilters (pyarrow
compute) pick candidates, and only those are verified in Python (phonenumbers,
IBAN mod-97); Luhn and first-name checks run vectorized too. On one core, a
million-row column of distinct ids, amounts, dates, e-mails, names, addresses
or notes takes 1-3 s; verification costs about 15 µs per IBAN-shaped value and
50-220 µs per phone-shaped one (phonenumbers), so a million distinct IBANs take
about 15 s, a million distinct phone numbers about 50 s, and a million distinct
phone-shaped values that are not valid numbers about 3.5 minutes.

What counts as a hit, per detector (a column is reported for a detector when
the rule below holds; `count` is the number of rows whose value matched):

- email: an address `local@domain.tld` anywhere in the value; one is enough.
- phone: a number phonenumbers finds with Leniency.VALID for the international
  form (+…) or one of PHONE_REGIONS (neither spec nor manifest names a region,
  so a few common ones are tried), written with a + or separators between digit
  groups (a bare run of digits is an id, not a phone), not glued to an id
  (INV-2024-000123) and not an amount (16492.19); one is enough. Numbers that
  are not valid in their numbering plan (many Faker ones) are not found.
- iban: a country code with its registered IBAN length and a valid mod-97
  check; one is enough (a random string passes mod-97 1 time in 97).
- card: 13-19 digits with a card issuer's prefix and length, a valid Luhn check
  and not one repeated digit. Written in groups (4111 1111 1111 1111) one is
  enough; bare digit runs pass Luhn by chance 1 time in 10, so a column of bare
  runs is reported only when at least half of them are valid card numbers.
- person_name: whole values shaped "Firstname [M.] Lastname" (optionally with a
  title or suffix) whose first word is a first name of Faker's lists for
  NAME_LOCALES, or whole values that evalsuite.core.pii.names_in recognises as
  one name ("B. Ortiz", "Okonkwo-Bright, Marguerite", "dr. hannah schmidt").
  Names are judged per column: reported when at least half of the column's
  distinct values are such names. Names inside free text and single-word name
  columns are not reported here (the scrub of declared free text finds them).
- postal_address: a house number followed by capitalised words and a street
  type (12 Main Street, 986 Sunset Drive), a German-style street with a number
  (Hauptstraße 5) or a French one (12 rue de la Paix); one is enough.

Examples in the report are masked (j***@e***.com); no raw value is ever recorded. The patterns and checks are
the detectors of evalsuite.core.pii, which the de-identification scrub uses too; the column rules are this scan's.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from evalsuite.core import pii
from evalsuite.core.hashing import file_sha256, json_sha256
from evalsuite.core.io import write_json
from evalsuite.core.pii import (
    ADDRESS,
    CARD,
    CARD_ISSUERS,
    EMAIL,
    EMAIL_RE2,
    GROUPED_CARD,
    NAME,
    PHONE_REGIONS,
    STREET_TYPES,
    card_valid,
    first_names,
    ibans_in,
    personal_hits,
    phones_in,
)

DETECTORS = ("email", "phone", "iban", "card", "person_name", "postal_address")
MIN_NAME_SHARE = 0.5  # of a column's distinct values, for person_name
MIN_BARE_CARD_SHARE = 0.5  # of a column's bare digit runs of card length, for card (chance is 0.1)
EXAMPLES = 3

# Prefilters: RE2 patterns run by pyarrow over a column's distinct values, generous; every hit is verified in Python.
_PREFILTER = {
    "email": r"@",
    "phone": r"\+\d|\(\d+\)|\d[ \-/]+\d\d|\d\d\.\d{3,4}\.\d\d",  # a + or digit groups with separators
    "iban": r"[A-Z]{2}\d{2} ?[A-Z0-9]{4}",
    "card": r"(\d[ \-]?){13}",
    "person_name": r"^\s*[\pL'’.-]+(,? +[\pL'’.-]+){1,4}\s*$",  # two to five words of letters, names_in decides
    "postal_address": rf"\b({STREET_TYPES})\b|(straße|strasse|str\.|weg|gasse|platz|allee|ring|damm)\s+\d"
                      r"|(?i:\b(rue|avenue|boulevard|chemin|allée|impasse|place|quai)\b)",
}
# Whole values that are dates, times or amounts: never phones, and often every value of a big column.
_NOT_PHONE = (r"^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?)?(Z|[+\-]\d\d:?\d\d)?$"
              r"|^\d{1,2}[./\-]\d{1,2}[./\-]\d{2,4}( \d\d:\d\d(:\d\d)?)?$"
              r"|^-?[\d ,.]*\d[.,]\d{1,2}$|^-?\d{1,3}([ ,.]\d{3})+$")
_BARE_CARD = r"^\d{13,19}$"


class ColumnFinding(BaseModel):
    """One detector's hits in one column: how many rows, how many distinct values, masked examples."""

    model_config = ConfigDict(extra="forbid")

    table: str
    column: str
    detector: str
    count: int  # rows whose value matched
    distinct: int  # distinct matching values
    examples: list[str]  # masked

    @property
    def ref(self) -> str:
        return f"{self.table}.{self.column}"

    def line(self) -> str:
        return f"{self.ref}: {self.count} {self.detector} value{'s' if self.count != 1 else ''}"


class ScanReport(BaseModel):
    """pii_scan.json: the scan of one seed snapshot; `undeclared` names the findings no declaration covers."""

    model_config = ConfigDict(extra="forbid")

    sha256: str  # of the seed snapshot scanned
    scanner: str  # scanner_sha256(): a changed scanner or detector rescans
    phone_regions: list[str | None]
    columns: list[str]  # every column scanned, as table.column
    findings: list[ColumnFinding]
    declared: list[str] = []
    undeclared: list[str] = []

    def blocking(self) -> list[ColumnFinding]:
        undeclared = set(self.undeclared)
        return [f for f in self.findings if f.ref in undeclared]


# ---------------------------------------------------------------- verification

def cards_valid(bare: pa.Array) -> np.ndarray:
    """card_valid over many bare digit strings at once: Luhn and issuer checks on one digit matrix per length."""
    ok = np.zeros(len(bare), dtype=bool)
    lengths = pc.binary_length(bare).to_numpy(zero_copy_only=False)
    for n in np.flatnonzero(np.bincount(lengths)):
        rows = np.flatnonzero(lengths == n)
        part = pc.cast(bare.take(pa.array(rows, type=pa.int64())), pa.large_string())
        offsets = np.frombuffer(part.buffers()[1], dtype=np.int64)[part.offset:part.offset + len(part) + 1]
        raw = np.frombuffer(part.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        digits = (raw.astype(np.int32) - 48).reshape(-1, n)
        back = digits[:, ::-1]
        doubled = back[:, 1::2] * 2
        luhn = (back[:, 0::2].sum(1) + (doubled - 9 * (doubled > 9)).sum(1)) % 10 == 0
        issuer = np.zeros(len(rows), dtype=bool)
        for (low, high, width), allowed in CARD_ISSUERS:
            if n in allowed:
                prefix = digits[:, :width] @ (10 ** np.arange(width - 1, -1, -1))
                issuer |= (prefix >= low) & (prefix <= high)
        ok[rows] = luhn & issuer & (digits != digits[:, :1]).any(1)
    return ok


# ---------------------------------------------------------------- masking

def _mask_word(word: str) -> str:
    return word[:1] + "***" if word else word


def mask(value: str, detector: str) -> str:
    """A recognisable outline of a value without the value: j***@e***.com, GB***35, R*** D***, +***71."""
    if detector == "email":
        local, _, domain = value.partition("@")
        tld = domain.rsplit(".", 1)[-1]
        return f"{_mask_word(local)}@{_mask_word(domain)}.{tld}"
    if detector in ("person_name", "postal_address"):
        return " ".join(_mask_word(w) for w in value.split())
    if len(value) <= 6:
        return "***"
    return f"{value[:2]}***{value[-2:]}" if detector == "iban" else f"{value[:1]}***{value[-2:]}"


# ---------------------------------------------------------------- one column

class Distinct:
    """A column's distinct non-null values as text (pyarrow, for RE2 prefilters) and how many rows hold each."""

    def __init__(self, text: pa.Array | pa.ChunkedArray):
        counted = pc.value_counts(pc.drop_null(text))
        self.values: pa.Array = counted.field("values")
        self.counts: np.ndarray = counted.field("counts").to_numpy()

    def __len__(self) -> int:
        return len(self.values)

    def matching(self, pattern: str) -> np.ndarray:
        """Which distinct values contain a match of an RE2 pattern (a boolean mask)."""
        return pc.match_substring_regex(self.values, pattern).to_numpy(zero_copy_only=False)

    def where(self, pattern: str) -> np.ndarray:
        return np.flatnonzero(self.matching(pattern))

    def texts(self, idx: np.ndarray) -> list[str]:
        return self.values.take(pa.array(idx, type=pa.int64())).to_pylist()


Hits = tuple[np.ndarray, list[str]]  # indices of the matching distinct values, and the first few matches


def _verified(d: Distinct, idx: np.ndarray, find: Callable[[str], list[str]]) -> Hits:
    """The candidates `find` confirms (checksums, numbering plans: Python), with the first matches as examples."""
    keep: list[int] = []
    examples: list[str] = []
    for i, text in zip(idx, d.texts(idx)):
        if found := find(text):
            keep.append(int(i))
            examples += found[:1] if len(examples) < EXAMPLES else []
    return np.array(keep, dtype=np.int64), examples


def _emails(d: Distinct, regions) -> Hits:
    idx = d.where(EMAIL_RE2)  # the whole pattern in RE2: Python only picks the examples
    return idx, [(EMAIL.findall(t) or [t])[0] for t in d.texts(idx[:EXAMPLES])]


def _phones(d: Distinct, regions) -> Hits:
    idx = np.flatnonzero(d.matching(_PREFILTER["phone"]) & ~d.matching(_NOT_PHONE))
    return _verified(d, idx, lambda text: phones_in(text, regions))


def _ibans(d: Distinct, regions) -> Hits:
    return _verified(d, d.where(_PREFILTER["iban"]), ibans_in)


def _addresses(d: Distinct, regions) -> Hits:
    idx = d.where(_PREFILTER["postal_address"])
    return _verified(d, idx, lambda text: [m.group() for m in ADDRESS.finditer(text)])


def _cards(d: Distinct, regions) -> Hits:
    """Card numbers: grouped ones always; bare digit runs only if at least MIN_BARE_CARD_SHARE of them are cards."""
    is_bare = d.matching(_BARE_CARD)
    bare_idx = np.flatnonzero(is_bare)
    bare_valid = bare_idx[cards_valid(d.values.take(pa.array(bare_idx, type=pa.int64())))]
    embedded = np.flatnonzero(d.matching(_PREFILTER["card"]) & ~is_bare)
    runs = [(int(i), m) for i, text in zip(embedded, d.texts(embedded)) for m in CARD.findall(text)]
    valid = [(i, m, bool(GROUPED_CARD.fullmatch(m))) for i, m in runs if card_valid(re.sub(r"\D", "", m))]
    grouped = [(i, m) for i, m, is_grouped in valid if is_grouped]
    bare = [(int(i), t) for i, t in zip(bare_valid, d.texts(bare_valid[:EXAMPLES]))]
    bare_runs = len(bare_idx) + sum(not GROUPED_CARD.fullmatch(m) for _, m in runs)
    bare_hits = len(bare_valid) + sum(not g for _, _, g in valid)
    if bare_runs and bare_hits >= MIN_BARE_CARD_SHARE * bare_runs:
        grouped += [(i, m) for i, m, g in valid if not g]
        idx = np.union1d(bare_valid, [i for i, _ in grouped]).astype(np.int64)
        return idx, [m for _, m in (grouped + bare)[:EXAMPLES]]
    return np.array(sorted({i for i, _ in grouped}), dtype=np.int64), [m for _, m in grouped[:EXAMPLES]]


def _names(d: Distinct, regions) -> Hits:
    """Values that are person names, if at least MIN_NAME_SHARE of the column's distinct values are: shaped
    "Firstname [M.] Lastname" with a listed first name (vectorized), or else a whole name to names_in ("B. Ortiz",
    "Okonkwo-Bright, Marguerite", "marguerite okonkwo-bright")."""
    shaped = d.where(f"^{NAME}$")
    parts = pc.extract_regex(d.values.take(pa.array(shaped, type=pa.int64())), f"^{NAME}$")
    firsts = pc.struct_field(parts, "first")
    named = shaped[pc.is_in(firsts, value_set=pa.array(sorted(first_names()))).to_numpy(zero_copy_only=False)]
    rest = np.setdiff1d(d.where(_PREFILTER["person_name"]), named)
    named = np.union1d(named, _verified(d, rest, lambda text: personal_hits(text, "person_name"))[0]).astype(np.int64)
    if not len(named) or len(named) < MIN_NAME_SHARE * len(d):
        return named[:0], []
    return named, d.texts(named[:EXAMPLES])


_FIND = {"email": _emails, "phone": _phones, "iban": _ibans, "card": _cards, "person_name": _names,
         "postal_address": _addresses}
# What each detector's finding must match (its _FIND function looks only at values that do). A column whose distinct
# values match none has no finding, and one RE2 pass over the column says so: ids and amounts, most of a large table,
# were a count of distinct values and a pass per pattern (1.6 s of CPU for a 1M-row payments table, now 0.1).
_NEEDS = {"email": [EMAIL_RE2], "phone": [_PREFILTER["phone"]], "iban": [_PREFILTER["iban"]],
          "card": [_PREFILTER["card"], _BARE_CARD], "person_name": [f"^{NAME}$", _PREFILTER["person_name"]],
          "postal_address": [_PREFILTER["postal_address"]]}
_ANY_NEED = "|".join(f"(?:{pattern})" for detector in DETECTORS for pattern in _NEEDS[detector])


def text_of(values: pd.Series | pa.Array | pa.ChunkedArray) -> pa.ChunkedArray | pa.Array | None:
    """A column as text for the scan, or None for floats, booleans and dates (no contact data as such)."""
    if isinstance(values, pd.Series):
        values = pa.array(values.dropna().astype(str) if values.dtype == object else values, from_pandas=True)
    kind = values.type
    if pa.types.is_floating(kind) or pa.types.is_boolean(kind) or pa.types.is_temporal(kind) or pa.types.is_null(kind):
        return None
    return values if pa.types.is_large_string(kind) else pc.cast(values, pa.large_string())


def scan_column(table: str, column: str, values: pd.Series | pa.Array | pa.ChunkedArray,
                regions: tuple[str | None, ...] = PHONE_REGIONS) -> list[ColumnFinding]:
    """Every detector's finding in one column, scanned in full over its distinct values."""
    text = text_of(values)
    if text is None:
        return []
    if not pc.any(pc.match_substring_regex(text, _ANY_NEED)).as_py():  # before counting the distinct values, too
        return []
    d = Distinct(text)
    found: list[ColumnFinding] = []
    for detector in DETECTORS:
        idx, examples = _FIND[detector](d, regions)
        if len(idx):
            found.append(ColumnFinding(table=table, column=column, detector=detector, count=int(d.counts[idx].sum()),
                                       distinct=len(idx), examples=[mask(e, detector) for e in examples]))
    return found


# ---------------------------------------------------------------- a snapshot

def scanner_sha256() -> str:
    """The scan's own source and its detectors' (evalsuite.core.pii), so that a change to either rescans."""
    return json_sha256([file_sha256(__file__), file_sha256(pii.__file__)])


def snapshot_sha256(snapshot: Path) -> str:
    meta = snapshot / "snapshot.json"
    if not meta.is_file():
        raise FileNotFoundError(f"{snapshot}: not a snapshot (no snapshot.json)")
    return json.loads(meta.read_text())["sha256"]


def scan_snapshot(snapshot: str | Path, regions: tuple[str | None, ...] = PHONE_REGIONS) -> ScanReport:
    """Scan every column of every table of a snapshot folder, reading one Parquet column at a time."""
    snapshot = Path(snapshot)
    columns: list[str] = []
    findings: list[ColumnFinding] = []
    for path in sorted(snapshot.glob("*.parquet")):
        pf = pq.ParquetFile(path)
        for name in pf.schema_arrow.names:
            values = pf.read(columns=[name]).column(0)
            if text_of(values) is not None:
                columns.append(f"{path.stem}.{name}")
                findings += scan_column(path.stem, name, values, regions)
    return ScanReport(sha256=snapshot_sha256(snapshot), scanner=scanner_sha256(), phone_regions=list(regions),
                      columns=columns, findings=findings)


def scan_on_record(snapshot: Path, record: Path, declared: set[str]) -> ScanReport:
    """The snapshot's scan, reused from `record` if made by this scanner for exactly this snapshot, judged against
    the declared columns (table.column) and written back to `record`."""
    report = ScanReport.model_validate_json(record.read_text()) if record.is_file() else None
    if report is None or (report.sha256, report.scanner, report.phone_regions) != (
            snapshot_sha256(snapshot), scanner_sha256(), list(PHONE_REGIONS)):
        report = scan_snapshot(snapshot)
    refs = sorted({f.ref for f in report.findings})
    report = report.model_copy(update={"declared": sorted(declared),
                                       "undeclared": [r for r in refs if r not in declared]})
    write_json(record, report.model_dump(mode="json"))
    return report


def scan_tables(tables: Mapping[str, pd.DataFrame],
                regions: tuple[str | None, ...] = PHONE_REGIONS) -> list[ColumnFinding]:
    """Every column of in-memory tables, tables in name order."""
    return [f for name in sorted(tables) for col in tables[name].columns
            for f in scan_column(name, str(col), tables[name][col], regions)]
