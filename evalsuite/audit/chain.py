"""A JSON-lines file whose lines carry a hash chain, so a line added, edited or removed by hand is found.

Each line holds `chain`: the sha256 of the previous line as written (the empty string before the first) and the
line's own content (its object without `chain`, as canonical JSON). Appending through `chained` keeps the chain;
a line added, edited, moved or removed by other means breaks it at the line it touched, and `read_chain` names
that line and skips it. Lines cut off the end leave a chain that holds: only a copy kept elsewhere shows those.
The chain is evidence of editing outside the program, not a signature: the program can always write a new link.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from evalsuite.core.io import parse_json, read_text

CHAIN = "chain"
BROKEN = ("this line does not follow from the one before it (the file was edited, or a line added or removed, by "
          "hand); restore it as evalsuite wrote it")

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


def read_chain(path: Path, error: type[Exception]) -> tuple[list[Line], list[str], bool]:
    """The lines that follow from the chain, one `FILE:LINE: why` for each that does not or is not a JSON object
    (skipped, never fatal: a line added or edited by hand costs itself and, edited or removed, the link of the line
    after it, never the file), and whether the file was written with links at all (False: it holds JSON objects,
none with a link). A line follows when its link
    is of the line before it as written or of the last line that followed."""
    if not path.exists():
        return [], [], False
    kept: list[Line] = []
    skipped: list[str] = []
    before, last, linked, objects = "", "", False, 0
    for n, raw in enumerate(read_text(path, error).split("\n"), 1):  # not splitlines: a note may hold U+2028
        if not raw.strip():
            continue
        try:
            obj = parse_json(raw, str(path), error, first_line=n)
        except error as exc:
            obj, why = None, str(exc)
        else:
            why = f"{path}:{n}: a line of this file is a JSON object" if not isinstance(obj, dict) else None
            objects += why is None
            linked = linked or (why is None and CHAIN in obj)
        if why is None and obj.get(CHAIN) not in (link(before, obj), link(last, obj)):
            why = f"{path}:{n}: {BROKEN}"
        if why is None:
            kept.append((n, raw, obj))
            last = raw
        else:
            skipped.append(why)
        before = raw
    return kept, skipped, linked or not objects


def is_chained(lines: list[Line]) -> bool:
    """Whether the file was written with links at all (a file from before the chain has none)."""
    return any(CHAIN in obj for _, _, obj in lines)


def last_line(path: Path) -> str:
    """The file's last non-blank line as written ("" when there is none): the next line's previous link."""
    if not path.exists():
        return ""
    lines = path.read_bytes().decode("utf-8-sig").split("\n")
    return next((line for line in reversed(lines) if line.strip()), "")
