"""Files written whole or not at all, and text, JSON and YAML read (bounded) into pydantic models with one-line
errors."""
from __future__ import annotations

import codecs
import csv
import fcntl
import glob
import io
import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


_STAGED = re.compile(r"-[0-9a-f]{16}\.tmp")  # what _beside adds to a name for a folder being written


def _beside(path: Path, what: str = "tmp") -> Path:
    """A fresh hidden name in path's folder, unique to this call (so two writers never share it)."""
    return path.with_name(f".{path.name}-{uuid.uuid4().hex[:16]}.{what}")


def atomic_write(path: str | Path, data: bytes | str) -> Path:
    """Replace path in one step (a unique temporary file beside it, then rename), so a reader or a
    killed writer never leaves or sees half a file, and two writers never share a temporary file."""
    return write_with(path, lambda tmp: tmp.write_bytes(data.encode() if isinstance(data, str) else data))


def write_json(path: str | Path, body: Any) -> Path:
    """A JSON record replaced in one step (indented, newline-terminated)."""
    return atomic_write(path, json.dumps(body, indent=2) + "\n")


def write_with(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Let `write` fill a unique temporary file beside path (a Parquet writer, say), then rename it into place.

    The temporary file is created first (exclusively, with the permissions a plain write would get), so
    `write` may open it by name; whatever `write` raises removes it and propagates.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _beside(path)
    try:
        open(tmp, "xb").close()
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


@contextmanager
def staged_dir(dest: str | Path) -> Iterator[Path]:
    """A temporary folder beside dest to fill; on success it replaces dest in one step, on failure it is removed.

    An existing dest is renamed aside, the new folder renamed into its place, and only then is the old one
    deleted; if that rename fails the old one is put back, so dest is never left half-written or gone.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = _beside(dest)
    tmp.mkdir()
    held = _hold(tmp)  # the folder's lock goes with it through the rename; the kernel drops it if this process dies
    try:
        yield tmp
        _swap_in(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(held)


def _hold(folder: Path) -> int:
    """An exclusive lock on the folder itself (flock on its descriptor): no file is added to what it holds."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _orphaned(folder: Path) -> bool:
    """Whether no live process holds the folder's lock (taken, when free, just long enough to tell)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return False  # renamed into place, or removed, since it was listed
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def sweep_staged(dest: str | Path) -> list[Path]:
    """Remove the unfinished folders a killed staged_dir(dest) left beside dest (`.NAME-….tmp`: never finished,
    so never checked, and never to be read or served), and return them. A folder a live writer holds is left to
    it; a `.NAME-….old` (what dest held before, removed by the writer that replaced it) is never touched here."""
    dest = Path(dest)
    left = dest.parent.glob(f".{glob.escape(dest.name)}-*.tmp") if dest.parent.is_dir() else ()
    stale = [p for p in left if _STAGED.fullmatch(p.name[len(dest.name) + 1:]) and p.is_dir() and not p.is_symlink()
             and _orphaned(p)]
    for folder in stale:
        shutil.rmtree(folder, ignore_errors=True)
    return stale


def _swap_in(new: Path, dest: Path) -> None:
    old = None
    if dest.exists():
        old = _beside(dest, "old")
        os.replace(dest, old)
    try:
        os.replace(new, dest)
    except BaseException:
        if old is not None:
            os.replace(old, dest)
        raise
    if old is not None:
        shutil.rmtree(old)


class YamlModelError(ValueError):
    """A YAML file that does not parse or validate; the message is one line naming the file and field."""


# Bounds on what a reader builds from one file: beyond them the input is refused, never half-processed.
MAX_DEPTH = 100  # nesting of lists and mappings (Python's own parsers recurse and would overflow first)
MAX_NODES = 1_000_000  # values a YAML file expands to once its aliases are followed (a "billion laughs" bomb)
INT64 = (-2**63, 2**63)  # integers a SQLite column, and every 64-bit consumer, can hold


def csv_text(columns: list[str], rows: list[dict]) -> str:
    """Rows as CSV text with these columns in this order, None as an empty field (how an export writes NULL)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({c: ("" if r.get(c) is None else r[c]) for c in columns} for r in rows)
    return buf.getvalue()


def one_line(text: str) -> str:
    """Text joined into one line, so an error message never spills over several."""
    return " ".join(part.strip() for part in str(text).splitlines())


LISTED_ERRORS = 5  # problems one validation line spells out; beyond them it counts the rest and names their keys


def validation_line(path: str | Path, exc: ValidationError) -> str:
    """`FILE: key: message; key: message` for a pydantic validation, one line; unknown keys come first, so a
    misspelt key is named even when the key it was meant to be is reported missing, and every unknown key is
    named. Past LISTED_ERRORS problems the rest are counted and their keys named, never hidden."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")  # stable: file order otherwise
    shown, seen = [], set()
    for e in errors:
        where = ".".join(str(p) for p in e["loc"]) or "<top level>"
        if where not in seen:  # a union's alternatives each report the one field: it is named once
            seen.add(where)
            msg = "unknown key" if e["type"] == "extra_forbidden" else e["msg"].removeprefix("Value error, ")
            shown.append((where, msg))
    unknown = [w for w, m in shown if m == "unknown key"]
    listed = shown[:max(LISTED_ERRORS, len(unknown))]
    rest = [w for w, _ in shown[len(listed):]]
    more = f" (+{len(rest)} more: {', '.join(rest)})" if rest else ""
    return one_line(f"{path}: " + "; ".join(f"{w}: {m}" for w, m in listed) + more)


def read_text(path: str | Path, error: type[Exception] = YamlModelError) -> str:
    """A file's text decoded as UTF-8 (a UTF-8 byte-order mark is dropped); a missing file or other bytes raise
    `error` with one line `FILE:LINE: not UTF-8 text (...)`, naming UTF-16 when its byte-order mark is there."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: file not found")
    data = path.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise error(f"{path}:1: not UTF-8 text (UTF-16 byte-order mark); save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8") from exc


