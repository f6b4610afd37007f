"""Who a name stands for: one key per person, however the name is spelled, for counting reviewers and players.

A name typed into `evalsuite review --reviewer` or the `evalsuite play` sign-in is a claim, not an identity: the
same person can type `ann`, `ANN`, `ann.`, `ann (2)`, `ａｎｎ` (full width), `аnn` (a Cyrillic а), `a\u0301nn`
(a combining accent) or `ann` with a zero-width space, soft hyphen or bidi mark inside, and every one of them
must count once. `person_key` maps all of these to one key, so two keys differ only where the names read
differently to a person:

1. Unicode NFKC (full-width and other compatibility forms to their plain letters);
2. format and control characters dropped (zero-width space and joiners, soft hyphen, bidi marks: category Cf/Cc);
3. a trailing counter dropped ("(2)", "[3]", "#4", "-2", " 2");
4. combining marks stripped after canonical decomposition ("á" is "a");
5. case-folded, then each letter that Unicode's confusables data (UTS #39, as the well-kept
   `confusable_homoglyphs` package ships it) says looks like a Latin letter mapped to that letter;
6. everything that is not a letter or digit dropped (punctuation, symbols, spaces: "Ann-Marie" is "annmarie").

The key is for comparing only; the name as first written is what records and pages show.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from confusable_homoglyphs.confusables import confusables_data

# a counter a second account adds to the name: "(2)", "[2]", "#2", "-2", "_2", " 2", "2" at the very end
_COUNTER = re.compile(r"[\s\W_]*[(\[{#]?\s*\d+\s*[)\]}]?[\s\W_]*$")


class PersonNameError(ValueError):
    """A name with no letter or digit left once normalised (it could be anyone)."""


def person_key(name: str) -> str:
    """The key two spellings of one person share; raises PersonNameError when nothing of the name is left."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Cc"))
    text = latin_lookalike(_drop_counter(text)).casefold()
    key = "".join(c for c in text if c.isalnum())
    if not key:
        raise PersonNameError(f"{name!r} has no letter or digit once spelled plainly")
    return key


def latin_lookalike(text: str) -> str:
    """The text as it reads in plain Latin letters, case folded (steps 1, 2 for format characters only, 4 and 5):
    "Маrguеritе" with a Cyrillic М, а and е, "ｍａｒｇｕｅｒｉｔｅ" or "marguérite" is "marguerite". Spaces and
    line breaks stay, so words stay words."""
    text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
    table = {ord(c): "" if unicodedata.category(c) == "Cf" or unicodedata.combining(c) else _latin(c)
             for c in set(text) if not c.isascii()}  # per distinct character: a page is long, its alphabet short
    return unicodedata.normalize("NFKC", text.translate(table)).casefold()


def same_person(a: str, b: str) -> bool:
    return person_key(a) == person_key(b)


def _drop_counter(text: str) -> str:
    """The name without a trailing counter, unless the name is nothing but digits (then they are the name)."""
    stripped = _COUNTER.sub("", text)
    return stripped if any(c.isalpha() for c in stripped) else text


@lru_cache(maxsize=4096)
def _latin(char: str) -> str:
    """The ASCII letter or digit a character is confusable with (the character itself when it is ASCII or has
    none); a letter before a digit, and among several the first, so the choice is stable."""
    if char.isascii():
        return char
    glyphs = {g["c"].casefold() for form in dict.fromkeys((char, char.casefold())) for g in
              confusables_data.get(form, ()) if g["c"].isascii() and g["c"].isalnum()}  # "В" reads as B, "в" not
    letters = sorted(g for g in glyphs if g.isalpha()) or sorted(glyphs)  # "ӏ" reads as "l" before "1"
    return letters[0] if letters else char
