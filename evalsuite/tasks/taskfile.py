"""Task files: reading and writing TaskRecords as JSON Lines (or JSON), and the task-set hash."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import atomic_write, parse_json, read_text, unbounded_number, validation_line
from evalsuite.core.records import TaskRecord


class TaskFileError(ValueError):
    """A task file that cannot be read; the message is one line naming the file and line."""


def read_task_objects(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) for a JSON file (object or list) or a JSONL file, read as UTF-8 within the JSON
    bounds of core.io; a file without a single record is refused."""
    path = Path(path)
    text = read_text(path, TaskFileError)
    if path.suffix == ".jsonl":
        # split("\n"), not splitlines(): a JSON string may hold U+2028, which splitlines() breaks at
        objects = ((n, parse_json(line, str(path), TaskFileError, first_line=n))
                   for n, line in enumerate(text.split("\n"), 1) if line.strip())
    else:
        data = parse_json(text, str(path), TaskFileError)
        objects = enumerate(data if isinstance(data, list) else [data], 1)
    empty = True
    for n, obj in objects:
        empty = False
        yield n, obj
    if empty:
        raise TaskFileError(f"{path}: no task records")


def read_tasks(path: str | Path) -> list[TaskRecord]:
    """Every task in a task file; the first that does not validate, holds a number no consumer can hold (NaN,
    an infinity, an integer beyond 64 bits) or repeats a task id raises TaskFileError `FILE:LINE: field: message`."""
    tasks: list[TaskRecord] = []
    first: dict[str, int] = {}
    for n, obj in read_task_objects(path):
        try:
            task = TaskRecord.model_validate(obj)
        except ValidationError as exc:
            raise TaskFileError(validation_line(f"{path}:{n}", exc)) from exc
        if (bad := unbounded_number(obj)) is not None:
            raise TaskFileError(f"{path}:{n}: {bad[0]}: {bad[1]}")
        if task.task_id in first:  # a second record under one id would silently replace the first
            raise TaskFileError(f"{path}:{n}: task_id: duplicate task id {task.task_id!r} "
                                f"(first at {first[task.task_id]})")
        first[task.task_id] = n
        tasks.append(task)
    return tasks


def write_tasks(path: str | Path, tasks: Iterable[TaskRecord]) -> Path:
    """One JSON line per task, the file replaced in one step."""
    return atomic_write(path, "".join(t.model_dump_json() + "\n" for t in tasks))


def task_set_sha256(tasks: list[TaskRecord]) -> str:
    """Hash of the task set, independent of the version fields a release later stamps in."""
    ordered = sorted(tasks, key=lambda t: t.task_id)
    return json_sha256([t.hashed_form(exclude={"suite": {"version", "task_set_sha256"}}) for t in ordered])
