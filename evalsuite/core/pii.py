"""Personal data in text: every detector named once, with its pattern and its check, and known values found as words.

Three callers, two strictnesses. The source scan (sourcing.pii_scan) judges whole columns and a hit blocks the
build, so it keeps only verified hits: IBAN mod-97, card Luhn and issuer, phone numbering plans (phonenumbers),
first names, whole person names (names_in). The de-identification scrub and residual check (deid.text,
deid.residual) work on free text, where a miss leaks, so a shape is enough there for IBANs, e-mails, accounts and
phones (cards keep their Luhn check: 13-19 digits are too common otherwise), and find_in_text adds what a person
hiding a value writes: spelled-out e-mails, IBANs in any case and grouping (mod-97 checked) and person names
(names_in, on the name lists Faker ships, chosen over names-dataset by bench/bench_names.py). The evidence site's
leak scan (site.sanitize) and the residual check look for the original values of hidden columns with ValueIndex,
which finds them disguised too (spaced, dotted, split, reordered, "at"/"dot" spelled out). Columns declared
synthetic are judged with personal_hits and made_up (sourcing.synthetic).
"""
from __future__ import annotations

import importlib
import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from itertools import accumulate
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import phonenumbers

if TYPE_CHECKING:
    import pyarrow as pa

# None: numbers in international form only; the regions: national forms of the countries tried as well.
PHONE_REGIONS: tuple[str | None, ...] = (None, "US", "GB", "DE", "FR")
NAME_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_BR")

# Registered IBAN lengths by country (SWIFT IBAN registry).
IBAN_LENGTHS = {c: int(n) for c, n in re.findall(r"([A-Z]{2})(\d\d)", (
    "AD24AE23AL28AT20AZ28BA20BE16BG22BH22BR29BY28CH21CR22CY28CZ24DE22DK18DO28EE20EG29ES24FI18FO18FR27GB22GE22"
    "GI23GL18GR27GT28HR21HU28IE22IL23IQ23IS26IT27JO30KW30KZ20LB28LC32LI21LT20LU20LV21MC27MD24ME22MK19MR27MT31"
    "MU30NL18NO15PK24PL28PS29PT25QA29RO24RS22SA24SC31SE24SI19SK24SM27ST25SV28TL23TN24TR26UA29VA22VG24XK20"))}

_IBAN_DIGITS = str.maketrans({c: str(int(c, 36)) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"})  # A=10 … Z=35

# Card issuers: (prefix ranges as (low, high, digits of prefix), allowed lengths).
CARD_ISSUERS = (
    ((4, 4, 1), (13, 16, 19)),  # Visa
    ((51, 55, 2), (16,)), ((2221, 2720, 4), (16,)),  # Mastercard
    ((34, 34, 2), (15,)), ((37, 37, 2), (15,)),  # American Express
    ((6011, 6011, 4), (16, 19)), ((644, 649, 3), (16, 19)), ((65, 65, 2), (16, 19)),  # Discover
    ((3528, 3589, 4), (16, 19)),  # JCB
    ((300, 305, 3), (14,)), ((36, 36, 2), (14,)), ((38, 39, 2), (14, 16)),  # Diners Club
    ((62, 62, 2), (16, 17, 18, 19)),  # UnionPay
)

STREET_TYPES = ("Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Terrace|Way|"
                "Parkway|Pkwy|Highway|Hwy|Square|Sq|Circle|Cir|Trail|Crescent|Close|Gardens|Plaza|Alley|Row|Walk")

# ---------------------------------------------------------------- the detectors' patterns

# local@domain.tld, the domain's labels in any script, its last label letters only. Spelled for Python's re and for
# RE2 (pyarrow), which has no lookaround and whose \w is ASCII: the same pattern in two engines.
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?![\w-])")
EMAIL_RE2 = r"(^|[^\pL\pN_.+-])[\pL\pN_.+-]+@[\pL\pN_-]+(\.[\pL\pN_-]+)*\.\pL{2,}($|[^\pL\pN_-])"
# An IBAN as it is written: country, check digits, then the rest in one run or in groups of four (ISO 13616's
# printed form); iban_end cuts a match at its country's length, ibans_in keeps those with a valid check.
IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])")
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
GROUPED_CARD = re.compile(r"\d{4}(?:[ -]\d{4}){3}(?:[ -]\d{1,3})?|\d{4}[ -]\d{6}[ -]\d{4,5}")
# Bank account numbers in free text: a bare run of 8-18 digits, not part of an amount or a longer token.
ACCOUNT = re.compile(r"(?<![\w.,+-])\d{8,18}(?!\w|[.,]\d)")
# A phone number's shape in free text; phone_shaped() decides (digit count, not a date).
PHONE = re.compile(r"(?<![\w+-])(?:\+|\()?\d[\d ().-]{7,22}\d(?![\w-])")
# An amount or plain number (1 234 567, 16728.19): a region's numbering plan may accept its digits as a phone.
NUMBER = re.compile(r"\d{1,3}(?:[,\s]\d{3})*(?:\.\d+)?|\d{1,3}(?:[.\s]\d{3})*(?:,\d+)?|\d+[.,]\d+")
_PHONE_SPAN = re.compile(r"\+?\(?\d[\d\s().\-/]{5,}\d")
_PHONE_SEPARATED = re.compile(r"\d[\s().\-/]+\d")
_DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}")
ADDRESS = re.compile(
    rf"\b\d{{1,6}}[A-Za-z]?,?\s+(?:[A-Z][\w'’.-]*\s+){{1,4}}(?:{STREET_TYPES})\b"
    r"|\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm)\s+\d{1,4}[a-z]?\b"
    r"|\b\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?i:rue|avenue|boulevard|chemin|allée|impasse|place|quai)\s+\w")
