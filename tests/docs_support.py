"""The docs pages as the tests read them: a page's text, one section of it, and its fenced code blocks."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """The Markdown of docs/<name>."""
    return (DOCS / name).read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The lines under `heading` (a whole line such as "## The gates") up to the next heading of the same or a
    higher level; a `#` inside a fenced block is not a heading."""
    level = len(heading) - len(heading.lstrip("#"))
    lines, out, inside, fence = text.splitlines(keepends=True), [], False, False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        is_heading = not fence and re.match(r"#+ ", line)
        if inside and is_heading and len(line) - len(line.lstrip("#")) <= level:
            break
        if inside:
            out.append(line)
        inside = inside or line.rstrip("\n") == heading
    assert inside, f"no heading {heading!r}"
    return "".join(out)


def code_blocks(text: str, lang: str) -> list[str]:
    """The bodies of the ```lang blocks of text, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def nav_pages() -> list[str]:
    """Every page the site's nav names (mkdocs.yml), in order."""
    def walk(node) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [p for item in node for p in walk(item)]
        return [p for value in node.values() for p in walk(value)]

    return walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
