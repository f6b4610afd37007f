"""Quotation identity, shared by every domain whose submissions quote their sources (a review memo, a decision
brief): a quotation is the source's own words, compared up to spacing only, and long enough to identify where it
stands."""
from __future__ import annotations

MIN_QUOTE_WORDS = 3  # fewer words identify no passage: "the Receiving Party" appears everywhere


def words(text: str) -> str:
    """The text with every run of whitespace made one space: the only normalisation a quotation is allowed."""
    return " ".join(text.split())


def quotation_problem(quote: str, source: str, where: str) -> str | None:
    """Why `quote` is no quotation of `source` (named `where` in the reason), or None when it is one."""
    if len(quote.split()) < MIN_QUOTE_WORDS:
        return f"quotation {quote!r} is too short to identify a passage"
    if words(quote) not in words(source):
        return f"quotation {quote!r} is not verbatim at {where}"
    return None