_NAME_WORD = r"[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿß'’]+"
_NAME_TOKEN = rf"{_NAME_WORD}(?:-{_NAME_WORD})?"
# A whole value shaped "Firstname [M.] Lastname", optionally with a title or suffix; group "first" is the first name.
NAME = (r"(?:(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.? )?"
        rf"(?P<first>{_NAME_WORD})(?:-{_NAME_WORD})?(?: [A-Z]\.?)?(?: {_NAME_TOKEN}){{1,2}}"
        r"(?:,? (?:Jr\.?|Sr\.?|II|III|IV|MD|DDS|DVM|PhD))?")


# ---------------------------------------------------------------- the detectors' checks

def iban_valid(text: str) -> bool:
    """Registered length for its country and mod-97 remainder 1 (ISO 13616)."""
    s = text.replace(" ", "")
    if IBAN_LENGTHS.get(s[:2]) != len(s) or not s.isalnum():
        return False
    return int((s[4:] + s[:4]).translate(_IBAN_DIGITS)) % 97 == 1


def iban_end(m: re.Match) -> int:
    """Where an IBAN-shaped match ends at its country's registered length, when a space or the match's end falls
    there (so "GB82 WEST 1234 5698 7654 32 EUR" is the IBAN without "EUR"); otherwise where the match ends."""
    text, wanted, seen = m.group(), IBAN_LENGTHS.get(m.group()[:2]), 0
    for i, c in enumerate(text):
        seen += c != " "
        if seen == wanted:
            return m.start() + i + 1 if text[i + 1:i + 2] in ("", " ") else m.end()
    return m.end()


def ibans_in(text: str) -> list[str]:
    """Valid IBANs, printed in groups or not."""
    return [iban for m in IBAN.finditer(text) if iban_valid(iban := text[m.start():iban_end(m)])]


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def card_valid(digits: str) -> bool:
    """An issuer's prefix and length, a Luhn check, and not one digit repeated."""
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1 or not luhn_valid(digits):
        return False
    return any(low <= int(digits[:width]) <= high and len(digits) in lengths
               for (low, high, width), lengths in CARD_ISSUERS)


def phone_shaped(text: str) -> bool:
    """A PHONE match that is one: 9-15 digits and no date in it (a date-time has 12, a date 8)."""
    return 9 <= sum(c.isdigit() for c in text) <= 15 and not _DATE_LIKE.search(text)


def phones_in(text: str, regions: tuple[str | None, ...] = PHONE_REGIONS) -> list[str]:
    """Valid phone numbers written with a + or separators, for the international form or any region."""
    found: list[str] = []
    spans = _PHONE_SPAN.findall(text)
    if not any(7 <= sum(c.isdigit() for c in m) <= 15 and not NUMBER.fullmatch(m) for m in spans):
        return found  # no digit group long enough to be a phone: skip the costly matcher
    for region in regions:
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            if m.start and (text[m.start - 1].isalnum() or text[m.start - 1] in "-_/#."):
                continue  # the tail of an id (INV-2024-000123), not a number on its own
            if _written(m.raw_string) and m.raw_string not in found:
                found.append(m.raw_string)
        if found:
            return found  # the other regions would find the same numbers again
    return found


