"""deidentify(): the rules applied to the tables, and the result with its provenance (counts, never values or key)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from evalsuite.core.hashing import canon
from evalsuite.core.pii import ValueIndex
from evalsuite.deid.columns import as_datetimes, expand, factorize, like_original
from evalsuite.deid.keys import Keyed, checked_key, load_key
from evalsuite.deid.rules import DateShiftRule, DeidRules, GeneraliseRule, PseudonymRule, SurrogateRule, check_rules
from evalsuite.deid.surrogates import Surrogates
from evalsuite.deid.text import original_index, scrub

# A method name and version recorded in every provenance; it stays as first published
# (not this module's path) so provenance of the same method compares equal across releases.
METHOD = (
    "evalsuite.deid/1: HMAC-SHA256 keyed pseudonyms; Faker surrogates seeded per value from the "
    "keyed token; per-entity keyed date shift; generalisation; free text: known personal values "
    "replaced (case-insensitive, whole words, longest first) and email/phone/IBAN/account redacted"
)


class ColumnCount(BaseModel):
    """What one rule did to one column (counts only, never values)."""

    model_config = ConfigDict(extra="forbid")

    table: str
    column: str
    rule: str
    rows: int
    nulls: int
    distinct: int
    replacements: dict[str, int] = Field(default_factory=dict)


@dataclass(frozen=True)
class DeidResult:
    tables: dict[str, pd.DataFrame]
    rule_set_sha256: str
    method: str
    date: date
    counts: list[ColumnCount]

    def provenance(self) -> dict[str, Any]:
        """JSON-able record of how the tables were de-identified (no key, no values)."""
        return {
            "rule_set_sha256": self.rule_set_sha256,
            "method": self.method,
            "date": self.date.isoformat(),
            "counts": [c.model_dump() for c in self.counts],
        }


def _count(table: str, column: str, rule: str, series: pd.Series, distinct: int, **repl: int) -> ColumnCount:
    return ColumnCount(
        table=table,
        column=column,
        rule=rule,
        rows=len(series),
        nulls=int(series.isna().sum()),
        distinct=distinct,
        replacements={k: v for k, v in repl.items() if v},
    )


class _Run:
    """One de-identification run: transforms columns and remembers what replaced what."""

    def __init__(self, keyed: Keyed, surrogates: Surrogates, collect_values: bool):
        self.keyed, self.surrogates = keyed, surrogates
        # Only free text needs the original -> replacement index; skip building it otherwise.
        self.collect_values = collect_values
        self.index = ValueIndex(disguised=True)
        self.counts: list[ColumnCount] = []

    def column(self, table: str, df: pd.DataFrame, column: str, rule: Any) -> pd.Series | None:
        series, where = df[column], f"{table}.{column}"
        if rule.rule in ("pseudonym", "surrogate"):
            out, distinct = self._keyed(series, rule, where)
        elif rule.rule == "date_shift":
            out, distinct = self._date_shift(df, column, rule, where), series.nunique()
        elif rule.rule == "generalise":
            out, distinct = self._generalise(series, rule, where)
        else:  # drop, keep
            out, distinct = (None if rule.rule == "drop" else series), series.nunique()
        self.counts.append(_count(table, column, rule.rule, series, int(distinct)))
        return out

    def _keyed(
        self, series: pd.Series, rule: PseudonymRule | SurrogateRule, where: str
    ) -> tuple[pd.Series, int]:
        transform = self.keyed.pseudonym if rule.rule == "pseudonym" else self.surrogates.surrogate
        codes, uniques = factorize(series)
        texts = [canon(u) for u in uniques]
        mapped = [transform(rule, t) for t in texts]
        if self.collect_values:
            for text, new in zip(texts, mapped):
                self.index.add(text, new, where)
        return expand(codes, mapped, series), len(uniques)

    def _date_shift(self, df: pd.DataFrame, column: str, rule: DateShiftRule, where: str) -> pd.Series:
        entity_codes, entities = factorize(df[rule.entity_column])
        per_entity = [self.keyed.shift_days(canon(e), rule.max_days) for e in entities]
        # Rows without an entity share one keyed shift, so their order is kept too.
        per_entity.append(self.keyed.shift_days("\x00null", rule.max_days))
        days = np.asarray(per_entity, dtype="int64")[entity_codes]
        shifted = as_datetimes(df[column], where) + pd.to_timedelta(days, unit="D")
        return like_original(pd.Series(shifted, index=df.index), df[column])

    def _generalise(self, series: pd.Series, rule: GeneraliseRule, where: str) -> tuple[pd.Series, int]:
        if rule.to == "prefix":
            codes, uniques = factorize(series)
            return expand(codes, [canon(u)[: rule.length] for u in uniques], series), len(uniques)
        fmt = "%Y-%m" if rule.to == "month" else "%Y"
        codes, uniques = factorize(as_datetimes(series, where))
        return expand(codes, [ts.strftime(fmt) for ts in uniques], series), len(uniques)

    def free_text(self, table: str, series: pd.Series) -> pd.Series:
        codes, uniques = factorize(series)
        occurrences = np.bincount(codes[codes >= 0], minlength=len(uniques))
        totals: Counter = Counter()
        mapped = []
        for text, times in zip(uniques, occurrences):
            if not isinstance(text, str):
                mapped.append(text)
                continue
            text, hits = scrub(text, self.index)
            totals.update({k: v * int(times) for k, v in hits.items()})
            mapped.append(text)
        self.counts.append(_count(table, str(series.name), "free_text", series, len(uniques), **totals))
        return expand(codes, mapped, series)


def deidentify(
    tables: Mapping[str, pd.DataFrame],
    rules: DeidRules,
    key: bytes | str | None = None,
    today: date | None = None,
) -> DeidResult:
    """De-identify tables by their rules; `key` defaults to load_key(rules) (none for rules that use no key)."""
    if key is None:
        key = load_key(rules) if rules.needs_key else b""  # nothing keyed runs: the key is never read
    else:
        key = checked_key(key)
    check_rules(tables, rules)
    run = _new_run(Keyed(key), tables, rules)
    new_columns: dict[str, dict[str, pd.Series | None]] = {}
    # First every ruled column of every table, so free text anywhere can be scrubbed of
    # values from any table (a customer's name in a vendor's note).
    for name in sorted(rules.tables):
        for column, rule in sorted(rules.tables[name].columns.items()):
            new_columns.setdefault(name, {})[column] = run.column(name, tables[name], column, rule)
    run.index.freeze()
    for name in sorted(rules.tables):
        for column in sorted(rules.tables[name].free_text):
            new_columns.setdefault(name, {})[column] = run.free_text(name, tables[name][column])
    return DeidResult(
        tables=_with_changes(tables, new_columns),
        rule_set_sha256=rules.sha256(),
        method=METHOD,
        date=today or date.today(),
        counts=run.counts,
    )


def _new_run(keyed: Keyed, tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> _Run:
    # The index of original values (to keep them out of surrogates) and the index of
    # replacements (to scrub free text) cost a pass over the data: built only when used.
    surrogates = any(r.rule == "surrogate" for t in rules.tables.values() for r in t.columns.values())
    originals = original_index(tables, rules) if surrogates else None
    return _Run(keyed, Surrogates(keyed, originals), collect_values=any(t.free_text for t in rules.tables.values()))


def _with_changes(
    tables: Mapping[str, pd.DataFrame], new_columns: dict[str, dict[str, pd.Series | None]]
) -> dict[str, pd.DataFrame]:
    """Every table, with its new columns in place and dropped columns (None) removed; inputs stay untouched."""
    out: dict[str, pd.DataFrame] = {}
    for name, df in tables.items():
        changes = new_columns.get(name, {})
        dropped = [c for c, s in changes.items() if s is None]
        kept = {c: s for c, s in changes.items() if s is not None}
        out[name] = df.drop(columns=dropped).assign(**kept) if changes else df.copy()
    return out
