"""Personal data in free text: known values as whole words (longest first), and email/phone/IBAN/account patterns."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping

import pandas as pd

from evalsuite.core.hashing import canon
from evalsuite.deid.rules import HIDING_RULES, DeidRules

# Shorter strings ("Li", "17", "AB") occur inside ordinary text by chance; matching them
# would shred notes and flood the residual report with false leaks.
MIN_VALUE_LEN = 4

_WORD = re.compile(r"\w+")


def _lower(text: str) -> str:
    """Lower-case without changing length, so positions in the copy are positions in the text."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _whole(low: str, start: int, end: int) -> bool:
    """The match does not cut through a word at either end (regex \\b semantics)."""
    before = start == 0 or not (_is_word(low[start - 1]) and _is_word(low[start]))
    after = end == len(low) or not (_is_word(low[end - 1]) and _is_word(low[end]))
    return before and after


class ValueIndex:
    """Known strings found in text: case-insensitive, whole words, longest first.

    One big regex alternation would do the same, but Python's re compiles 250k names
    in tens of seconds and tries every alternative at every position. Here values are
    filed under their first two words, so each word of a text costs two dict lookups
    plus a check of the few values filed under it, whatever the number of values.
    """

    def __init__(self) -> None:
        self._values: dict[str, tuple[str, str]] = {}  # lower-cased value -> (replacement, source)
        # (first word, second word or "") -> [(lower-cased value, offset of its first word)]
        self._by_words: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self._firsts: set[str] = set()

    def add(self, value: str, replacement: str, source: str) -> None:
        low = _lower(value.strip())
        if len(low) < MIN_VALUE_LEN or low in self._values:
            return  # first value added wins: rules are walked in sorted order, so this is stable
        first = _WORD.search(low)
        if first is None:
            return
        second = _WORD.search(low, first.end())
        self._values[low] = (replacement, source)
        key = (first.group(), second.group() if second else "")
        self._by_words.setdefault(key, []).append((low, first.start()))
        self._firsts.add(key[0])

    def freeze(self) -> ValueIndex:
        for entries in self._by_words.values():
            entries.sort(key=lambda entry: -len(entry[0]))
        return self

    def __len__(self) -> int:
        return len(self._values)

    def _longest_at(
        self, low: str, keys: tuple[tuple[str, str], ...], word_start: int, done: int
    ) -> tuple[int, str] | None:
        best: tuple[int, str] | None = None
        for key in keys:
            for value, offset in self._by_words.get(key, ()):  # longest first
                start = word_start - offset
                if start >= done and low.startswith(value, start) and _whole(low, start, start + len(value)):
                    if best is None or len(value) > len(best[1]):
                        best = (start, value)
                    break
        return best

    def finditer(self, text: str) -> Iterator[tuple[int, int, str, str]]:
        """(start, end, replacement, source) of each non-overlapping match, left to right."""
        low, done = _lower(text), 0
        words = _WORD.findall(low)
        # Most texts mention no known value: one C-level set test rules them out.
        if self._firsts.isdisjoint(words):
            return
        starts = [m.start() for m in _WORD.finditer(low)]
        for i, word in enumerate(words):
            if word not in self._firsts:
                continue
            following = words[i + 1] if i + 1 < len(words) else ""
            found = self._longest_at(low, ((word, following), (word, "")), starts[i], done)
            if found is not None:
                start, value = found
                done = start + len(value)
                yield start, done, *self._values[value]

    def replace(self, text: str) -> tuple[str, int]:
        parts, last, count = [], 0, 0
        for start, end, replacement, _ in self.finditer(text):
            parts += [text[last:start], replacement]
            last, count = end, count + 1
        return ("".join(parts) + text[last:], count) if count else (text, 0)


def original_index(original_tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> ValueIndex:
    """The original values of every column whose values must not reappear, filed under their column."""
    index = ValueIndex()
    for name in sorted(rules.tables):
        for column, rule in sorted(rules.tables[name].columns.items()):
            if rule.rule in HIDING_RULES:
                for value in pd.unique(original_tables[name][column].dropna()):
                    index.add(canon(value), "", f"{name}.{column}")
    return index.freeze()


# ---------------------------------------------------------------- pattern detectors

_DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ANY_DIGIT = re.compile(r"\d")


def _is_phone(text: str) -> bool:
    # Bare digit runs are accounts (their alternative comes first); 9-15 digits with
    # separators that are not a date-time make a phone number. Dates have 8 digits.
    return 9 <= sum(c.isdigit() for c in text) <= 15 and not _DATE_LIKE.search(text)


# One pass with one alternative per kind: at each position the first alternative that
# matches wins, so an IBAN or email is taken whole before its digits could look like an
# account or phone number.
_DETECTORS = re.compile(
    "|".join(
        f"(?P<{kind}>{regex})"
        for kind, regex in (
            ("iban", r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"),
            ("email", r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
            ("account", r"(?<![\w.,+-])\d{8,18}(?!\w|[.,]\d)"),
            ("phone", r"(?<![\w+-])(?:\+|\()?\d[\d ().-]{7,22}\d(?![\w-])"),
        )
    )
)


def redact_patterns(text: str) -> tuple[str, Counter]:
    """Replace detector hits with placeholders like [EMAIL]; also count them per kind."""
    hits: Counter = Counter()
    # Every detector needs a digit or an "@"; texts with neither skip the scan.
    if "@" not in text and not _ANY_DIGIT.search(text):
        return text, hits

    def placeholder(match: re.Match) -> str:
        kind = match.lastgroup or ""
        if kind == "phone" and not _is_phone(match.group()):
            return match.group()
        hits[kind] += 1
        return f"[{kind.upper()}]"

    return _DETECTORS.sub(placeholder, text), hits
