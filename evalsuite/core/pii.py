"""Personal data in text: every detector named once, with its pattern and its check, and known values found as words.

Three callers, two strictnesses. The source scan (sourcing.pii_scan) judges whole columns and a hit blocks the
build, so it keeps only verified hits: IBAN mod-97, card Luhn and issuer, phone numbering plans (phonenumbers),
first names. The de-identification scrub and residual check (deid.text, deid.residual) work on free text, where a
miss leaks, so a shape is enough there for IBANs, e-mails, accounts and phones (cards keep their Luhn check: 13-19
digits are too common otherwise). The evidence site's leak scan (site.sanitize) and the residual check look for the
original values of hidden columns with ValueIndex.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from functools import lru_cache

import phonenumbers

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


def find_in_text(text: str) -> list[Hit]:
    """Non-overlapping hits of TEXT_KINDS, left to right; where two start together the earlier kind wins."""
    if "@" not in text and not _ANY_DIGIT.search(text):  # every detector needs a digit or an "@"
        return []
    hits: list[Hit] = []
    pos = 0
    while (m := _FROM[0].search(text, pos)) is not None:
        hit = _hit_at(text, m)
        hits += [hit] if hit else []
        pos = hit[1] if hit else m.end()  # no kind holds: what the first shape took is not looked at again
    return hits


# ---------------------------------------------------------------- known values

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