def _written(raw: str) -> bool:
    """Written as a phone number: with a +, or digit groups with separators that do not make an amount."""
    return raw.startswith("+") or bool(_PHONE_SEPARATED.search(raw) and not NUMBER.fullmatch(raw))


@lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """First names of Faker's person providers for NAME_LOCALES."""
    names: set[str] = set()
    for locale in NAME_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        names |= set(provider.first_names)
    return frozenset(names)


# ---------------------------------------------------------------- free text

# The free-text detectors, in the order that settles overlaps: an IBAN or e-mail is taken whole before its digits
# could look like a card, an account or a phone number.
TEXT_KINDS = ("iban", "email", "card", "account", "phone")
# What find_in_text reports: the patterns' kinds and person names.
FREE_TEXT_KINDS = (*TEXT_KINDS, "name")
_TEXT_PATTERNS = {"iban": IBAN, "email": EMAIL, "card": CARD, "account": ACCOUNT, "phone": PHONE}
# One alternation per kind onwards: one regex pass finds the first kind whose shape matches at a place, and where
# its check fails the later kinds are tried at the same place.
_FROM = [re.compile("|".join(f"(?P<{k}>{_TEXT_PATTERNS[k].pattern})" for k in TEXT_KINDS[i:]))
         for i in range(len(TEXT_KINDS))]
_ANY_DIGIT = re.compile(r"\d")

Hit = tuple[int, int, str]  # start, end, kind


def _end(m: re.Match) -> int | None:
    """Where a free-text hit ends, or None where the kind's check fails (cards: Luhn and issuer; phones: shape)."""
    kind = m.lastgroup
    if kind == "iban":
        return iban_end(m)
    if kind == "card" and not card_valid(re.sub(r"\D", "", m.group())):
        return None
    if kind == "phone" and not phone_shaped(m.group()):
        return None
    return m.end()


def _hit_at(text: str, m: re.Match) -> Hit | None:
    """The first kind, from m's on, whose shape matches where m starts and whose check holds."""
    while m is not None:
        if (end := _end(m)) is not None:
            return m.start(), end, m.lastgroup or ""
        rest = TEXT_KINDS.index(m.lastgroup or "") + 1
        m = _FROM[rest].match(text, m.start()) if rest < len(TEXT_KINDS) else None
    return None


def _pattern_hits(text: str) -> list[Hit]:
    """Non-overlapping hits of TEXT_KINDS, left to right; where two start together the earlier kind wins."""
    if "@" not in text and not _ANY_DIGIT.search(text):  # every one of these detectors needs a digit or an "@"
        return []
    hits: list[Hit] = []
    pos = 0
    while (m := _FROM[0].search(text, pos)) is not None:
        hit = _hit_at(text, m)
        hits += [hit] if hit else []
        pos = hit[1] if hit else m.end()  # no kind holds: what the first shape took is not looked at again
    return hits


# An e-mail address written out to get past filters: "zed dot quill at protonmail dot example", "zed[at]proton.me",
# "zed (at) proton (dot) me". The "at" must be spelled or spaced: a plain address is EMAIL's.
_DOT = r"(?:\.|\s+(?i:dot)\s+|\s*[\[({](?i:dot)[\])}]\s*)"
_AT = r"(?:\s+(?i:at)\s+|\s*[\[({](?i:at)[\])}]\s*|\s+@\s*|\s*@\s+)"
SPELLED_EMAIL = re.compile(rf"(?<![\w.+-])[\w+-]+(?:{_DOT}[\w+-]+)*{_AT}[\w-]+(?:{_DOT}[\w-]+)*{_DOT}[^\W\d_]{{2,}}"
                           r"(?![\w-])")
_AT_HINT = re.compile(r"(?i:\bat\b)|@")
# Where an IBAN written any way may start: its country and check digits, possibly spaced ("g b 8 2", "gb82").
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][ .-]?[A-Za-z][ .-]?\d[ .-]?\d")


