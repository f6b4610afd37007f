"""Columns a rights manifest declares synthetic, checked rather than trusted.

`synthetic_columns` lets the personal-data scan pass columns that only look personal (a public benchmark's
invented users). Declared over real records, it would release them unchanged; so a declared-synthetic column that
no de-identification rule hides is checked like any other, on the seed snapshot before anything is de-identified:

- where the scan found personal-looking values in it, its values that any of the detectors finds personal
  (e-mails, phones by their shape, IBANs, cards, whole person names) count unless they are recognisably
  invented (evalsuite.core.pii.made_up: reserved e-mail domains, fictional phone ranges, published example IBANs;
  nothing makes a name so);
- its values that occur in the source's personal data elsewhere (a declared personal or free-text column, or a
  column the scan found personal values in) count too: a "synthetic" contact named in a real note is real.

Any count blocks, with one line per column naming it, the manifest and how many values.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from evalsuite.core.hashing import canon
from evalsuite.core.pii import ValueIndex, made_up, personal_hits
from evalsuite.sourcing.pii_scan import ColumnFinding

# Detectors whose hits in a declared-synthetic column must be invented; an address's street says nothing either way.
CHECKED = ("email", "phone", "iban", "card", "person_name")


def _column(snapshot: Path, ref: str) -> pd.Series | None:
    table, column = ref.split(".", 1)
    path = snapshot / f"{table}.parquet"
    if not path.is_file() or column not in pq.ParquetFile(path).schema_arrow.names:
        return None
    return pq.read_table(path, columns=[column]).column(0).to_pandas().dropna()


def _not_made_up(values: pd.Series, detectors: Iterable[str]) -> set[str]:
    """The distinct values with a personal-looking hit of one of the detectors that is not invented."""
    out: set[str] = set()
    for value in pd.unique(values.astype(str)):
        for kind in detectors:
            if any(not made_up(hit, kind) for hit in personal_hits(value, kind)):
                out.add(value)
                break
    return out


def _found_elsewhere(values: pd.Series, snapshot: Path, elsewhere: Iterable[str]) -> set[str]:
    """The distinct values that occur (as whole words, disguised forms too) in the texts of the other columns."""
    index = ValueIndex(disguised=True)
    for value in pd.unique(values.astype(str)):
        index.add(canon(value), value, "")
    index.freeze()
    found: set[str] = set()
    for ref in sorted(elsewhere):
        other = _column(snapshot, ref)
        for text in pd.unique(other.astype(str)) if other is not None else ():
            found.update(value for *_, value, _ in index.finditer(text))
    return found


def synthetic_lies(snapshot: Path, synthetic: Iterable[str], findings: list[ColumnFinding],
                   elsewhere: Iterable[str], manifest: str) -> list[str]:
    """One line per declared-synthetic column (table.column) whose values are personal originals."""
    lines = []
    by_ref: dict[str, list[str]] = {}
    for f in findings:
        if f.detector in CHECKED:
            by_ref.setdefault(f.ref, []).append(f.detector)
    for ref in sorted(set(synthetic)):
        values = _column(snapshot, ref)
        if values is None or values.empty:
            continue
        real = _not_made_up(values, CHECKED if ref in by_ref else ())  # a column of phones may hold e-mails too
        real |= _found_elsewhere(values, snapshot, set(elsewhere) - set(synthetic) - {ref})
        rows = int(values.astype(str).isin(real).sum())
        if rows:
            kinds = "/".join(by_ref.get(ref, ())) or "values found in personal data elsewhere"
            lines.append(f"{ref}: declared synthetic in {manifest}, but {rows} of {len(values)} values are not "
                         f"made up ({kinds})")
    return lines
