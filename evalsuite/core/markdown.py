"""Markdown for people: the one table writer (scorecards, audits, Dagster metadata), lists and inline images."""
from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any


class Markdown(str):
    """Text that is Markdown: the Dagster layer shows it rendered, files and terminals take it as it is."""


def md_table(header: list[str], rows: list[list[Any]]) -> Markdown:
    """A Markdown table; a cell's "|" becomes "/" and its line breaks spaces, so no value can break the table."""

    def cell(v: Any) -> str:
        return str(v).replace("|", "/").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return Markdown("\n".join(lines + ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]))


# What Markdown (or the HTML it may hold) reads as markup inside a line: code, emphasis, links and images, raw HTML
# and comments, entities, strike-through. "_" stays: within a word (every tool and check name) it is no markup, and
# around words it could only set text in italics. A table's "|" and line breaks are md_table's.
_MARKUP = re.compile(r"([\\`*\[\]<>!~&])")


def md_text(value: Any) -> str:
    """Text from outside evalsuite (a recording's task ids, messages, licence) as Markdown that shows it as written:
    each markup character backslash-escaped and line breaks made spaces, so it adds no link, image, HTML, comment
    or line of its own to the page it is put in."""
    return _MARKUP.sub(r"\\\1", " ".join(str(value).splitlines()))


def md_list(items: list[str], empty: str = "none") -> Markdown:
    return Markdown("\n".join(f"- {i}" for i in items) or empty)


def image_markdown(png: Path, alt: str) -> Markdown:
    return Markdown(f"![{alt}](data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()})")