def _iban_from(text: str, start: int) -> int | None:
    """Where an IBAN that starts at `start` ends, written in any case and split anywhere by single spaces, dots or
    hyphens, if its country's registered length of letters and digits ends at a word's end and mod-97 holds."""
    chars = [c for c in text[start:start + 8] if c.isascii() and c.isalnum()][:2]
    want = IBAN_LENGTHS.get("".join(chars).upper())
    i, seen = start, 0
    while want and i < len(text) and seen < want:
        if text[i].isascii() and text[i].isalnum():
            seen, i = seen + 1, i + 1
        elif text[i] in " .-" and i + 1 < len(text) and text[i + 1].isascii() and text[i + 1].isalnum():
            i += 1
        else:
            break
    if not want or seen != want or (i < len(text) and text[i].isascii() and text[i].isalnum()):
        return None
    return i if iban_valid(re.sub(r"[^A-Za-z0-9]", "", text[start:i]).upper()) else None


def _disguised_hits(text: str) -> list[Hit]:
    """Spelled-out e-mails and IBANs in lower case or odd groupings (checked with mod-97)."""
    hits: list[Hit] = [(m.start(), m.end(), "email") for m in SPELLED_EMAIL.finditer(text)] if _AT_HINT.search(
        text) else []
    for m in _IBAN_START.finditer(text) if _ANY_DIGIT.search(text) else ():
        if (end := _iban_from(text, m.start())) is not None:
            hits.append((m.start(), end, "iban"))
    return hits


def _without_overlaps(hits: list[Hit]) -> list[Hit]:
    """Hits left to right; of overlapping ones the first listed (and so the earlier detector) is kept."""
    kept: list[Hit] = []
    for hit in sorted(hits, key=lambda h: h[0]):
        if not kept or hit[0] >= kept[-1][1]:
            kept.append(hit)
        elif hit[1] > kept[-1][1] and hit[2] != "name":
            kept[-1] = (kept[-1][0], hit[1], kept[-1][2])  # a disguised value reaching further: take all of it
    return kept


# What every hit of find_in_text needs in ASCII text, where \w, \d and \s are these classes: an "@", an IBAN's
# country and check digits, 8 digits, a phone's or grouped card's digits and separators, a spelled "at", an IBAN's
# start written any way, and what every form of a name has: two words apart by spaces, or an initial before a word.
_ASCII_SPACE = r"[\t\n\x0b\f\r\x1c-\x1f ]"
_FREE_TEXT_SHAPES = "|".join((
    "@", r"[A-Z]{2}[0-9]{2}", r"[0-9]{8}", r"[0-9][0-9 ().-]{7,}[0-9]",
    r"(?:^|[^A-Za-z0-9_])[aA][tT](?:[^A-Za-z0-9_]|$)",
    r"(?:^|[^A-Za-z0-9])[A-Za-z][ .-]?[A-Za-z][ .-]?[0-9][ .-]?[0-9]", rf"[A-Za-z][.,]?{_ASCII_SPACE}+[A-Za-z]",
    r"[A-Z]\.[A-Za-z]"))


def may_hold_hits(texts: pa.Array) -> np.ndarray:
    """Per text of a pyarrow string array, False where find_in_text surely finds nothing: ASCII text that holds no
    shape any detector needs (_FREE_TEXT_SHAPES, one RE2 pass over the whole array). Text that is not ASCII, where
    Python's classes reach further than these, is never ruled out; nulls are."""
    import pyarrow.compute as pc  # imported here: only whole columns are prefiltered

    shaped = pc.or_kleene(pc.invert(pc.string_is_ascii(texts)), pc.match_substring_regex(texts, _FREE_TEXT_SHAPES))
    return np.asarray(shaped.fill_null(False), dtype=bool)


def find_in_text(text: str, names: bool = True) -> list[Hit]:
    """Non-overlapping hits of FREE_TEXT_KINDS, left to right: TEXT_KINDS' patterns first, then spelled-out
    e-mails and IBANs written any way, then (with names) person names."""
    hits = _pattern_hits(text)
    hits = _without_overlaps(hits + _disguised_hits(text))
    if names:
        hits = _without_overlaps(hits + [(a, b, "name") for a, b in names_in(text)])
    return hits


# ---------------------------------------------------------------- known values

# Shorter strings ("Li", "17", "AB") occur inside ordinary text by chance; matching them
# would shred notes and flood the residual report with false leaks.
MIN_VALUE_LEN = 4

