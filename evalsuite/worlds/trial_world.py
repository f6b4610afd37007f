"""One trial's copy of a world: the tool calls an agent makes on it, role-checked, faulted as planned and traced.

The world (evalsuite.worlds.world) restores the copy and verifies it before the trial; this module is what
happens on it between reset and grade: each call is checked against the role, run as one transaction (rolled
back when it raises or an injected fault aborts it), and recorded as a TraceEvent whatever its outcome.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import ValidationError
from sqlalchemy import Connection

from evalsuite.core.hashing import combine_sha256
from evalsuite.core.records import Role, TraceEvent
from evalsuite.worlds.changes import RowSelector
from evalsuite.worlds.domain import Domain, PartialWriteError, ToolContext, ToolError
from evalsuite.worlds.faults import Fault, FaultPlan


class RestoredWorld(Protocol):
    """What a trial uses of the world that restored its copy (evalsuite.worlds.world.World, which imports this
    module to hand out trials: a Protocol, so the two modules do not import each other)."""

    domain: Domain
    trial_db: sqlite3.Connection
    trial_connection: Connection
    selector: RowSelector

    def read_rows(self, conn: sqlite3.Connection) -> dict[str, list[tuple]]: ...

    def hash_tables(self, conn: sqlite3.Connection, tables: Iterable[str] | None = None) -> dict[str, str]: ...


class TrialWorld:
    """One trial's copy of the world: role-checked tool calls, every call traced.

    The trial holds one SQLAlchemy connection for its life, over the world's sqlite3
    connection; every tool call is one transaction on them (`_Transaction`), committed
    when the call returns and rolled back when it raises. It is closed when its world
    is reset for the next trial.
    """

    def __init__(self, world: RestoredWorld, role: Role | None, policy_text: str, clock: datetime, faults: FaultPlan):
        self.world = world
        self.role = role
        self.policy_text = policy_text
        self.clock = clock
        self.faults = faults
        self.trace: list[TraceEvent] = []
        self._conn = world.trial_connection
        self._closed = False
        # run after every call that succeeds (a dual-control domain's link step: evalsuite.worlds.initialization)
        self.after_ok: Callable[[], None] | None = None
        # the role's tools as a set, built once per trial rather than on every call (Role.permitted builds one)
        self._permitted = role.permitted if role is not None else None

    @property
    def domain(self) -> Domain:
        return self.world.domain

    @property
    def db(self) -> sqlite3.Connection:
        """The trial's SQLite connection, for reading its state (grading, hashing); tools write through calls."""
        if self._closed:
            raise RuntimeError("trial closed: its world was reset for another trial")
        return self.world.trial_db

    def close(self) -> None:
        """No call or read through this trial from now on (the connection is the world's, kept open)."""
        self._closed = True

    def visible_tools(self) -> list[str]:
        """Every tool the agent is shown: the whole domain surface, permitted or not."""
        return sorted(self.domain.tools)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, actor: str = "agent") -> TraceEvent:
        """Check the role, run the tool in its own transaction, and trace the call whatever happens."""
        if self._closed:
            raise RuntimeError("trial closed: its world was reset for another trial")
        arguments = dict(arguments or {})
        spec = self.domain.tools.get(tool)
        event = dict(seq=len(self.trace) + 1, actor=actor, tool=tool, arguments=arguments,
                     kind=spec.kind if spec else None)
        if spec is None:
            return self._record(event, False, "error", error=f"Tool '{tool}' not found.")
        if self._permitted is not None and tool not in self._permitted and spec.kind != "generic":
            return self._record(event, False, "denied",
                                error=f"Tool '{tool}' is not permitted for role {self.role.name}.")
        ctx = ToolContext(conn=self._conn, now=self.clock, policy_text=self.policy_text, db=self.world.trial_db)
        fault = self.faults.take(tool)
        partial: PartialWriteError | None = None
        try:
            with _Transaction(self._conn, self.world.trial_db):
                try:
                    result = spec.fn(ctx, spec.args(**arguments)) if spec.args else spec.fn(ctx, **arguments)
                except PartialWriteError as exc:  # its writes so far stand: committed below, reported as the error
                    partial = exc
                if fault is Fault.ERROR_BEFORE_COMMIT:
                    raise _InjectedFault("backend error: transaction aborted")
        except _InjectedFault as exc:  # rolled back: nothing of the call committed
            return self._record(event, True, "fault", error=str(exc), fault=fault.value, committed=False)
        except (ToolError, ValidationError, TypeError, ValueError, KeyError) as exc:
            return self._record(event, True, "error", error=_error_text(exc))
        if partial is not None:
            return self._record(event, True, "error", error=str(partial), rows_written=ctx.rows_written, committed=True)
        if fault is Fault.SLOW:
            # Simulated on the world clock, never by sleeping: later calls see the time the slow one took.
            latency = self.faults.latency_of(tool)
            self.clock += timedelta(seconds=latency)
            if not self.faults.past_deadline(latency):
                return self._record(event, True, "ok", result=result, rows_written=ctx.rows_written,
                                    fault=fault.value, committed=True)
        if fault in (Fault.LOST_RESPONSE, Fault.TIMEOUT, Fault.SLOW):  # committed; the caller never learns it
            return self._record(event, True, "fault", error=fault.agent_message, rows_written=ctx.rows_written,
                                fault=fault.value, committed=True)
        return self._record(event, True, "ok", result=result, rows_written=ctx.rows_written)

    def _record(self, event: dict, permitted: bool, outcome: str, *, result: Any = None, error: str | None = None,
                rows_written: int = 0, fault: str | None = None, committed: bool | None = None) -> TraceEvent:
        ev = TraceEvent(**event, permitted=permitted, outcome=outcome, result=result, error=error,
                        rows_written=rows_written, fault=fault, committed=committed)
        self.trace.append(ev)
        if outcome == "ok" and self.after_ok is not None:
            self.after_ok()
        return ev

    def rows(self) -> dict[str, list[tuple]]:
        """Every table's rows now, ordered by primary key (the whole state: for hashing and export)."""
        return self.world.read_rows(self.db)

    def changed_keys(self) -> dict[str, set[tuple]]:
        """Primary keys of every row a statement inserted, updated or deleted in this trial, by table."""
        return self.world.selector.changed_keys(self.db)

    def row(self, table: str, key: tuple) -> tuple | None:
        """One row now, by primary key."""
        return self.world.selector.row(self.db, table, key)

    def content_sha256(self) -> str:
        return combine_sha256(self.world.hash_tables(self.db))


class _Transaction:
    """One call's transaction: committed when the call returns, rolled back when it raises. sqlite3 begins one
    before the first write; a tool that went through SQLAlchemy (`ToolContext.execute`) made the connection begin
    its own, which is then the one committed or rolled back. Opening SQLAlchemy's for every call instead cost more
    than a prepared statement (its begin emits nothing on SQLite)."""

    __slots__ = ("conn", "db")

    def __init__(self, conn: Connection, db: sqlite3.Connection):
        self.conn, self.db = conn, db

    def __enter__(self) -> None:
        if self.conn.in_transaction():  # as Connection.begin refuses a second one
            raise RuntimeError("a transaction is already open on the trial's connection")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        owner = self.conn if self.conn.in_transaction() else self.db
        owner.commit() if kind is None else owner.rollback()


class _InjectedFault(Exception):
    """Raised inside the transaction so the real rollback path runs."""


def _error_text(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "arguments"
        return f"invalid arguments: {loc}: {first['msg']} ({exc.error_count()} error(s))"
    return str(exc)
