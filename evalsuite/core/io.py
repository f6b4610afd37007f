"""Files written whole or not at all, and YAML read into pydantic models with one-line errors."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def atomic_write(path: str | Path, data: bytes | str) -> Path:
    """Replace path in one step (a unique temporary file beside it, then rename), so a reader or a
    killed writer never leaves or sees half a file, and two writers never share a temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path: str | Path, body: Any) -> Path:
    """A JSON record replaced in one step (indented, newline-terminated)."""
    return atomic_write(path, json.dumps(body, indent=2) + "\n")


def write_with(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Let `write` fill a unique temporary file beside path (a Parquet writer, say), then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextmanager
def staged_dir(dest: str | Path) -> Iterator[Path]:
    """A temporary folder beside dest to fill; on success it replaces dest in one step, on failure it is removed."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        yield tmp
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class YamlModelError(ValueError):
    """A YAML file that does not parse or validate; the message is one line naming the file and field."""


def validation_line(path: str | Path, exc: ValidationError) -> str:
    """`FILE: field.path: message (+N more)` for the first error of a pydantic validation."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "<top level>"
    msg = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{path}: {where}: {msg}{more}"


def read_yaml(path: str | Path, error: type[Exception] = YamlModelError) -> Any:
    """Parse a YAML file; a missing file or bad YAML raises `error` with one line naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: file not found")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise error(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}".replace("\n", " ")) from exc


def load_yaml_model(path: str | Path, model: type[M], error: type[Exception] = YamlModelError, **extra: Any) -> M:
    """Read a YAML mapping into `model`; every problem raises `error` with one line naming the file and field."""
    data = read_yaml(path, error)
    if not isinstance(data, dict):
        raise error(f"{path}: <top level>: expected a mapping, got {type(data).__name__}")
    try:
        return model.model_validate({**data, **extra})
    except ValidationError as exc:
        raise error(validation_line(path, exc)) from exc