class _Refused(ValueError):
    """Input the readers refuse (beyond their bounds, a key given twice); `line` is where (0-based), when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def _number_problem(value: Any) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a number a suite can compare"
    if isinstance(value, int) and not isinstance(value, bool) and not INT64[0] <= value < INT64[1]:
        return f"{value} does not fit a 64-bit integer"
    return None


def _check_number(value: Any) -> None:
    problem = _number_problem(value)
    if problem:
        raise _Refused(problem)


def unbounded_number(data: Any) -> tuple[str, str] | None:
    """(dotted path, problem) of the first NaN, infinity or beyond-64-bit integer in parsed JSON, if any."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, (dict, list)):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((v, f"{where}.{k}" if where else str(k)) for k, v in reversed(list(items)))
        elif (problem := _number_problem(node)) is not None:
            return where or "<top level>", problem
    return None


def _long_int(text: str) -> int:
    if len(text) > 100:  # Python refuses very long digit strings with an error of its own; none is a usable number
        raise _Refused(f"{text[:24]}... does not fit a 64-bit integer")
    return int(text)


_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON's \\uD800-style escapes can encode half a character


def lone_surrogate(data: Any) -> str | None:
    """The dotted path of the first string (or key) in parsed JSON holding a lone UTF-16 surrogate: no Unicode
    character, so it cannot be printed, written as UTF-8 or compared with any id typed in."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str) and not node.isascii() and _SURROGATE.search(node):
            return where or "<top level>"
        if isinstance(node, (dict, list)):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for k, v in reversed(list(items)):
                path = f"{where}.{k}" if where else str(k)
                if isinstance(k, str) and _SURROGATE.search(k):
                    return f"{where}.{ascii(k)}" if where else ascii(k)
                stack.append((v, path))
    return None


def _depth(obj: Any) -> int:
    """Nesting depth of parsed JSON (a tree: every value appears once), without recursing."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_json(text: str, where: str, error: type[Exception] = YamlModelError, *, first_line: int = 1) -> Any:
    """Parse JSON text taken from `where` (its first line numbered `first_line`), refusing nesting deeper than
    MAX_DEPTH; a problem raises `error` as one line `WHERE:LINE: invalid JSON: problem`. NaN and numbers beyond
    64 bits parse, so the caller can name the field they sit in (`unbounded_number`)."""
    try:
        data = json.loads(text, parse_int=_long_int)
    except json.JSONDecodeError as exc:
        raise error(one_line(f"{where}:{exc.lineno + first_line - 1}: invalid JSON: {exc.msg}")) from exc
    except _Refused as exc:
        raise error(one_line(f"{where}:{first_line}: invalid JSON: {exc}")) from exc
    except RecursionError as exc:
        raise error(f"{where}:{first_line}: invalid JSON: nested deeper than {MAX_DEPTH} levels") from exc
    if _depth(data) > MAX_DEPTH:
        raise error(f"{where}:{first_line}: invalid JSON: nested deeper than {MAX_DEPTH} levels")
    if (field := lone_surrogate(data)) is not None:
        raise error(f"{where}:{first_line}: {field}: not Unicode text (a lone UTF-16 surrogate escape such as "
                    f"\\ud800); write the character itself or its surrogate pair")
    return data


_CHECKED_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("int", "float", "timestamp"))


