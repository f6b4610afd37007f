"""The residual check: output tables scanned for original values and personal-data patterns, reported by place."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from evalsuite.core.pii import ValueIndex, find_in_text, may_hold_hits
from evalsuite.deid.columns import factorize
from evalsuite.deid.rules import DeidRules, check_rules
from evalsuite.deid.text import original_index


class ResidualFinding(BaseModel):
    """Where something personal was found; deliberately without the value itself."""

    model_config = ConfigDict(extra="forbid")

    table: str
    column: str
    row: str
    kind: str  # "original_value" or a kind of evalsuite.core.pii.FREE_TEXT_KINDS (iban, email, …, name)
    source: str | None = None  # for original values: the ruled column it came from


class ResidualReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cells_scanned: int
    counts: dict[str, int] = Field(default_factory=dict)
    findings: list[ResidualFinding] = Field(default_factory=list)
    truncated: bool = False

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def passed(self) -> bool:
        return self.total == 0


def residual_check(
    original_tables: Mapping[str, pd.DataFrame],
    deid_tables: Mapping[str, pd.DataFrame],
    rules: DeidRules,
    max_findings: int = 1000,
) -> ResidualReport:
    """Scan every string cell of the output for original personal values and pattern hits.

    Original values (of pseudonym/surrogate/generalise/drop columns, length >= 4) are
    looked for everywhere, disguised forms too. Patterns and person names are looked for in free-text and unruled
    columns only: ruled columns hold surrogates we made, or values a `keep` rule deliberately retained; a name that
    is one of the surrogates we made (a note naming its record's stand-in contact) is not a finding.
    """
    check_rules(original_tables, rules)
    index = original_index(original_tables, rules)
    made = _surrogates(deid_tables, rules)
    counts: Counter = Counter()
    findings: list[ResidualFinding] = []
    scanned = 0
    for name, column, patterns in _text_columns(deid_tables, rules):
        df = deid_tables[name]
        hits, occurrences, codes = _scan_column(df[column], index, patterns, made)
        scanned += int((codes >= 0).sum())
        for i, found in hits.items():
            counts.update({kind: int(occurrences[i]) for kind, _ in found})
        findings += _locations(name, str(column), df.index, codes, hits, max_findings - len(findings))
    total = sum(counts.values())
    return ResidualReport(
        cells_scanned=scanned, counts=dict(counts), findings=findings, truncated=len(findings) < total
    )


def _text_columns(deid_tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> Iterator[tuple[str, Any, bool]]:
    """(table, column, whether to look for patterns) for every text column, tables in name order."""
    for name in sorted(deid_tables):
        df = deid_tables[name]
        ruled = set(rules.tables[name].columns) if name in rules.tables else set()
        for column in df.columns:
            if pd.api.types.is_string_dtype(df[column]) or df[column].dtype == object:
                yield name, column, column not in ruled


def _surrogates(deid_tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> ValueIndex:
    """The stand-ins de-identification made (values of surrogate columns), to tell them from leaked names."""
    made = ValueIndex()
    for name, trules in sorted(rules.tables.items()):
        for column, rule in sorted(trules.columns.items()):
            if rule.rule == "surrogate" and name in deid_tables and column in deid_tables[name]:
                for value in pd.unique(deid_tables[name][column].dropna()):
                    made.add(str(value), "", f"{name}.{column}")
    return made.freeze()


def _scan_column(
    series: pd.Series, index: ValueIndex, patterns: bool, made: ValueIndex | None = None
) -> tuple[dict[int, list[tuple[str, str | None]]], np.ndarray, np.ndarray]:
    codes, uniques = _distinct(series)
    occurrences = np.bincount(codes[codes >= 0], minlength=len(uniques))
    hits: dict[int, list[tuple[str, str | None]]] = {}
    for i in _candidates(uniques, index, patterns):
        text = uniques[i] if isinstance(uniques, list) else uniques[int(i)].as_py()
        originals = list(index.finditer(text))
        found = sorted({("original_value", source) for _, _, _, source in originals})
        if patterns:  # a name that is an original value or one of our surrogates is reported once, or not at all
            in_text = find_in_text(text)
            known = originals + list(made.finditer(text) if made is not None and any(
                kind == "name" for *_, kind in in_text) else ())
            kinds = (kind for a, b, kind in in_text
                     if kind != "name" or not any(ka < b and a < kb for ka, kb, *_ in known))
            found += [(kind, None) for kind in dict.fromkeys(kinds)]  # no redaction
        if found:
            hits[i] = found
    return hits, occurrences, codes


def _distinct(series: pd.Series) -> tuple[np.ndarray, list | pa.Array]:
    """factorize's codes (-1 for null) and distinct values; text held by Arrow is encoded by Arrow, in the same
    order, and its distinct values stay Arrow text: only the candidates among a million ids become Python strings."""
    if not (isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow"):
        return factorize(series)
    text = pa.array(series)
    encoded = pc.dictionary_encode(text.combine_chunks() if isinstance(text, pa.ChunkedArray) else text)
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.intp)
    return codes, encoded.dictionary.cast(pa.string())


def _candidates(uniques: list | pa.Array, index: ValueIndex, patterns: bool) -> np.ndarray:
    """Positions of the distinct text values that may hold a finding: a million ids or amounts are ruled out by a
    few passes of RE2 over them all (ValueIndex.may_occur_in, may_hold_hits), and only the rest are scanned."""
    try:
        texts = uniques if isinstance(uniques, pa.Array) else pa.array(
            [u if isinstance(u, str) else None for u in uniques], pa.string())
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") Arrow cannot hold: every value is scanned
        return np.arange(len(uniques))
    maybe = index.may_occur_in(texts)
    if patterns:
        maybe |= may_hold_hits(texts)
    return np.flatnonzero(maybe)


def _locations(
    table: str, column: str, labels: pd.Index, codes: np.ndarray, hits: dict[int, list], room: int
) -> list[ResidualFinding]:
    if not hits or room <= 0:
        return []
    # One slot per code; code -1 (null) lands on the last slot, which is never flagged.
    flagged = np.zeros(max(hits) + 2, dtype=bool)
    flagged[list(hits)] = True
    out: list[ResidualFinding] = []
    for row in np.flatnonzero(flagged[np.minimum(codes, max(hits) + 1)]):
        for kind, source in hits[int(codes[row])]:
            out.append(
                ResidualFinding(table=table, column=column, row=str(labels[row]), kind=kind, source=source)
            )
        if len(out) >= room:
            return out[:room]
    return out