_WORD = re.compile(r"\w+")
# Disguised values ("R o b e r t o  D a v i s", "browningjason at hamilton dot com", "gb49 hbre 4628 ..."): a value
# is also looked for as its skeleton (its letters and digits, lower-cased, with spelled "at" and "dot" left out)
# among the skeleton of the text, starting and ending where words do. Short skeletons would match by chance.
MIN_SKELETON_LEN = 8
_SKELETON_KEY = 6  # how many first characters of a skeleton rule a place out
_RUN = re.compile(r"[^\W_]+")
_SPELLED = frozenset({"at", "dot"})
_NAME_LIKE = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*,?")


def skeleton_runs(text: str) -> list[tuple[int, int, str]]:
    """(start, end, lower-cased) of each run of letters and digits, spelled "at" and "dot" left out."""
    return [(m.start(), m.end(), low) for m in _RUN.finditer(text) if (low := m.group().lower()) not in _SPELLED]


def skeleton(text: str) -> str:
    return "".join(low for *_, low in skeleton_runs(text))


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


def _skeletons(low: pa.Array) -> pa.Array:
    """skeleton() of each lower-cased text in bulk: its runs of letters and digits joined, a run that is a spelled
    "at" or "dot" cut out (runs two spaces apart, so each is cut out on its own). Text holding neither word, ids and
    amounts, is just its letters and digits: one pass instead of four."""
    import pyarrow.compute as pc

    if not pc.any(pc.or_(pc.match_substring(low, "at"), pc.match_substring(low, "dot"))).as_py():
        return pc.replace_substring_regex(low, r"[^a-z0-9]+", "")
    runs = pc.binary_join_element_wise("  ", pc.replace_substring_regex(low, r"[^a-z0-9]+", "  "), "  ", "")
    return pc.replace_substring(pc.replace_substring_regex(runs, " (?:at|dot) ", " "), " ", "")


class ValueIndex:
    """Known strings found in text: case-insensitive, whole words, longest first.

    One big regex alternation would do the same, but Python's re compiles 250k names
    in tens of seconds and tries every alternative at every position. Here values are
    filed under their first two words, so each word of a text costs two dict lookups
    plus a check of the few values filed under it, whatever the number of values.
    """

    def __init__(self, disguised: bool = False) -> None:
        self.disguised = disguised  # also find values disguised (skeletons); off for values that are not personal
        self._values: dict[str, tuple[str, str]] = {}  # lower-cased value -> (replacement, source)
        # (first word, second word or "") -> [(lower-cased value, offset of its first word)]
        self._by_words: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self._firsts: set[str] = set()
        self._skeletons: dict[str, str] = {}  # skeleton -> lower-cased value
        self._prefixes: set[str] = set()  # the skeletons' first characters, to rule out most places at once
        self._longest = 0

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
        if self.disguised:
            self._add_skeletons(low)

    def _add_skeletons(self, low: str) -> None:
        words = low.split()
        named = 2 <= len(words) <= 3 and all(_NAME_LIKE.fullmatch(w) for w in words)
        swapped = [" ".join(words[1:] + words[:1])] if named else []
        for form in [low, *swapped]:  # "Davis, Roberto" is Roberto Davis too
            if len(sk := skeleton(form)) >= MIN_SKELETON_LEN and sk not in self._skeletons:
                self._skeletons[sk] = low
                self._prefixes.add(sk[:_SKELETON_KEY])
                self._longest = max(self._longest, len(sk))

    def items(self) -> Iterator[tuple[str, str, str]]:
        """(lower-cased value, replacement, source) of every value, in the order they were added."""
        return ((value, replacement, source) for value, (replacement, source) in self._values.items())

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

    def may_occur_in(self, texts: pa.Array) -> np.ndarray:
        """Per text of a pyarrow string array, False where finditer surely finds nothing: ASCII text none of whose
        words is a value's first word and whose skeleton holds no value skeleton's first characters anywhere (RE2
        over the whole array). Text that is not ASCII is never ruled out; nulls are."""
        import pyarrow as pa
        import pyarrow.compute as pc

        low = pc.ascii_lower(texts)
        words = pc.split_pattern_regex(low, r"[^a-z0-9_]+")  # _WORD's words, in ASCII
        parents = np.asarray(pc.list_parent_indices(words))
        known = pa.array(sorted(w for w in self._firsts if w.isascii()), pa.string())
        maybe = np.zeros(len(texts), dtype=bool)
        maybe[parents[np.asarray(pc.is_in(pc.list_flatten(words), value_set=known), dtype=bool)]] = True
        prefixes = sorted(p for p in self._prefixes if re.fullmatch(r"[a-z0-9]+", p))
        if prefixes:
            held = pc.match_substring_regex(_skeletons(low), "|".join(prefixes))
            maybe |= np.asarray(held.fill_null(False), dtype=bool)
        return maybe | ~np.asarray(pc.string_is_ascii(texts).fill_null(True), dtype=bool)

    def finditer(self, text: str) -> Iterator[tuple[int, int, str, str]]:
        """(start, end, replacement, source) of each non-overlapping match, left to right: whole words first,
        then disguised forms of values elsewhere in the text."""
        exact = list(self._exact(text))
        disguised = list(self._disguised(text, exact)) if self._skeletons else []
        yield from sorted(exact + disguised) if disguised else exact

    def _disguised(self, text: str, taken: list[tuple[int, int, str, str]]) -> Iterator[tuple[int, int, str, str]]:
        runs = [m for m in _RUN.finditer(_lower(text)) if m.group() not in _SPELLED]
        words = [m.group() for m in runs]
        offsets = list(accumulate(map(len, words), initial=0))  # where each run starts in the skeleton
        sk, done = "".join(words), -1
        for i, run in enumerate(runs):
            if run.start() < done or sk[offsets[i]:offsets[i] + _SKELETON_KEY] not in self._prefixes:
                continue
            last = bisect_right(offsets, offsets[i] + self._longest) - 1
            for j in range(last, i, -1):  # the longest skeleton that starts here and ends where a word does
                value = self._skeletons.get(sk[offsets[i]:offsets[j]])
                if value is not None:
                    end = runs[j - 1].end()
                    if not any(a < end and run.start() < b for a, b, *_ in taken):
                        done = end
                        yield run.start(), end, *self._values[value]
                    break

    def _exact(self, text: str) -> Iterator[tuple[int, int, str, str]]:
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