class _BoundedLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml where installed: fast, bounded
    """A safe loader that measures a document before building it: its depth, how many values it expands to
    once aliases are followed (an alias is a reference, so a bomb is small to parse and huge to walk), aliases
    that contain themselves, and numbers nothing downstream can hold; and that refuses a key given twice in one
    mapping (YAML requires unique keys, and PyYAML would silently keep the last). Every YAML the project reads
    comes through this loader (`parse_yaml`)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base` keys may be overridden, by design
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                seen = key in first
            except TypeError:  # an unhashable key: SafeConstructor refuses it with its own message
                continue
            if seen:
                raise _Refused(f"duplicate key {key!r} (first on line {first[key] + 1})", key_node.start_mark.line)
            first[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)

    def construct_document(self, node: yaml.Node) -> Any:
        self._sizes: dict[int, tuple[int, int]] = {}
        self._measure(node, set())
        return super().construct_document(node)

    def _measure(self, node: yaml.Node, open_: set[int]) -> tuple[int, int]:
        key = id(node)
        if key in self._sizes:
            return self._sizes[key]
        if key in open_:
            raise _Refused("an alias refers to a value that contains it", node.start_mark.line)
        if isinstance(node, yaml.ScalarNode):
            if node.tag in _CHECKED_TAGS:  # built here, where the line is known (construct_document reuses them)
                try:
                    _check_number(self.construct_object(node))
                except _Refused as exc:
                    raise _Refused(str(exc), node.start_mark.line) from exc
                except ValueError as exc:  # e.g. the date 2027-02-30
                    raise _Refused(f"{node.value}: {exc}", node.start_mark.line) from exc
            size = (1, 0)
        else:
            open_.add(key)
            children = node.value if isinstance(node, yaml.SequenceNode) else [n for kv in node.value for n in kv]
            sizes = [self._measure(child, open_) for child in children]
            open_.discard(key)
            size = (1 + sum(s for s, _ in sizes), 1 + max((d for _, d in sizes), default=0))
        if size[0] > MAX_NODES:
            raise _Refused(f"expands to more than {MAX_NODES} values through aliases", node.start_mark.line)
        if size[1] > MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", node.start_mark.line)
        self._sizes[key] = size
        return size


def parse_yaml(text: str, path: str | Path, error: type[Exception] = YamlModelError, *, first_line: int = 1,
               invalid: str = "invalid YAML") -> Any:
    """Parse YAML text taken from path (starting at its line `first_line`), within the bounds above; bad YAML
    raises `error` with one line `FILE:LINE: <invalid>: problem`."""
    try:
        return yaml.load(text, Loader=_BoundedLoader)  # noqa: S506 - a SafeLoader, bounded
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + first_line}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        if problem == "exceeded maximum nesting depth":  # libyaml's own bound, far beyond ours
            problem = f"nested deeper than {MAX_DEPTH} levels"
        raise error(one_line(f"{path}{where}: {invalid}: {problem}")) from exc
    except _Refused as exc:
        where = f":{exc.line + first_line}" if exc.line is not None else ""
        raise error(one_line(f"{path}{where}: {invalid}: {exc}")) from exc
    except RecursionError as exc:  # the composer recurses per level, so a deep enough file overflows it first
        raise error(f"{path}: {invalid}: nested deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:  # a scalar YAML resolves but Python refuses, e.g. the date 2027-02-30
        raise error(one_line(f"{path}: {invalid}: {exc}")) from exc


def read_yaml(path: str | Path, error: type[Exception] = YamlModelError, *, invalid: str = "invalid YAML") -> Any:
    """Parse a UTF-8 YAML file; a missing file, other bytes or bad YAML raise `error` with one line naming the
    file and line."""
    return parse_yaml(read_text(path, error), path, error, invalid=invalid)


def model_from(path: str | Path, data: Any, model: type[M], error: type[Exception] = YamlModelError, **extra: Any) -> M:
    """Validate a mapping read from path (plus `extra`, fields the file may not set) into `model`;
    every problem raises `error` with one line naming the file and field."""
    if data is None:  # an empty file, or one of comments only, parses to nothing at all
        raise error(f"{path}: the file holds nothing (empty, or only comments); expected a mapping of keys")
    if not isinstance(data, dict):
        raise error(f"{path}: <top level>: expected a mapping, got {type(data).__name__}")
    clash = sorted(set(data) & set(extra), key=str)
    if clash:
        raise error(f"{path}: {clash[0]}: unknown key")
    try:
        return model.model_validate({**data, **extra})
    except ValidationError as exc:
        raise error(validation_line(path, exc)) from exc


def load_yaml_model(path: str | Path, model: type[M], error: type[Exception] = YamlModelError, **extra: Any) -> M:
    """Read a YAML mapping into `model`; every problem raises `error` with one line naming the file and field."""
    return model_from(path, read_yaml(path, error), model, error, **extra)
