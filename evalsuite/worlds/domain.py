"""A domain: tables (SQLAlchemy Core), tools tagged read or write, and roles."""
from __future__ import annotations

import functools
import inspect
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter
from sqlalchemy import MetaData, Table
from sqlalchemy.engine import Connection

from evalsuite.core.hashing import json_sha256
from evalsuite.core.records import Check, Role, TraceEvent


class ToolError(Exception):
    """A business error a tool reports to the agent (not found, wrong state…)."""


class PartialWriteError(ToolError):
    """A tool error raised after the tool already wrote: where the system a domain reproduces keeps what a failing
    call wrote before it failed, the call commits those writes and still reports the error."""


@dataclass
class ToolContext:
    """What a tool sees: the trial's connection, the world clock and the policy text."""

    conn: Connection
    now: datetime
    policy_text: str = ""
    rows_written: int = 0
    # The trial's sqlite3 connection, inside the transaction the world opened for this call (a failing call still
    # rolls back): plain prepared SQL skips SQLAlchemy's per-statement compile and result machinery. None: conn's
    # own (the trial world passes the one it holds, saving SQLAlchemy's lookup on every call).
    db: sqlite3.Connection = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.db is None:
            self.db = self.conn.connection.driver_connection

    def execute(self, statement, params=None):
        """Run SQL; writes are counted so every trace event says how many rows it touched."""
        result = self.conn.execute(statement, params) if params is not None else self.conn.execute(statement)
        if statement.is_dml:
            self.rows_written += max(result.rowcount, 0)
        return result

    def run(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run plain SQL on `db` (sqlite3 caches the prepared statement); writes are counted as `execute` does."""
        cursor = self.db.execute(sql, params)
        self.rows_written += max(cursor.rowcount, 0)  # -1 for a SELECT
        return cursor

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """The rows of plain SQL on `db` as dicts (dict_rows)."""
        return dict_rows(self.run(sql, params))


def dict_rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """A sqlite3 cursor's rows as dicts keyed by column name (plain str, as sqlite3 reports them)."""
    cols = [d[0] for d in cursor.description]
    return [dict(zip(cols, r)) for r in cursor.fetchall()]


def mapping_rows(result: Any) -> list[dict[str, Any]]:
    """A SQLAlchemy result's rows as dicts keyed by plain str. Its own keys are quoted_name, a str subclass that
    pydantic serializes down a slow path: they would slow down every trace record holding a tool's output."""
    return [{str(k): v for k, v in r._mapping.items()} for r in result]


def one_row(ctx: ToolContext, stmt: Any, what: str) -> dict[str, Any]:
    """The first row a statement selects, or the ToolError the agent sees: "<what> not found"."""
    rows = mapping_rows(ctx.execute(stmt))
    if not rows:
        raise ToolError(f"{what} not found")
    return rows[0]


@dataclass(frozen=True)
class Tool:
    name: str
    kind: Literal["read", "write", "generic"]
    fn: Callable[..., Any]
    args: type[BaseModel] | None  # None: raw keyword arguments, no validation
    description: str

    def schema(self) -> dict[str, Any]:
        """The agent-facing function schema (OpenAI/MCP style)."""
        params = _json_schema(self.args) if self.args else _signature_schema(self.fn)
        return {"name": self.name, "description": self.description, "parameters": params}


@functools.cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    # Built once per model: agents list tools on every trial, and pydantic rebuilds schemas each call.
    return model.model_json_schema()


@functools.cache
def _signature_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """A raw-keyword tool's parameters from its signature, so an agent sees their names.

    Every keyword parameter after the context is a property, required unless it
    has a default (shown when it is a JSON scalar); an annotation becomes its
    JSON schema, and no annotation leaves the value unconstrained, as the tool
    itself does. Extra keywords are refused unless the function takes **kwargs.
    """
    props: dict[str, Any] = {}
    required: list[str] = []
    extra = False
    for p in list(inspect.signature(fn, eval_str=True).parameters.values())[1:]:
        if p.kind is p.VAR_KEYWORD:
            extra = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):  # the only ones a keyword call can fill
            props[p.name] = {} if p.annotation is p.empty else TypeAdapter(p.annotation).json_schema()
            if p.default is p.empty:
                required.append(p.name)
            elif p.default is None or isinstance(p.default, (str, int, float, bool)):
                props[p.name]["default"] = p.default
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = extra
    return schema


