"""Task files: reading and writing TaskRecords as JSON Lines (or JSON), and the task-set hash."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import atomic_write, validation_line
from evalsuite.core.records import TaskRecord


class TaskFileError(ValueError):
    """A task file that cannot be read; the message is one line naming the file and line."""


def read_task_objects(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) for a JSON file (object or list) or a JSONL file."""
    path = Path(path)
    if not path.is_file():
        raise TaskFileError(f"{path}: file not found")
    text = path.read_text()
    if path.suffix == ".jsonl":
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield n, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise TaskFileError(f"{path}:{n}: invalid JSON: {exc.msg}") from exc
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    for i, obj in enumerate(data if isinstance(data, list) else [data]):
        yield i + 1, obj


def read_tasks(path: str | Path) -> list[TaskRecord]:
    """Every task in a task file; the first that does not validate raises TaskFileError `FILE:LINE: field: message`."""
    tasks = []
    for n, obj in read_task_objects(path):
        try:
            tasks.append(TaskRecord.model_validate(obj))
        except ValidationError as exc:
            raise TaskFileError(validation_line(f"{path}:{n}", exc)) from exc
    return tasks


def write_tasks(path: str | Path, tasks: Iterable[TaskRecord]) -> Path:
    """One JSON line per task, the file replaced in one step."""
    return atomic_write(path, "".join(t.model_dump_json() + "\n" for t in tasks))


def task_set_sha256(tasks: list[TaskRecord]) -> str:
    """Hash of the task set, independent of the version fields a release later stamps in."""
    ordered = sorted(tasks, key=lambda t: t.task_id)
    return json_sha256([t.model_dump(mode="json", exclude={"suite": {"version", "task_set_sha256"}}) for t in ordered])
