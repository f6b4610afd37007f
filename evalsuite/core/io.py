"""Files written whole or not at all, and YAML read into pydantic models with one-line errors."""
from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


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
    try:
        yield tmp
        _swap_in(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines())


def validation_line(path: str | Path, exc: ValidationError) -> str:
    """`FILE: field.path: message (+N more)` for the first error of a pydantic validation; an unknown key
    comes first, so a misspelt key is named even when the key it was meant to be is reported missing."""
    errors = exc.errors()
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    where = ".".join(str(p) for p in first["loc"]) or "<top level>"
    msg = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return _one_line(f"{path}: {where}: {msg}{more}")


def parse_yaml(text: str, path: str | Path, error: type[Exception] = YamlModelError, *, first_line: int = 1,
               invalid: str = "invalid YAML") -> Any:
    """Parse YAML text taken from path (starting at its line `first_line`); bad YAML raises `error` with
    one line `FILE:LINE: <invalid>: problem`."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + first_line}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise error(_one_line(f"{path}{where}: {invalid}: {problem}")) from exc
    except ValueError as exc:  # a scalar YAML resolves but Python refuses, e.g. the date 2027-02-30
        raise error(_one_line(f"{path}: {invalid}: {exc}")) from exc


def read_yaml(path: str | Path, error: type[Exception] = YamlModelError, *, invalid: str = "invalid YAML") -> Any:
    """Parse a YAML file; a missing file or bad YAML raises `error` with one line naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    return parse_yaml(text, path, error, invalid=invalid)


def model_from(path: str | Path, data: Any, model: type[M], error: type[Exception] = YamlModelError, **extra: Any) -> M:
    """Validate a mapping read from path (plus `extra`, fields the file may not set) into `model`;
    every problem raises `error` with one line naming the file and field."""
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
