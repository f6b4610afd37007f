"""Personal data in free text replaced: known values as whole words (longest first), then the pattern detectors'
hits (evalsuite.core.pii: IBANs, e-mails, cards, accounts, phones) as placeholders like [EMAIL]."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pandas as pd

from evalsuite.core.hashing import canon
from evalsuite.core.pii import ValueIndex, find_in_text
from evalsuite.deid.rules import HIDING_RULES, DeidRules


def original_index(original_tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> ValueIndex:
    """The original values of every column whose values must not reappear, filed under their column."""
    index = ValueIndex()
    for name in sorted(rules.tables):
        for column, rule in sorted(rules.tables[name].columns.items()):
            if rule.rule in HIDING_RULES:
                for value in pd.unique(original_tables[name][column].dropna()):
                    index.add(canon(value), "", f"{name}.{column}")
    return index.freeze()


def redact_patterns(text: str) -> tuple[str, Counter]:
    """Replace detector hits with placeholders like [EMAIL]; also count them per kind."""
    hits: Counter = Counter()
    parts, last = [], 0
    for start, end, kind in find_in_text(text):
        parts += [text[last:start], f"[{kind.upper()}]"]
        last = end
        hits[kind] += 1
    return ("".join(parts) + text[last:], hits) if hits else (text, hits)
