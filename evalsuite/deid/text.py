"""Personal data in free text replaced: the pattern detectors' hits (evalsuite.core.pii: IBANs, e-mails, cards,
accounts, phones, spelled out or not) as placeholders like [EMAIL], then known values (longest first, disguised
forms too) by their stand-ins, then the person names no rule knew as [NAME]."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pandas as pd

from evalsuite.core.hashing import canon
from evalsuite.core.pii import ValueIndex, find_in_text, names_in
from evalsuite.deid.rules import HIDING_RULES, DeidRules


def original_index(original_tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> ValueIndex:
    """The original values of every column whose values must not reappear, filed under their column."""
    index = ValueIndex(disguised=True)  # a disguised original is still one
    for name in sorted(rules.tables):
        for column, rule in sorted(rules.tables[name].columns.items()):
            if rule.rule in HIDING_RULES:
                for value in pd.unique(original_tables[name][column].dropna()):
                    index.add(canon(value), "", f"{name}.{column}")
    return index.freeze()


def redact_patterns(text: str, names: bool = True) -> tuple[str, Counter]:
    """Replace detector hits with placeholders like [EMAIL] (person names too, unless names=False); also count
    them per kind."""
    return _replaced(text, [(a, b, f"[{kind.upper()}]", kind) for a, b, kind in find_in_text(text, names)])


def scrub(text: str, index: ValueIndex) -> tuple[str, Counter]:
    """Free text de-identified: patterns redacted, known values replaced by their stand-ins (so a note names the
    same surrogate as its record), and the person names left over redacted as [NAME]; counts per kind ("value"
    for known values)."""
    text, hits = redact_patterns(text, names=False)
    values = [(a, b, new, "value") for a, b, new, _ in index.finditer(text)]
    names = [(a, b, "[NAME]", "name") for a, b in names_in(text)
             if not any(a < vb and va < b for va, vb, *_ in values)]
    text, more = _replaced(text, sorted(values + names))
    return text, hits + more


def _replaced(text: str, spans: list[tuple[int, int, str, str]]) -> tuple[str, Counter]:
    """The text with each (start, end, replacement, kind) span replaced, left to right; counts per kind."""
    counts: Counter = Counter()
    parts, last = [], 0
    for start, end, new, kind in spans:
        parts += [text[last:start], new]
        last = end
        counts[kind] += 1
    return ("".join(parts) + text[last:], counts) if counts else (text, counts)
