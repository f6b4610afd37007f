"""The residual check: output tables scanned for original values and personal-data patterns, reported by place."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from evalsuite.core.pii import ValueIndex, find_in_text
from evalsuite.deid.columns import factorize
from evalsuite.deid.rules import DeidRules, check_rules
from evalsuite.deid.text import original_index


class ResidualFinding(BaseModel):
    """Where something personal was found; deliberately without the value itself."""

    model_config = ConfigDict(extra="forbid")

    table: str
    column: str
    row: str
    kind: str  # "original_value" or a pattern kind of evalsuite.core.pii.TEXT_KINDS (iban, email, card, account, phone)
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
    looked for everywhere. Patterns are looked for in free-text and unruled columns only:
    ruled columns hold surrogates we made, or values a `keep` rule deliberately retained.
    """
    check_rules(original_tables, rules)
    index = original_index(original_tables, rules)
    counts: Counter = Counter()
    findings: list[ResidualFinding] = []
    scanned = 0
    for name, column, patterns in _text_columns(deid_tables, rules):
        df = deid_tables[name]
        hits, occurrences, codes = _scan_column(df[column], index, patterns)
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


def _scan_column(
    series: pd.Series, index: ValueIndex, patterns: bool
) -> tuple[dict[int, list[tuple[str, str | None]]], np.ndarray, np.ndarray]:
    codes, uniques = factorize(series)
    occurrences = np.bincount(codes[codes >= 0], minlength=len(uniques))
    hits: dict[int, list[tuple[str, str | None]]] = {}
    for i, text in enumerate(uniques):
        if not isinstance(text, str):
            continue
        found = sorted({("original_value", source) for _, _, _, source in index.finditer(text)})
        if patterns:
            found += [(kind, None) for kind in dict.fromkeys(kind for *_, kind in find_in_text(text))]  # no redaction
        if found:
            hits[i] = found
    return hits, occurrences, codes


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