@dataclass(frozen=True)
class CheckInput:
    """What a domain check sees: the trial's end state and the pristine seed (read-only SQLite connections), the
    trace of every call, the agent's final message and the check's parameters from the goal state."""

    end: sqlite3.Connection
    seed: sqlite3.Connection
    trace: Sequence[TraceEvent]
    final_message: str
    params: Mapping[str, Any]


DomainCheckFn = Callable[[CheckInput], Check]  # returns Check.outcome(passed, detail)


# The world clock of a domain that names none: the moment its trials take place, whatever the machine's time.
DEFAULT_CLOCK = datetime(2026, 6, 30, 9, 0, 0)


@dataclass
class Domain:
    name: str
    version: str
    metadata: MetaData
    # when the domain's world is: a trial's tools see this time (ToolContext.now), never the machine's clock;
    # a domain whose data and policy assume a date (τ²-bench airline: 2024-05-15 15:00 EST) sets it
    clock: datetime = DEFAULT_CLOCK
    tools: dict[str, Tool] = field(default_factory=dict)
    roles: dict[str, Role] = field(default_factory=dict)
    checks: dict[str, DomainCheckFn] = field(default_factory=dict)
    # functions a task's initialization may call besides the tools, which no participant can (τ²-bench's
    # environment helpers: break the phone's APN, mark a bill overdue); raw-keyword, as tools may be
    helpers: dict[str, Tool] = field(default_factory=dict)
    # source tables the domain's derivation reads that never become world tables (the resolved cases tasks are
    # derived from): a spec may name them under sources.tables besides the world's own tables
    case_tables: frozenset[str] = frozenset()
    # domain checks that judge attempts on the trace (a refused refund), not the end state: the authority measure
    # counts them apart from the outcome (evalsuite.grading.measures)
    attempt_checks: frozenset[str] = frozenset()
    # domain checks that judge grounding, not the outcome (a quotation found verbatim in a source the agent opened):
    # the grounding measure counts them and the outcome measure leaves them aside (evalsuite.grading.measures)
    grounding_checks: frozenset[str] = frozenset()
    handoff_tools: frozenset[str] = frozenset()  # tools that hand a case to a person (the handoff measure)

    def check(self, fn: DomainCheckFn) -> DomainCheckFn:
        """Register a domain check under its function name; a goal state names it in `domain_checks`."""
        self.checks[fn.__name__] = fn
        return fn

    def helper(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register `fn(ctx, /, **arguments)` as a set-up helper under its function name (never shown to an agent)."""
        self.helpers[fn.__name__] = Tool(fn.__name__, "write", fn, None, inspect.cleandoc(fn.__doc__ or ""))
        return fn

    def tool(self, kind: Literal["read", "write", "generic"]):
        """Register `fn(ctx, args)`; the args model comes from the annotation, the description from the docstring."""

        def register(fn):
            params = list(inspect.signature(fn, eval_str=True).parameters.values())
            annotation = params[1].annotation if len(params) == 2 else None
            args = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
            self.tools[fn.__name__] = Tool(fn.__name__, kind, fn, args, inspect.cleandoc(fn.__doc__ or ""))
            return fn

        return register

    @property
    def tables(self) -> dict[str, Table]:
        return dict(self.metadata.tables)

    def write_tools(self) -> list[str]:
        return [t.name for t in self.tools.values() if t.kind == "write"]

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [self.tools[n].schema() for n in sorted(self.tools)]

    def tool_schemas_sha256(self) -> str:
        return json_sha256([{**s, "kind": self.tools[s["name"]].kind} for s in self.tool_schemas()])

    def schema_sha256(self) -> str:
        """Hash of the table definitions: names, columns, types, keys."""
        return json_sha256({
            name: [[c.name, str(c.type), c.primary_key, c.nullable] for c in table.columns]
            for name, table in sorted(self.tables.items())
        })

    @property
    def image(self) -> str:
        """The environment image a score is tied to: domain package version plus schema hash."""
        return f"{self.name}:{self.version}+{self.schema_sha256()[:12]}"
