"""De-identification of supplier tables before they become a test world.

The output must keep everything a task's assertions depend on: joins between
tables, amounts, currencies, statuses and the order of each entity's dates. So
rules are applied per column and are keyed and deterministic: the same input
value gives the same output in every table and every run that uses the same key,
and a different key gives unrelated outputs.

Rules work on the distinct values of a column (pd.factorize), never row by row,
so a million-row table with a hundred thousand customers costs a hundred
thousand transformations. The key is only ever held in memory: it is not part of
any result, hash or report.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from itertools import accumulate
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalsuite.core.hashing import canonical_number, json_sha256

DEFAULT_KEY_ENV = "EVALSUITE_DEID_KEY"
MIN_KEY_BYTES = 16
# Shorter strings ("Li", "17", "AB") occur inside ordinary text by chance; matching them
# would shred notes and flood the residual report with false leaks.
MIN_VALUE_LEN = 4
METHOD = (
    "evalsuite.deid.deidentify/1: HMAC-SHA256 keyed pseudonyms; Faker surrogates seeded per value from the "
    "keyed token; per-entity keyed date shift; generalisation; free text: known personal values "
    "replaced (case-insensitive, whole words, longest first) and email/phone/IBAN/account redacted"
)


class DeidError(ValueError):
    """Rules that do not fit the tables, or a value a rule cannot transform."""


class DeidKeyError(DeidError):
    """The de-identification key is missing or unusable (the message never contains it)."""


# ---------------------------------------------------------------- rules


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PseudonymRule(_Rule):
    """Keyed token: prefix + first `length` hex chars of HMAC-SHA256(key, value)."""

    rule: Literal["pseudonym"]
    prefix: str = ""
    length: int = Field(default=16, ge=8, le=64)


SurrogateKind = Literal[
    "name", "first_name", "last_name", "email", "phone", "company", "street_address", "iban", "bank_account"
]


class SurrogateRule(_Rule):
    """A realistic fake value, seeded from the keyed token of the original value."""

    rule: Literal["surrogate"]
    kind: SurrogateKind
    locale: str = "en_US"


class DateShiftRule(_Rule):
    """Shift dates by a keyed per-entity number of days in [-max_days, max_days]."""

    rule: Literal["date_shift"]
    entity_column: str
    max_days: int = Field(default=30, ge=1, le=3650)


class GeneraliseRule(_Rule):
    """Coarsen a value: its first `length` characters (zip 94107 -> 941), or a date's month/year."""

    rule: Literal["generalise"]
    to: Literal["prefix", "month", "year"]
    length: int = Field(default=3, ge=1)


class DropRule(_Rule):
    rule: Literal["drop"]


class KeepRule(_Rule):
    """An explicit, reviewed decision that the column may stay as it is."""

    rule: Literal["keep"]


ColumnRule = Annotated[
    Union[PseudonymRule, SurrogateRule, DateShiftRule, GeneraliseRule, DropRule, KeepRule],
    Field(discriminator="rule"),
]
# Rules whose original values must never reappear anywhere in the output.
_HIDING_RULES = frozenset({"pseudonym", "surrogate", "generalise", "drop"})


class TableRules(_Rule):
    columns: dict[str, ColumnRule] = Field(default_factory=dict)
    free_text: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _free_text_not_ruled(self) -> TableRules:
        both = sorted(set(self.free_text) & set(self.columns))
        if both:
            raise ValueError(f"columns {both} are both free_text and ruled; choose one")
        return self


class DeidRules(_Rule):
    """Per table, per column rules plus the free-text columns to scrub."""

    key_env: str = DEFAULT_KEY_ENV
    key_file: Path | None = None
    tables: dict[str, TableRules]

    def ruled_columns(self) -> set[str]:
        """Every ruled column as 'table.column' (what the rights review asks for)."""
        return {f"{t}.{c}" for t, tr in self.tables.items() for c in tr.columns}

    def sha256(self) -> str:
        return json_sha256(self.model_dump(mode="json"))


