"""A world: the pristine SQLite state of a domain, and per-trial copies restored from it.

Every trial starts from a byte-for-byte restore of the pristine world, and the
restore is checked against the recorded seed hash before any agent acts: a
world that does not reset identically turns infrastructure noise into agent
failures.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import create_engine, insert
from sqlalchemy.pool import StaticPool

from evalsuite.core.hashing import combine_sha256, table_sha256
from evalsuite.core.records import Role, TraceEvent
from evalsuite.worlds import changes
from evalsuite.worlds.domain import Domain, ToolContext, ToolError
from evalsuite.worlds.faults import Fault, FaultPlan
from evalsuite.worlds.types import Money

DEFAULT_CLOCK = datetime(2026, 6, 30, 9, 0, 0)


class TableSchema(BaseModel):
    """What the grader must know of a table: its columns, key and money columns."""

    columns: list[str]
    key: list[str]
    money: list[str] = []


class ResetError(RuntimeError):
    """The restored world does not hash to the recorded seed: the trial is refused."""


class World:
    """The pristine world of one domain, kept in memory; trials restore from it."""

    def __init__(self, domain: Domain, path: str | Path, seed_sha256: str | None = None):
        self.domain = domain
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: world file not found")
        self._pristine = sqlite3.connect(":memory:", check_same_thread=False)
        with closing(sqlite3.connect(self.path)) as disk:
            disk.backup(self._pristine)
        self._queries = {name: _select_sql(t) for name, t in domain.tables.items()}
        changes.install(self._pristine, domain.tables)
        self._money = {name: [i for i, c in enumerate(t.columns) if isinstance(c.type, Money)] for name, t in domain.tables.items()}
        self.schemas = {
            name: TableSchema(columns=[c.name for c in t.columns], key=[c.name for c in t.primary_key.columns],
                              money=[c.name for c in t.columns if isinstance(c.type, Money)])
            for name, t in domain.tables.items()
        }
        self.initial_rows = {name: self._pristine.execute(q).fetchall() for name, q in self._queries.items()}
        self.table_hashes = self._hash_rows(self.initial_rows)
        self.content_sha256 = combine_sha256(self.table_hashes)
        self.seed_sha256 = seed_sha256 or self.content_sha256
        self.selector = changes.RowSelector(domain.tables, self.initial_rows)
        self._image = self._pristine.serialize()
        # Statements are cached per connection; grading, hashing and the tools together use more than the default 128.
        self._scratch = sqlite3.connect(":memory:", check_same_thread=False, cached_statements=512)
        # A REPLACE that deletes a conflicting row fires the delete trigger only with recursive triggers on,
        # and the change log must see that row go.
        self._scratch.execute("PRAGMA recursive_triggers = ON")
        self.engine = create_engine("sqlite://", creator=lambda: self._scratch, poolclass=StaticPool)
        self._trial: TrialWorld | None = None

    @classmethod
    def build(cls, domain: Domain, tables: Mapping[str, list[dict[str, Any]]], path: str | Path) -> World:
        """Write the seed tables into a fresh SQLite file (all or nothing) and open it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        engine = create_engine(f"sqlite:///{tmp}")
        domain.metadata.create_all(engine)
        with engine.begin() as conn:
            for name, table in domain.tables.items():
                rows = tables.get(name, [])
                if rows:
                    conn.execute(insert(table), list(rows))
        engine.dispose()
        tmp.replace(path)
        return cls(domain, path)

    def _hash_rows(self, rows_by_table: Mapping[str, list[tuple]]) -> dict[str, str]:
        return {
            name: table_sha256([c.name for c in self.domain.tables[name].columns], rows, self._money[name])
            for name, rows in rows_by_table.items()
        }

    def read_rows(self, conn: sqlite3.Connection) -> dict[str, list[tuple]]:
        return {name: conn.execute(q).fetchall() for name, q in self._queries.items()}

    def seed_row(self, table: str, key: tuple) -> tuple | None:
        """One row of the pristine world, by primary key."""
        return self.selector.seed_row(table, key)

    def reset(self, role: Role | None = None, *, policy_text: str = "", clock: datetime = DEFAULT_CLOCK,
              faults: FaultPlan | None = None) -> TrialWorld:
        """Restore the pristine world into the trial copy and verify its hash.

        The previous trial is closed first: it shares the one copy, so a call or a
        grade through it now would act on this trial's state.
        """
        if self._trial is not None:
            self._trial.close()
            self._trial = None
        self._scratch.deserialize(self._image)
        # A copy byte-identical to the pristine image has the pristine's canonical hash, computed
        # at open; anything else is hashed in full, so a changed copy can never pass as the seed.
        if self._scratch.serialize() == self._image:
            got = self.content_sha256
        else:
            got = combine_sha256(self._hash_rows(self.read_rows(self._scratch)))
        if got != self.seed_sha256:
            raise ResetError(
                f"{self.path}: world hash after reset {got[:12]}… != recorded seed hash {self.seed_sha256[:12]}…; trial refused"
            )
        self._trial = TrialWorld(self, role, policy_text, clock, faults or FaultPlan())
        return self._trial


