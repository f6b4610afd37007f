"""Metadata for people: Markdown tables, lists and inline images that the Dagster UI renders."""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Any


class Markdown(str):
    """Metadata to show as Markdown."""


def md_table(header: list[str], rows: list[list[Any]]) -> Markdown:
    def cell(v: Any) -> str:
        return str(v).replace("|", "/").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return Markdown("\n".join(lines + ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]))


def md_list(items: list[str], empty: str = "none") -> Markdown:
    return Markdown("\n".join(f"- {i}" for i in items) or empty)


def image_markdown(png: Path, alt: str) -> Markdown:
    return Markdown(f"![{alt}](data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()})")