# ---------------------------------------------------------------- person names in free text

# Honorifics before a name ("Dr. Hannah Schmidt", "mrs. jackson"): after one, a single word is a name.
TITLES = "Mr|Mrs|Ms|Mx|Miss|Dr|Prof|Herr|Frau|Mme|Mlle|Sr|Sra|Sir|Dame"
# Words after a name that make it a firm's ("Hayes, Johnson and Shannon", "Kelley Inc", "Morgan Group").
COMPANY_WORDS = "and|&|Inc|LLC|Ltd|PLC|GmbH|AG|SA|SAS|BV|NV|Group|Sons|Co|Corp|Partners|Holdings|Industries"
# Family-name particles ("Pieter de Vries", "Ludwig van Beethoven", "Carlos de la Cruz").
PARTICLES = "de|da|das|do|dos|di|del|della|du|la|le|van|von|der|den|ter|ten|bin|ibn|al|el"
_PART = r"[^\W\d_]+(?:['’][^\W\d_]+)?"
_WORD_ = rf"{_PART}(?:-{_PART})*(?![\w'’-])"  # Okonkwo-Bright, O'Connor, Jean-Pierre; any case; whole words
_FIRM_AFTER = rf"(?!,?\s+(?i:{COMPANY_WORDS})\b)"
# The forms a name takes, each tried where a word of the lexicon (or a title or an initial) starts.
_TITLED = re.compile(rf"(?i:{TITLES})\.?\s+(?P<a>{_WORD_})(?:\s(?P<b>{_WORD_}))?")
_INITIALED = re.compile(rf"[A-Z]\.(?:\s?[A-Z]\.)?\s?(?P<a>{_WORD_}){_FIRM_AFTER}")
_LAST_FIRST = re.compile(rf"(?P<a>{_WORD_}),\s(?P<b>{_WORD_})(?:\s[A-Z]\.)?{_FIRM_AFTER}")
_FIRST_LAST = re.compile(
    rf"(?P<a>{_WORD_})(?:\s[A-Z]\.)?(?P<p>(?:\s(?:{PARTICLES})){{0,2}})\s(?P<b>{_WORD_}){_FIRM_AFTER}")
