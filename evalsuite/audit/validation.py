"""Validate task files against the record schema and the task's own domain.

Every problem is one line `FILE:TASK_ID:FIELD: message`, so a reviewer can jump
straight to it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import Table

from evalsuite.core.io import one_line, unbounded_number
from evalsuite.core.records import Assertion, TaskRecord, ToolCall
from evalsuite.domains.registry import UnknownDomainError, lookup, package_of
from evalsuite.tasks.taskfile import TaskFileError, read_task_objects
from evalsuite.worlds.domain import Domain, Tool
from evalsuite.worlds.types import Money

_MONEY = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.([0-9]+))?")
_PATHED = re.compile(r"^(?:Value error, )?([a-z_]+(?:\.[\w]+)*): (.*)$", re.S)


class Problem(BaseModel):
    file: str
    task_id: str
    field: str
    message: str

    def __str__(self) -> str:
        return one_line(f"{self.file}:{self.task_id}:{self.field}: {self.message}")


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
    user = package_of(domain).user_domain  # user_assertions and the user's steps name the user-side world
    out.extend(_assertion_problems("assertions", task.goal_state.assertions, tables, "table"))
    out.extend(_assertion_problems("user_assertions", task.goal_state.user_assertions,
                                   user.tables if user is not None else {}, "user-side table"))
    for i, c in enumerate(task.goal_state.domain_checks):
        if c.name not in domain.checks:
            out.append((f"goal_state.domain_checks.{i}.name", f"unknown check {c.name!r} in domain {domain.name}"))
    for i, t in enumerate(task.goal_state.unchanged_tables):
        if t not in tables:
            out.append((f"goal_state.unchanged_tables.{i}", f"unknown table {t!r}"))
    out.extend(_solution_problems(task, domain, user))
    out.extend(_fault_problems(task, domain))
    return out


def _assertion_problems(field: str, assertions: list[Assertion], tables: Mapping[str, Table],
                        what: str) -> list[tuple[str, str]]:
    """Each assertion's table must exist and its key and expected values fit that table's columns."""
    out = []
    for i, a in enumerate(assertions):
        if a.table not in tables:
            out.append((f"goal_state.{field}.{i}.table", f"unknown {what} {a.table!r}"))
            continue
        out.extend((f"goal_state.{field}.{i}.{part}.{col}", problem) for part in ("key", "expect")
                   for col, value in getattr(a, part).items()
                   if (problem := _value_problem(tables[a.table], col, value)))
    return out


def _fault_problems(task: TaskRecord, domain: Domain) -> list[tuple[str, str]]:
    """A fault fires on a call of its tool, so the tool must be one the task's role can call (a generic tool
    every role can, as TrialWorld.call allows)."""
    out = []
    for i, plan in enumerate(task.trial_protocol.fault_plans):
        for j, fault in enumerate(plan.faults):
            where = f"trial_protocol.fault_plans.{i}.faults.{j}.tool"
            if fault.tool not in domain.tools:
                out.append((where, f"unknown tool {fault.tool!r} in domain {domain.name}"))
            elif fault.tool not in task.role.permitted and domain.tools[fault.tool].kind != "generic":
                out.append((where, f"{fault.tool!r} is not among the role's tools: the fault would never fire"))
    return out


def _value_problem(table: Table, column: str, value: Any) -> str | None:
    """Why a goal value cannot be compared with a column, if it cannot: no such column, or money that is not
    exact (a float, NaN, or more decimal places than the column keeps)."""
    if column not in table.columns:
        return f"no column {column!r} in table {table.name}"
    kind = table.columns[column].type
    if not isinstance(kind, Money) or value is None:
        return None
    return _money_problem(value, -kind.quantum.as_tuple().exponent)


def _money_problem(value: Any, places: int | None) -> str | None:
    """Money is exact: an integer, or a plain decimal string (`-12.50`: no exponent, sign, spaces or leading
    zeros) with at most `places` decimals; never a float, which already lost the exact amount."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return f"money must be a decimal string such as '12.50' or an integer, not {type(value).__name__} {value!r}"
    if isinstance(value, int):
        return None
    m = _MONEY.fullmatch(value)
    if m is None:
        return f"{value!r} is not a decimal amount such as '12.50'"
    if places is not None and len(m.group(1) or "") > places:
        return f"{value!r} has more than {places} decimal places"
    return None


