"""Markdown for people: the one table writer (scorecards, audits, Dagster metadata), lists and inline images."""
from __future__ import annotations

import base64
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


def md_list(items: list[str], empty: str = "none") -> Markdown:
    return Markdown("\n".join(f"- {i}" for i in items) or empty)


def image_markdown(png: Path, alt: str) -> Markdown:
    return Markdown(f"![{alt}](data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()})")
