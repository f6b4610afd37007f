"""A world: the pristine SQLite state of a domain, and per-trial copies restored from it.

Every trial starts from a byte-for-byte restore of the pristine world, and the
restore is checked against the recorded seed hash before any agent acts: a
world that does not reset identically turns infrastructure noise into agent
failures.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import create_engine, insert
from sqlalchemy.pool import StaticPool

from evalsuite.grading import TableSchema
from evalsuite.hashing import combine_sha256, table_sha256
from evalsuite.records import Role, TraceEvent
from evalsuite.world.domain import Domain, ToolContext, ToolError
from evalsuite.world.faults import Fault, FaultPlan
from evalsuite.world.types import Money

DEFAULT_CLOCK = datetime(2026, 6, 30, 9, 0, 0)


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
        with sqlite3.connect(self.path) as disk:
            disk.backup(self._pristine)
        _install_change_log(self._pristine, domain.tables)
        self._queries = {name: _select_sql(t) for name, t in domain.tables.items()}
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
        self._image = self._pristine.serialize()
        self._scratch = sqlite3.connect(":memory:", check_same_thread=False)
        self.engine = create_engine("sqlite://", creator=lambda: self._scratch, poolclass=StaticPool)

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

    def reset(self, role: Role | None = None, *, policy_text: str = "", clock: datetime = DEFAULT_CLOCK,
              faults: FaultPlan | None = None) -> TrialWorld:
        """Restore the pristine world into the trial copy and verify its hash."""
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
        return TrialWorld(self, role, policy_text, clock, faults or FaultPlan())


CHANGE_LOG = "_evalsuite_changed"


def _install_change_log(conn: sqlite3.Connection, tables) -> None:
    """Triggers note which tables a trial wrote, so reading the end state skips untouched tables."""
    conn.execute(f'CREATE TABLE IF NOT EXISTS "{CHANGE_LOG}" (tbl TEXT PRIMARY KEY)')
    for name in tables:
        for op in ("INSERT", "UPDATE", "DELETE"):
            conn.execute(
                f'CREATE TRIGGER IF NOT EXISTS "_evs_{name}_{op.lower()}" AFTER {op} ON "{name}" '
                f"BEGIN INSERT OR IGNORE INTO \"{CHANGE_LOG}\"(tbl) VALUES ('{name}'); END"
            )
    conn.commit()


def _select_sql(table) -> str:
    cols = ", ".join(f'"{c.name}"' for c in table.columns)
    keys = [c.name for c in table.primary_key.columns]
    if not keys:
        raise ValueError(f"table {table.name}: a primary key is required")
    order = ", ".join(f'"{k}"' for k in keys)
    return f'SELECT {cols} FROM "{table.name}" ORDER BY {order}'


class TrialWorld:
    """One trial's copy of the world: role-checked tool calls, every call traced."""

    def __init__(self, world: World, role: Role | None, policy_text: str, clock: datetime, faults: FaultPlan):
        self.world = world
        self.role = role
        self.policy_text = policy_text
        self.clock = clock
        self.faults = faults
        self.trace: list[TraceEvent] = []

    @property
    def domain(self) -> Domain:
        return self.world.domain

    def visible_tools(self) -> list[str]:
        """Every tool the agent is shown: the whole domain surface, permitted or not."""
        return sorted(self.domain.tools)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, actor: str = "agent") -> TraceEvent:
        """Check the role, run the tool in its own transaction, and trace the call whatever happens."""
        arguments = dict(arguments or {})
        spec = self.domain.tools.get(tool)
        event = dict(seq=len(self.trace) + 1, actor=actor, tool=tool, arguments=arguments,
                     kind=spec.kind if spec else None)
        if spec is None:
            return self._record(event, False, "error", error=f"Tool '{tool}' not found.")
        if self.role is not None and tool not in self.role.permitted and spec.kind != "generic":
            return self._record(event, False, "denied", error=f"Tool '{tool}' is not permitted for role {self.role.name}.")
        ctx = ToolContext(conn=None, now=self.clock, policy_text=self.policy_text)  # type: ignore[arg-type]
        fault = self.faults.take(tool)
        try:
            with self.world.engine.begin() as conn:
                ctx.conn = conn
                result = spec.fn(ctx, spec.args(**arguments)) if spec.args else spec.fn(ctx, **arguments)
                if fault is Fault.ERROR_BEFORE_COMMIT:
                    raise _InjectedFault("backend error: transaction aborted")
        except _InjectedFault as exc:
            return self._record(event, True, "fault", error=str(exc))
        except (ToolError, ValidationError, TypeError, ValueError, KeyError) as exc:
            return self._record(event, True, "error", error=_error_text(exc))
        if fault in (Fault.LOST_RESPONSE, Fault.TIMEOUT):
            return self._record(event, True, "fault", error=fault.agent_message, rows_written=ctx.rows_written, committed=True)
        return self._record(event, True, "ok", result=result, rows_written=ctx.rows_written)

    def _record(self, event: dict, permitted: bool, outcome: str, *, result: Any = None, error: str | None = None,
                rows_written: int = 0, committed: bool = False) -> TraceEvent:
        ev = TraceEvent(**event, permitted=permitted, outcome=outcome, result=result, error=error, rows_written=rows_written)
        self.trace.append(ev)
        return ev

    def rows(self) -> dict[str, list[tuple]]:
        return self.world.read_rows(self.world._scratch)

    def changed_rows(self) -> dict[str, list[tuple]]:
        """Rows of only the tables some statement wrote during this trial."""
        conn = self.world._scratch
        names = [r[0] for r in conn.execute(f'SELECT tbl FROM "{CHANGE_LOG}"')]
        return {n: conn.execute(self.world._queries[n]).fetchall() for n in names if n in self.world._queries}

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