_NAME_START = re.compile(rf"(?<![\w'’-])(?:[A-Z]\.|{_WORD_})")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+)$")
_SURNAME_SHAPE = re.compile(r"(?:O['’]|Mc|Mac|Fitz)[A-Z][a-z]+")  # O'Neil, McAllister: surnames if not listed
_TITLE_WORDS = frozenset(TITLES.lower().split("|"))


class NameLexicon(NamedTuple):
    first: frozenset[str]
    last: frozenset[str]
    common: frozenset[str]  # common English words: "may price" in lower-case text is not a name
    places: frozenset[str]  # cities and countries: "Gould-Foster, Berlin" is a firm and its city
    names: frozenset[str]  # first and last


@lru_cache(maxsize=1)
def name_lexicon() -> NameLexicon:
    """Lower-cased names of every person provider Faker ships (86 locales, romanised forms included), Faker's
    English word list and its address providers' cities and countries."""
    first: set[str] = set()
    last: set[str] = set()
    for attr, value in _provider_lists("person"):
        if "first_" in attr or "last_" in attr:
            (first if "first_" in attr else last).update(v.lower() for v in value if " " not in v)
    places = {v.lower() for attr, value in _provider_lists("address") if "cit" in attr or "countr" in attr
              for v in value}
    import faker.providers.lorem.en_US as lorem

    return NameLexicon(frozenset(first), frozenset(last), frozenset(lorem.Provider.word_list), frozenset(places),
                       frozenset(first | last))


def _provider_lists(kind: str) -> Iterator[tuple[str, list[str]]]:
    """(attribute, its strings) of every list-valued attribute of Faker's providers of a kind, every locale."""
    import pkgutil

    package = importlib.import_module(f"faker.providers.{kind}")
    for module in pkgutil.iter_modules(package.__path__):
        provider = importlib.import_module(f"{package.__name__}.{module.name}").Provider
        for attr, value in vars(provider).items():
            if isinstance(value, (dict, tuple, list)):
                yield attr, [v for v in value if isinstance(v, str)]


def _listed(word: str, names: frozenset[str]) -> bool:
    """A (hyphenated) word whose every part is in names: "Okonkwo-Bright" with Okonkwo and Bright surnames."""
    return all(part.lower() in names for part in word.split("-"))


def _pair(a: str, b: str, lex: NameLexicon, particle: bool = False) -> bool:
    """Two words that make a name: first then last (or family name first, "Chen Wei"), capitalised; or in
    lower-case text a first and a last name neither of which is a common English word. After a particle ("de",
    "van") any capitalised word is a family name."""
    if a[0].isupper() and b[0].isupper():
        surname = particle or _listed(b, lex.names) or bool(_SURNAME_SHAPE.fullmatch(b))
        return _listed(a, lex.names) and surname and (_listed(a, lex.first) or _listed(b, lex.first))
    return (a.islower() and b.islower() and _listed(a, lex.first) and _listed(b, lex.last)
            and not {a, *b.split("-")} & lex.common)


def _name_end(text: str, pos: int, lex: NameLexicon) -> int:
    """Where the longest name starting at pos ends, or pos where none does."""
    end = pos
    if (m := _TITLED.match(text, pos)) and (m.group("a")[0].isupper() or _listed(m.group("a"), lex.names)):
        b = m.group("b")
        two = b is not None and (b[0].isupper() if m.group("a")[0].isupper() else _listed(b, lex.last))
        end = max(end, m.end() if two else m.end("a"))
    if (m := _INITIALED.match(text, pos)) and m.group("a")[0].isupper() and _listed(m.group("a"), lex.last):
        end = max(end, m.end())
    if (m := _LAST_FIRST.match(text, pos)) and m.group("a")[0].isupper() and m.group("b")[0].isupper() and (
            _listed(m.group("a"), lex.last) and _listed(m.group("b"), lex.first)
            and m.group("b").lower() not in lex.places):
        end = max(end, m.end())
    if (m := _FIRST_LAST.match(text, pos)) and _pair(m.group("a"), m.group("b"), lex, bool(m.group("p"))) and not (
            m.group("a").lower() in lex.common and _SENTENCE_START.search(text, 0, pos)):
        end = max(end, m.end())  # a sentence's first word that is also an English word ("Per", "Will") is that word
    return end