def _select_sql(table) -> str:
    keys = [c.name for c in table.primary_key.columns]
    if not keys:
        raise ValueError(f"table {table.name}: a primary key is required")
    cols = ", ".join(changes.q(c.name) for c in table.columns)
    return f"SELECT {cols} FROM {changes.q(table.name)} ORDER BY {', '.join(changes.q(k) for k in keys)}"


class TrialWorld:
    """One trial's copy of the world: role-checked tool calls, every call traced.

    The trial holds one SQLAlchemy connection for its life; every tool call is
    one transaction on it, committed when the call returns and rolled back when
    it raises. It is closed when its world is reset for the next trial.
    """

    def __init__(self, world: World, role: Role | None, policy_text: str, clock: datetime, faults: FaultPlan):
        self.world = world
        self.role = role
        self.policy_text = policy_text
        self.clock = clock
        self.faults = faults
        self.trace: list[TraceEvent] = []
        self._conn = world.engine.connect()
        self._closed = False

    @property
    def domain(self) -> Domain:
        return self.world.domain

    @property
    def db(self) -> sqlite3.Connection:
        """The trial's SQLite connection, for reading its state (grading, hashing); tools write through calls."""
        if self._closed:
            raise RuntimeError("trial closed: its world was reset for another trial")
        return self.world._scratch

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._conn.close()

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
        if self.role is not None and tool not in self.role.permitted and spec.kind != "generic":
            return self._record(event, False, "denied", error=f"Tool '{tool}' is not permitted for role {self.role.name}.")
        ctx = ToolContext(conn=self._conn, now=self.clock, policy_text=self.policy_text)
        fault = self.faults.take(tool)
        try:
            with self._conn.begin():
                result = spec.fn(ctx, spec.args(**arguments)) if spec.args else spec.fn(ctx, **arguments)
                if fault is Fault.ERROR_BEFORE_COMMIT:
                    raise _InjectedFault("backend error: transaction aborted")
        except _InjectedFault as exc:
            return self._record(event, True, "fault", error=str(exc))
        except (ToolError, ValidationError, TypeError, ValueError, KeyError) as exc:
            return self._record(event, True, "error", error=_error_text(exc))
        if fault in (Fault.LOST_RESPONSE, Fault.TIMEOUT):
            return self._record(event, True, "fault", error=fault.agent_message, rows_written=ctx.rows_written)
        return self._record(event, True, "ok", result=result, rows_written=ctx.rows_written)

    def _record(self, event: dict, permitted: bool, outcome: str, *, result: Any = None, error: str | None = None,
                rows_written: int = 0) -> TraceEvent:
        ev = TraceEvent(**event, permitted=permitted, outcome=outcome, result=result, error=error, rows_written=rows_written)
        self.trace.append(ev)
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
        return combine_sha256(self.world._hash_rows(self.rows()))


class _InjectedFault(Exception):
    """Raised inside the transaction so the real rollback path runs."""


def _error_text(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "arguments"
        return f"invalid arguments: {loc}: {first['msg']} ({exc.error_count()} error(s))"
    return str(exc)
