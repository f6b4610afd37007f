"""A JSON-lines file whose lines carry a hash chain, so a line added, edited or removed by hand is found.

Each line holds `chain`: the sha256 of the previous line as written (the empty string before the first) and the
line's own content (its object without `chain`, as canonical JSON). Appending through `chained` keeps the chain;
a line added, edited, moved or removed by other means breaks it at the first line it touched, and `check_chain`
names that line. Lines cut off the end leave a chain that holds: only a copy kept elsewhere shows those.
The chain is evidence of editing outside the program, not a signature: the program can always write a new link.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from evalsuite.core.io import parse_json, read_text

CHAIN = "chain"

Line = tuple[int, str, dict]  # line number, the line as written, its object


def link(previous: str, obj: dict) -> str:
    """A line's link: the sha256 of the previous line as written and this line's content (without its link)."""
    content = json.dumps({k: v for k, v in obj.items() if k != CHAIN}, sort_keys=True, ensure_ascii=False,
                         separators=(",", ":"))
    return hashlib.sha256(f"{previous}\n{content}".encode()).hexdigest()


def chained(previous: str, objects: Iterable[dict]) -> str:
    """The objects as lines, each linked to the one before (the first to `previous`, the file's last line)."""
    out = []
    for obj in objects:
        line = json.dumps({**obj, CHAIN: link(previous, obj)}, ensure_ascii=False)
        out.append(line + "\n")
        previous = line
    return "".join(out)


def read_lines(path: Path, error: type[Exception]) -> list[Line]:
    """Each non-blank line with its number and object; invalid JSON raises `error` as `FILE:LINE: ...`."""
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(read_text(path, error).split("\n"), 1):  # not splitlines: a note may hold U+2028
        if line.strip():
            obj = parse_json(line, str(path), error, first_line=n)
            if not isinstance(obj, dict):
                raise error(f"{path}:{n}: a line of this file is a JSON object")
            out.append((n, line, obj))
    return out


def is_chained(lines: list[Line]) -> bool:
    """Whether the file was written with links at all (a file from before the chain has none)."""
    return any(CHAIN in obj for _, _, obj in lines)


def check_chain(path: Path, lines: list[Line], error: type[Exception]) -> None:
    """Every line linked to the one before it; the first that is not raises `error` naming the file and line."""
    previous = ""
    for n, raw, obj in lines:
        if obj.get(CHAIN) != link(previous, obj):
            raise error(f"{path}:{n}: this line does not follow from the one before it (the file was edited, or a "
                        "line added or removed, by hand); restore it as evalsuite wrote it")
        previous = raw


def last_line(path: Path) -> str:
    """The file's last non-blank line as written ("" when there is none): the next line's previous link."""
    if not path.exists():
        return ""
    lines = path.read_bytes().decode("utf-8-sig").split("\n")
    return next((line for line in reversed(lines) if line.strip()), "")