def names_in(text: str, lexicon: NameLexicon | None = None) -> list[tuple[int, int]]:
    """Spans of person names in free text, left to right, overlapping ones merged: "Marguerite Okonkwo-Bright",
    "marguerite okonkwo-bright", "Okonkwo-Bright, Marguerite", "B. Ortiz", "Dr. Hannah Schmidt", "Maria J. Garcia",
    "Pieter de Vries". Words are judged by name_lexicon(); a firm named after people ("Hayes, Johnson and Shannon",
    "Morgan Group") is not a name, nor is a single word without a title or an initial (too many are words too)."""
    lex = lexicon or name_lexicon()
    spans: list[tuple[int, int]] = []
    for m in _NAME_START.finditer(text):
        word = m.group().lower()
        if not (word.endswith(".") or word in _TITLE_WORDS or word.split("-")[0] in lex.first
                or word.split("-")[0] in lex.last):
            continue  # no form starts with a word that is not a name, a title or an initial
        end = _name_end(text, m.start(), lex)
        if end > m.start():
            if spans and m.start() <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((m.start(), end))
    return spans


# ---------------------------------------------------------------- values that are made up

# The example IBANs the SWIFT IBAN registry, ISO 13616 and the common references print (each passes mod-97):
# a benchmark's invented accounts are often these. A real account is not.
EXAMPLE_IBANS = frozenset((
    "DE89370400440532013000 GB29NWBK60161331926819 GB82WEST12345698765432 CH9300762011623852957 "
    "SE3550000000054910000003 SE4550000000058398257466 FR1420041010050500013M02606 NL91ABNA0417164300 "
    "BE68539007547034 ES9121000418450200051332 IT60X0542811101000000123456 AT611904300234573201 DK5000400440116243 "
    "FI2112345600000785 NO9386011117947 PL61109010140000071219812874 PT50000201231234567890154 "
    "IE29AIBK93115212345678 LU280019400644750000 CZ6508000000192000145399").split())
# Domains reserved for documentation and tests (RFC 2606, RFC 6761): no one's mailbox is there.
RESERVED_DOMAIN = re.compile(r"(?:^|\.)(?:example\.(?:com|net|org)|[^.]+\.(?:example|test|invalid|localhost)|"
                             r"example|test|invalid|localhost)$", re.IGNORECASE)
# Numbers reserved for fiction: NANP 555-0100 to 555-0199; Ofcom's drama ranges (01632 960xxx, 020 7946 0xxx,
# 07700 900xxx), written nationally or with +1 / +44.
FICTIONAL_PHONE = re.compile(r"(?:1?\d{3}55501\d\d|(?:44|0)(?:1632960\d{3}|2079460\d{3}|7700900\d{3}))")


def made_up(value: str, kind: str) -> bool:
    """Whether a detector's hit is recognisably invented: an e-mail at a reserved domain, a phone number of a
    fictional range, a published example IBAN. Person names, cards and addresses never are: nothing in a name
    says it was invented."""
    if kind == "email":
        return bool(RESERVED_DOMAIN.search(value.rsplit("@", 1)[-1].rstrip(".")))
    if kind == "phone":
        return bool(FICTIONAL_PHONE.fullmatch(re.sub(r"\D", "", value)))
    if kind == "iban":
        return re.sub(r"[^A-Za-z0-9]", "", value).upper() in EXAMPLE_IBANS
    return False


_EXTENSION = re.compile(r"\s*(?:x|ext\.?)\s*\d{1,6}\b", re.IGNORECASE)


def personal_hits(value: str, kind: str) -> list[str]:
    """What a source-scan detector of `kind` finds in one value (e-mails, phones, IBANs, cards; a whole name), for
    judging a column it has found such values in."""
    if kind == "email":
        return EMAIL.findall(value)
    if kind == "phone":  # as in free text, a phone's shape is enough: a column of phones has invalid ones too
        bare = _EXTENSION.sub("", value)  # 426.951.6761x2220: the extension is not part of the shape
        return phones_in(value) or [m for m in PHONE.findall(bare) if phone_shaped(m)]
    if kind == "iban":
        return ibans_in(value)
    if kind == "card":
        return [m for m in CARD.findall(value) if card_valid(re.sub(r"\D", "", m))]
    if kind == "person_name":
        spans = names_in(value.strip())
        return [value] if spans and spans[0] == (0, len(value.strip())) else []
    return []
