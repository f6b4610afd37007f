"""Validate task files against the record schema and the task's own domain.

Every problem is one line `FILE:TASK_ID:FIELD: message`, so a reviewer can jump
straight to it.
"""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ValidationError

from evalsuite.worlds.registry import get_domain
from evalsuite.core.records import TaskRecord
from evalsuite.tasks.taskfile import read_task_objects
from evalsuite.worlds.domain import Domain

_PATHED = re.compile(r"^(?:Value error, )?([a-z_]+(?:\.[\w]+)*): (.*)$", re.S)


class Problem(BaseModel):
    file: str
    task_id: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.task_id}:{self.field}: {self.message}"


def _schema_problems(file: str, task_id: str, exc: ValidationError) -> list[Problem]:
    out = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        m = _PATHED.match(msg)
        if m:
            field, msg = ".".join(p for p in (field, m.group(1)) if p), m.group(2)
        out.append(Problem(file=file, task_id=task_id, field=field or "(record)", message=msg))
    return out


def domain_problems(task: TaskRecord, domain: Domain) -> list[tuple[str, str]]:
    """(field, message) for everything the schema cannot know: tools, tables and columns of the domain."""
    out = []
    for kind in ("read_tools", "write_tools", "forbidden_tools"):
        for i, name in enumerate(getattr(task.role, kind)):
            if name not in domain.tools:
                out.append((f"role.{kind}.{i}", f"unknown tool {name!r} in domain {domain.name}"))
    tables = domain.tables
    for i, a in enumerate(task.goal_state.assertions):
        if a.table not in tables:
            out.append((f"goal_state.assertions.{i}.table", f"unknown table {a.table!r}"))
            continue
        cols = set(tables[a.table].columns.keys())
        for part in ("key", "expect"):
            for col in getattr(a, part):
                if col not in cols:
                    out.append((f"goal_state.assertions.{i}.{part}.{col}", f"no column {col!r} in table {a.table}"))
    for i, t in enumerate(task.goal_state.unchanged_tables):
        if t not in tables:
            out.append((f"goal_state.unchanged_tables.{i}", f"unknown table {t!r}"))
    if isinstance(task.reference_solution, list):
        out.extend(_solution_problems(task, domain))
    return out


def _solution_problems(task: TaskRecord, domain: Domain) -> list[tuple[str, str]]:
    out = []
    for i, call in enumerate(task.solution_calls()):
        tool = domain.tools.get(call.tool)
        if tool is None:
            out.append((f"reference_solution.{i}.tool", f"unknown tool {call.tool!r} in domain {domain.name}"))
        elif tool.args is not None:
            try:
                tool.args(**call.arguments)
            except ValidationError as exc:
                for err in exc.errors():
                    loc = ".".join(str(p) for p in err["loc"])
                    out.append((f"reference_solution.{i}.arguments.{loc}", f"{call.tool}: {err['msg']}"))
    return out


def validate_file(path: str | Path) -> list[Problem]:
    """Every problem of a task file, one per field: schema, duplicate ids, and the task's own domain."""
    file = str(path)
    problems = []
    first_seen: dict[str, int] = {}
    for n, obj in read_task_objects(path):
        task_id = str(obj.get("task_id", f"#{n}")) if isinstance(obj, dict) else f"#{n}"
        if task_id in first_seen:  # a second record under one id would silently replace the first
            problems.append(Problem(file=file, task_id=task_id, field="task_id",
                                    message=f"duplicate task id (first at record {first_seen[task_id]})"))
            continue
        first_seen[task_id] = n
        try:
            task = TaskRecord.model_validate(obj)
        except ValidationError as exc:
            problems.extend(_schema_problems(file, task_id, exc))
            continue
        try:
            domain = get_domain(task.domain)
        except KeyError as exc:
            problems.append(Problem(file=file, task_id=task_id, field="domain", message=str(exc.args[0])))
            continue
        problems.extend(Problem(file=file, task_id=task_id, field=f, message=m) for f, m in domain_problems(task, domain))
    return problems