def _solution_problems(task: TaskRecord, domain: Domain, user: Domain | None) -> list[tuple[str, str]]:
    """Each reference step names a tool of its actor's world (a step the user carries out: the user's device)
    and passes arguments its schema accepts."""
    out = []
    for i, call in enumerate(task.solution_calls()):
        where = user if call.actor == "user" and user is not None else domain
        tool = where.tools.get(call.tool)
        if tool is None:
            out.append((f"reference_solution.{i}.tool", f"unknown tool {call.tool!r} in domain {where.name}"))
        else:
            out.extend((f"reference_solution.{i}.arguments.{loc}", f"{call.tool}: {msg}")
                       for loc, msg in _argument_problems(tool, call))
    return out


def _argument_problems(tool: Tool, call: ToolCall) -> Iterable[tuple[str, str]]:
    """The call's arguments against the tool's schema, the one agents see: its pydantic model where it has one
    (amounts exact, as in a goal), else its signature's names (such a tool checks no types itself)."""
    if tool.args is not None:
        try:
            tool.args(**call.arguments)
        except ValidationError as exc:
            yield from ((".".join(str(p) for p in e["loc"]) or "(arguments)", e["msg"]) for e in exc.errors())
        for name, field in tool.args.model_fields.items():
            if field.annotation is Decimal and name in call.arguments:
                problem = _money_problem(call.arguments[name], None)
                if problem:
                    yield name, problem
        return
    params = tool.schema()["parameters"]
    known = params.get("properties", {})
    if not params.get("additionalProperties", True):
        yield from ((name, "unexpected argument") for name in call.arguments if name not in known)
    yield from ((name, "missing required argument")
                for name in params.get("required", []) if name not in call.arguments)


_ID = re.compile(TaskRecord.model_fields["task_id"].metadata[0].pattern)


def _usable_id(obj: Any) -> str | None:
    """The record's task id if it is one (problem lines show `#N`, the record number, otherwise)."""
    task_id = obj.get("task_id") if isinstance(obj, dict) else None
    return task_id if isinstance(task_id, str) and _ID.fullmatch(task_id) else None


def validate_files(paths: Iterable[str | Path]) -> list[Problem]:
    """Every problem of several task files; a task id that repeats within one suite, across files too, is one."""
    seen: dict[tuple[str, str], tuple[str, int]] = {}
    return [p for path in paths for p in validate_file(path, seen)]


def problem_lines(paths: Iterable[str | Path]) -> list[str]:
    """`evalsuite task validate`: every problem of the files as one line FILE:TASK_ID:FIELD: message; a file that
    cannot be read at all is one line FILE:LINE: message and the other files are still checked."""
    lines: list[str] = []
    seen: dict[tuple[str, str], tuple[str, int]] = {}
    for path in paths:
        try:
            lines.extend(str(p) for p in validate_file(path, seen))
        except TaskFileError as exc:
            lines.append(str(exc))
    return lines


def validate_file(path: str | Path, seen: dict[tuple[str, str], tuple[str, int]] | None = None) -> list[Problem]:
    """Every problem of a task file, one per field: schema, duplicate ids, and the task's own domain.

    `seen` maps (suite name, task id) to the file and record it was first read at, shared by the files of one check.
    """
    file = str(path)
    problems = []
    seen = {} if seen is None else seen
    for n, obj in read_task_objects(path):
        usable = _usable_id(obj)
        task_id = usable or f"#{n}"
        suite = obj.get("suite") if isinstance(obj, dict) else None
        ident = (str(suite.get("name")) if isinstance(suite, dict) else "", task_id)
        if ident in seen:  # a second record under one id would silently replace the first
            first_file, first_n = seen[ident]
            where = f"record {first_n}" if first_file == file else f"{first_file} record {first_n}"
            problems.append(Problem(file=file, task_id=task_id, field="task_id",
                                    message=f"duplicate task id in suite {ident[0]!r} (first at {where})"))
            continue
        if usable:
            seen[ident] = (file, n)
        try:
            task = TaskRecord.model_validate(obj)
        except ValidationError as exc:
            problems.extend(_schema_problems(file, task_id, exc))
            continue
        if (bad := unbounded_number(obj)) is not None:  # where the schema takes any value, e.g. tool arguments
            problems.append(Problem(file=file, task_id=task_id, field=bad[0], message=bad[1]))
            continue
        try:
            domain = lookup(task.domain).domain
        except UnknownDomainError as exc:
            problems.append(Problem(file=file, task_id=task_id, field="domain", message=str(exc)))
            continue
        problems.extend(Problem(file=file, task_id=task_id, field=f, message=m)
                        for f, m in domain_problems(task, domain))
    return problems