def load_rules(path: str | Path) -> DeidRules:
    """Read rules from YAML; errors name the file and the field path on one line."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return DeidRules.model_validate(data)
    except yaml.YAMLError as exc:
        raise DeidError(f"{path}: invalid YAML: {exc}".replace("\n", " ")) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<top level>"
        raise DeidError(f"{path}: {where}: {first['msg']}") from exc


# ---------------------------------------------------------------- key


def _checked_key(key: bytes | str) -> bytes:
    key = key.encode() if isinstance(key, str) else bytes(key)
    if len(key) < MIN_KEY_BYTES:
        raise DeidKeyError(f"de-identification key too short: need at least {MIN_KEY_BYTES} bytes")
    return key


def load_key(rules: DeidRules, environ: Mapping[str, str] | None = None) -> bytes:
    """The key from the environment variable the rules name, else from their key file."""
    env = os.environ if environ is None else environ
    if env.get(rules.key_env):
        return _checked_key(env[rules.key_env])
    if rules.key_file is not None:
        try:
            return _checked_key(rules.key_file.read_bytes().strip())
        except FileNotFoundError as exc:
            raise DeidKeyError(f"de-identification key file {rules.key_file} not found") from exc
    raise DeidKeyError(
        f"de-identification key missing: set the environment variable {rules.key_env} "
        "or key_file in the rules"
    )


# ---------------------------------------------------------------- keyed values


def _canon(value: Any) -> str:
    """Text form of a value for keying: 25 and 25.0 key alike so int/float join columns match."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, Decimal)):
        return canonical_number(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


class _Keyed:
    """HMAC tokens; the purpose is mixed in so a pseudonym never reveals a date shift."""

    def __init__(self, key: bytes):
        self._mac = hmac.new(key, digestmod=hashlib.sha256)

    def token(self, purpose: str, text: str) -> str:
        mac = self._mac.copy()
        mac.update(f"{purpose}\x1f{text}".encode())
        return mac.hexdigest()


def _fast_weighted_names(gen: Any) -> None:
    """Make Faker's weighted name picks O(log n) instead of O(n).

    Faker rebuilds the cumulative weights of ~1000 names on every pick (~100 us);
    handing random.choices precomputed cum_weights draws the same name from the same
    random state. Installed only if a self-check proves identical output.
    """
    person = next((p for p in gen.get_providers() if hasattr(p, "first_names")), None)
    if person is None:
        return
    for method in ("first_name", "first_name_male", "first_name_female", "first_name_nonbinary", "last_name"):
        weights = getattr(person, method.replace("_name", "_names"), None)
        if not isinstance(weights, dict) or not hasattr(person, method):
            continue
        keys, cum = tuple(weights), list(accumulate(weights.values()))

        def fast(keys=keys, cum=cum) -> str:
            return gen.random.choices(keys, cum_weights=cum, k=1)[0]

        stock = getattr(person, method)
        if all(_same_draw(gen, stock, fast, seed) for seed in range(25)):
            gen.set_formatter(method, fast)


def _same_draw(gen: Any, a: Callable[[], str], b: Callable[[], str], seed: int) -> bool:
    gen.seed_instance(seed)
    first = a()
    gen.seed_instance(seed)
    return first == b()


_SURROGATES: dict[str, Callable[[Any, str], str]] = {
    "name": lambda g, t: g.name(),
    "first_name": lambda g, t: g.first_name(),
    "last_name": lambda g, t: g.last_name(),
    # Token digits keep emails distinct (they are often join keys); reserved domains
    # (example.com/.org/.net) guarantee a surrogate never reaches a real mailbox.
    "email": lambda g, t: f"{g.user_name()}.{t[:4]}@{g.safe_domain_name()}",
    "phone": lambda g, t: g.phone_number(),
    "company": lambda g, t: g.company(),
    "street_address": lambda g, t: g.street_address(),
    "iban": lambda g, t: g.iban(),
    "bank_account": lambda g, t: g.bban(),
}


class _Engine:
    """Keyed transformations with per-value caches shared by all tables of one run."""

    # Redraws before giving up on a surrogate that keeps containing an original value.
    MAX_REDRAWS = 50

    def __init__(self, key: bytes, originals: _ValueIndex | None = None):
        self.keyed = _Keyed(key)
        # Original personal values no surrogate may contain: Faker draws from the same
        # name lists the real people's names come from, and a surrogate that happens to be
        # another record's real name would be indistinguishable from a leak.
        self._originals = originals or _ValueIndex()
        self._generators: dict[str, Any] = {}
        self._surrogates: dict[tuple[str, str, str], str] = {}

    def pseudonym(self, rule: PseudonymRule, text: str) -> str:
        return rule.prefix + self.keyed.token("value", text)[: rule.length]

    def surrogate(self, rule: SurrogateRule, text: str) -> str:
        cache_key = (rule.locale, rule.kind, text)
        if cache_key not in self._surrogates:
            self._surrogates[cache_key] = self._draw(rule, text)
        return self._surrogates[cache_key]

    def _draw(self, rule: SurrogateRule, text: str) -> str:
        gen = self._generator(rule.locale)
        for attempt in range(self.MAX_REDRAWS):
            # Redraws are keyed too, so the same data and key always give the same surrogate.
            token = self.keyed.token("value", text if attempt == 0 else f"{text}\x1fredraw{attempt}")
            gen.seed_instance(int(token[:16], 16))
            value = _SURROGATES[rule.kind](gen, token)
            if next(self._originals.finditer(value), None) is None:
                return value
        raise DeidError(f"no {rule.kind} surrogate free of original values after {self.MAX_REDRAWS} draws")

    def shift_days(self, text: str, max_days: int) -> int:
        return int(self.keyed.token("date_shift", text)[:16], 16) % (2 * max_days + 1) - max_days

    def _generator(self, locale: str) -> Any:
        if locale not in self._generators:
            from faker import Factory  # imported here: only surrogate rules need Faker

            gen = Factory.create(locale)
            _fast_weighted_names(gen)
            self._generators[locale] = gen
        return self._generators[locale]


# ---------------------------------------------------------------- finding known values in text

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


class _ValueIndex:
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

    def freeze(self) -> _ValueIndex:
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


def _redact_patterns(text: str) -> tuple[str, Counter]:
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


# ---------------------------------------------------------------- column transforms


def _factorize(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return codes, uniques.tolist()


def _expand(codes: np.ndarray, mapped: list[Any], like: pd.Series) -> pd.Series:
    """Per-row values from per-unique values; code -1 (null) stays null."""
    table = np.empty(len(mapped) + 1, dtype=object)
    table[: len(mapped)] = mapped
    table[-1] = None
    return pd.Series(table[codes], index=like.index, name=like.name)


def _as_datetimes(series: pd.Series, where: str) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(series):
        return series
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise DeidError(f"{where}: expected dates, got {series.dtype} values")
    texts = series.dropna()
    iso = len(texts) > 0 and isinstance(texts.iloc[0], str)
    try:
        return pd.to_datetime(series, format="ISO8601" if iso else None)
    except (ValueError, TypeError) as exc:
        raise DeidError(f"{where}: expected ISO dates: {exc}") from exc


def _like_original(shifted: pd.Series, original: pd.Series) -> pd.Series:
    """Give shifted dates back in the original's form (datetime64, date objects or ISO text)."""
    if pd.api.types.is_datetime64_any_dtype(original):
        return shifted
    sample = original.dropna()
    sample = sample.iloc[0] if len(sample) else None
    if isinstance(sample, date) and not isinstance(sample, datetime):
        codes, uniques = _factorize(shifted)
        return _expand(codes, [ts.date() for ts in uniques], original)
    codes, uniques = _factorize(shifted)
    date_only = isinstance(sample, str) and len(sample.strip()) == 10
    texts = [ts.strftime("%Y-%m-%d") if date_only else ts.isoformat() for ts in uniques]
    return _expand(codes, texts, original)


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


def _check_rules(tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> None:
    for name, trules in sorted(rules.tables.items()):
        if name not in tables:
            raise DeidError(f"rules name table {name!r}, which is not among the tables {sorted(tables)}")
        present = set(tables[name].columns)
        needed = list(trules.columns) + list(trules.free_text)
        needed += [r.entity_column for r in trules.columns.values() if isinstance(r, DateShiftRule)]
        missing = sorted(set(needed) - present)
        if missing:
            raise DeidError(f"rules for table {name!r} name missing columns {missing}")


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

    def __init__(self, engine: _Engine, collect_values: bool):
        self.engine = engine
        # Only free text needs the original -> replacement index; skip building it otherwise.
        self.collect_values = collect_values
        self.index = _ValueIndex()
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
        transform = self.engine.pseudonym if rule.rule == "pseudonym" else self.engine.surrogate
        codes, uniques = _factorize(series)
        texts = [_canon(u) for u in uniques]
        mapped = [transform(rule, t) for t in texts]
        if self.collect_values:
            for text, new in zip(texts, mapped):
                self.index.add(text, new, where)
        return _expand(codes, mapped, series), len(uniques)

    def _date_shift(self, df: pd.DataFrame, column: str, rule: DateShiftRule, where: str) -> pd.Series:
        entity_codes, entities = _factorize(df[rule.entity_column])
        per_entity = [self.engine.shift_days(_canon(e), rule.max_days) for e in entities]
        # Rows without an entity share one keyed shift, so their order is kept too.
        per_entity.append(self.engine.shift_days("\x00null", rule.max_days))
        days = np.asarray(per_entity, dtype="int64")[entity_codes]
        shifted = _as_datetimes(df[column], where) + pd.to_timedelta(days, unit="D")
        return _like_original(pd.Series(shifted, index=df.index), df[column])

    def _generalise(self, series: pd.Series, rule: GeneraliseRule, where: str) -> tuple[pd.Series, int]:
        if rule.to == "prefix":
            codes, uniques = _factorize(series)
            return _expand(codes, [_canon(u)[: rule.length] for u in uniques], series), len(uniques)
        fmt = "%Y-%m" if rule.to == "month" else "%Y"
        codes, uniques = _factorize(_as_datetimes(series, where))
        return _expand(codes, [ts.strftime(fmt) for ts in uniques], series), len(uniques)

    def free_text(self, table: str, series: pd.Series) -> pd.Series:
        codes, uniques = _factorize(series)
        occurrences = np.bincount(codes[codes >= 0], minlength=len(uniques))
        totals: Counter = Counter()
        mapped = []
        for text, times in zip(uniques, occurrences):
            if not isinstance(text, str):
                mapped.append(text)
                continue
            # Patterns first: their placeholders contain nothing the value index could match,
            # while the surrogates the index inserts would otherwise be redacted again.
            text, hits = _redact_patterns(text)
            text, values = self.index.replace(text)
            hits["value"] += values
            totals.update({k: v * int(times) for k, v in hits.items()})
            mapped.append(text)
        self.counts.append(_count(table, str(series.name), "free_text", series, len(uniques), **totals))
        return _expand(codes, mapped, series)


def deidentify(
    tables: Mapping[str, pd.DataFrame],
    rules: DeidRules,
    key: bytes | str | None = None,
    today: date | None = None,
) -> DeidResult:
    """De-identify tables by their rules; `key` defaults to load_key(rules)."""
    key = load_key(rules) if key is None else _checked_key(key)
    _check_rules(tables, rules)
    surrogates = any(r.rule == "surrogate" for t in rules.tables.values() for r in t.columns.values())
    originals = _original_index(tables, rules) if surrogates else None
    run = _Run(_Engine(key, originals), collect_values=any(t.free_text for t in rules.tables.values()))
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
    out: dict[str, pd.DataFrame] = {}
    for name, df in tables.items():
        changes = new_columns.get(name, {})
        dropped = [c for c, s in changes.items() if s is None]
        kept = {c: s for c, s in changes.items() if s is not None}
        out[name] = df.drop(columns=dropped).assign(**kept) if changes else df.copy()
    return DeidResult(
        tables=out,
        rule_set_sha256=rules.sha256(),
        method=METHOD,
        date=today or date.today(),
        counts=run.counts,
    )


# ---------------------------------------------------------------- residual check


class ResidualFinding(BaseModel):
    """Where something personal was found; deliberately without the value itself."""

    model_config = ConfigDict(extra="forbid")

    table: str
    column: str
    row: str
    kind: str  # "original_value" or a pattern kind: iban, email, account, phone
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


def _original_index(original_tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> _ValueIndex:
    index = _ValueIndex()
    for name in sorted(rules.tables):
        for column, rule in sorted(rules.tables[name].columns.items()):
            if rule.rule in _HIDING_RULES:
                for value in pd.unique(original_tables[name][column].dropna()):
                    index.add(_canon(value), "", f"{name}.{column}")
    return index.freeze()


def _is_text_column(series: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(series) or series.dtype == object


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
    _check_rules(original_tables, rules)
    index = _original_index(original_tables, rules)
    counts: Counter = Counter()
    findings: list[ResidualFinding] = []
    scanned = 0
    for name in sorted(deid_tables):
        df = deid_tables[name]
        ruled = set(rules.tables[name].columns) if name in rules.tables else set()
        for column in df.columns:
            if not _is_text_column(df[column]):
                continue
            hits, occurrences, codes = _scan_column(df[column], index, patterns=column not in ruled)
            scanned += int((codes >= 0).sum())
            for i, found in hits.items():
                counts.update({kind: int(occurrences[i]) for kind, _ in found})
            room = max_findings - len(findings)
            findings += _locations(name, str(column), df.index, codes, hits, room)
    total = sum(counts.values())
    return ResidualReport(
        cells_scanned=scanned, counts=dict(counts), findings=findings, truncated=len(findings) < total
    )


def _scan_column(
    series: pd.Series, index: _ValueIndex, patterns: bool
) -> tuple[dict[int, list[tuple[str, str | None]]], np.ndarray, np.ndarray]:
    codes, uniques = _factorize(series)
    occurrences = np.bincount(codes[codes >= 0], minlength=len(uniques))
    hits: dict[int, list[tuple[str, str | None]]] = {}
    for i, text in enumerate(uniques):
        if not isinstance(text, str):
            continue
        found = sorted({("original_value", source) for _, _, _, source in index.finditer(text)})
        if patterns:
            found += [(kind, None) for kind in _redact_patterns(text)[1]]
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
