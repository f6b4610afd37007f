"""Row-level change log and the rows a grade must see.

Triggers on every domain table record the primary key of each row a statement
inserts, updates or deletes (old and new key of an update). They are installed
in the pristine in-memory copy, so they travel in the image every trial is
restored from, and a restore empties the log.

A grade then needs only the logged rows and the rows the goal's assertions
match now: every other row is identical in the seed and at the end, so it can
add no diff, no collateral change and no assertion match. Assertion rows are
looked up with SQL in the trial only: a row that matched in the seed and no
longer does was written, so it is logged already, and an unlogged row's seed
side is itself (looked up by key in the pristine rows, and checked); a text key
naming the whole primary key of a written row needs no lookup, as only that row
can match it and it is read with the logged rows. The selection is kept in
primary-key order on both sides, so the verdict (details included) is the one a
whole-table diff gives.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Table

from evalsuite.core.records import GoalState
from evalsuite.worlds.types import Money

Rows = dict[str, list[tuple]]
LOG = "_evalsuite_changes"  # outside the domain's metadata: never hashed, never graded
_INT64 = (-(2**63), 2**63 - 1)
# Pristine rows kept by key (by a world's reset, by its row selector), across trials: trials of one task set touch
# the same rows again. Bounded: a sweep over a huge world must not keep every row it ever touched.
SEED_CACHE_ROWS = 100_000
_ABSENT = object()  # a key not looked up yet (None is a key with no pristine row)


def q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def install(conn: sqlite3.Connection, tables: Mapping[str, Table]) -> None:
    """Create the log and its triggers; keys narrower than the widest are padded with 0 to stay unique."""
    width = max(len(t.primary_key.columns) for t in tables.values())
    cols = ", ".join(f"k{i}" for i in range(width))  # no declared type: keys are stored exactly as in the table
    conn.execute(f"CREATE TABLE IF NOT EXISTS {q(LOG)} (tbl TEXT NOT NULL, {cols}, PRIMARY KEY (tbl, {cols}))")
    for name, table in tables.items():
        keys = [c.name for c in table.primary_key.columns]
        for op, refs in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            logs = " ".join(
                f"INSERT OR IGNORE INTO {q(LOG)} VALUES ({_literal(name)}, "
                + ", ".join([f"{r}.{q(k)}" for k in keys] + ["0"] * (width - len(keys))) + ");"
                for r in refs)
            conn.execute(f"CREATE TRIGGER IF NOT EXISTS {q(f'_evs_{name}_{op.lower()}')} AFTER {op} ON {q(name)} "
                         f"BEGIN {logs} END")
    conn.commit()


def pk_order(key: Sequence[Any]) -> tuple:
    """Sort key giving SQLite's BINARY order of primary keys: NULL < numbers < text < blobs."""
    return tuple((0, 0) if v is None else (1, v) if isinstance(v, (int, float)) else (2, v) if isinstance(v, str)
                 else (3, v) for v in key)


class RowSelector:
    """Per world: the prepared SQL that finds logged keys and the rows a grade needs."""

    def __init__(self, tables: Mapping[str, Table], seed: Mapping[str, Sequence[tuple]],
                 seed_db: sqlite3.Connection | None = None):
        for name, table in tables.items():
            collated = [c.name for c in table.primary_key.columns if getattr(c.type, "collation", None)]
            if collated:  # pk_order reproduces only the default BINARY collation
                raise ValueError(f"table {name}: primary key column(s) {collated} declare a collation; not supported")
        self.tables = dict(tables)
        self._cols = {n: [c.name for c in t.columns] for n, t in tables.items()}
        self._col_set = {n: frozenset(cols) for n, cols in self._cols.items()}
        # per table its key columns when none holds money (a money key compares as a decimal, not as text)
        self._text_keys = {n: [c.name for c in t.primary_key.columns] for n, t in tables.items()
                           if not any(isinstance(c.type, Money) for c in t.primary_key.columns)}
        self._key_pos = {n: [self._cols[n].index(c.name) for c in t.primary_key.columns] for n, t in tables.items()}
        self._money = {n: {c.name for c in t.columns if isinstance(c.type, Money)} for n, t in tables.items()}
        # Indexed per table when a grade first looks a row up: most grades touch a few small tables. With the
        # seed as a database, a row is looked up by key there instead: a million-row table is never read whole.
        self._seed_rows = seed
        self._seed_db = seed_db
        self._seed: dict[str, dict[tuple, tuple]] = {}
        # (table, key) -> pristine row or None, looked up in seed_db: it is the world's read-only pristine copy
        self._seed_at: dict[tuple[str, tuple], tuple | None] = {}
        width = max(len(k) for k in self._key_pos.values())
        self._log_sql = f"SELECT tbl, {', '.join(f'k{i}' for i in range(width))} FROM {q(LOG)}"
        self._logged_rows_sql = {n: self._logged_rows(n, t) for n, t in tables.items()}
        self._by_key_sql = {n: self._select(n, [c.name for c in t.primary_key.columns]) for n, t in tables.items()}
        self._lookup_sql: dict[tuple[str, tuple[str, ...]], str] = {}

    def _logged_rows(self, name: str, table: Table) -> str:
        on = " AND ".join(f"t.{q(c.name)} IS l.k{i}" for i, c in enumerate(table.primary_key.columns))
        cols = ", ".join(f"t.{q(c)}" for c in self._cols[name])
        return f"SELECT {cols} FROM {q(LOG)} AS l JOIN {q(name)} AS t ON {on} WHERE l.tbl = {_literal(name)}"

    def _select(self, name: str, where: Sequence[str]) -> str:
        sql = f"SELECT {', '.join(q(c) for c in self._cols[name])} FROM {q(name)}"
        return sql + (" WHERE " + " AND ".join(f"{q(c)} IS ?" for c in where) if where else "")

    def key_of(self, table: str, row: Sequence[Any]) -> tuple:
        return tuple([row[i] for i in self._key_pos[table]])

    def seed_row(self, table: str, key: tuple) -> tuple | None:
        if self._seed_db is not None:
            at = (table, tuple(key))
            hit = self._seed_at.get(at, _ABSENT)
            if hit is _ABSENT:
                if len(self._seed_at) >= SEED_CACHE_ROWS:
                    self._seed_at.clear()
                hit = self._seed_at[at] = self.row(self._seed_db, table, key)
            return hit
        if table not in self._seed:
            self._seed[table] = {self.key_of(table, r): r for r in self._seed_rows[table]}
        return self._seed[table].get(tuple(key))

    def changed_keys(self, db: sqlite3.Connection) -> dict[str, set[tuple]]:
        out: dict[str, set[tuple]] = {}
        for row in db.execute(self._log_sql):
            out.setdefault(row[0], set()).add(row[1:1 + len(self._key_pos[row[0]])])
        return out

    def row(self, db: sqlite3.Connection, table: str, key: tuple) -> tuple | None:
        found = db.execute(self._by_key_sql[table], tuple(key)).fetchall()
        return found[0] if found else None

    def rows_to_grade(self, db: sqlite3.Connection, goal: GoalState) -> tuple[Rows, Rows]:
        """(seed rows, rows now) of every table written or asserted on, the same keys on both sides, in key order."""
        logged = self.changed_keys(db)
        now: dict[str, dict[tuple, tuple]] = {}
        for t in logged:
            now[t] = {self.key_of(t, r): r for r in db.execute(self._logged_rows_sql[t])}
        keys = {t: set(ks) for t, ks in logged.items()}
        for a in goal.assertions:
            if a.table not in self.tables or not a.key.keys() <= self._col_set[a.table]:
                continue  # grade() reports an unknown table, and a key naming no column matches no row
            found = now.setdefault(a.table, {})
            if self._written_key(a.table, a.key) in logged.get(a.table, ()):
                continue  # the one row the key can match was written: read with the logged rows already
            for r in self._lookup(db, a.table, a.key):
                k = self.key_of(a.table, r)
                keys.setdefault(a.table, set()).add(k)
                if k not in logged.get(a.table, ()) and self.seed_row(a.table, k) != r:
                    raise RuntimeError(f"table {a.table} row {k}: differs from the seed but the change log has no "
                                       "record of it; the grade would be wrong")
                found[k] = r
        # Tables in domain order and rows in key order, as whole tables come: the order of a verdict's details.
        initial, end = {}, {}
        for t in (t for t in self.tables if t in keys):
            ordered = sorted(keys[t], key=pk_order) if len(keys[t]) > 1 else list(keys[t])
            initial[t] = [r for r in (self.seed_row(t, k) for k in ordered) if r is not None]
            end[t] = [now[t][k] for k in ordered if k in now.get(t, {})]
        return initial, end

    def _written_key(self, table: str, key: Mapping[str, Any]) -> tuple | None:
        """The primary key a text key names, when it names every key column and no other: the grader matches text
        exactly, so only the row stored under those very values can match (None for any other key)."""
        names = self._text_keys.get(table)
        if names is None or len(key) != len(names):
            return None
        values = tuple([key.get(c) for c in names])
        for v in values:
            if not isinstance(v, str):
                return None
        return values

    def _lookup(self, db: sqlite3.Connection, table: str, key: Mapping[str, Any]) -> list[tuple]:
        """Every row now whose values could equal the key as the grader compares them (a superset, filtered by it).

        SQL `IS ?` is at least as loose as the grader's comparison for NULL, text,
        booleans, 64-bit integers and floats (affinity only adds matches the grader
        then rejects). Money columns compare as exact decimals ('12.5' = '12.50')
        and other values have no safe SQL form, so those columns stay out of the
        WHERE clause and the grader filters them.
        """
        usable = {c: v for c, v in key.items() if c not in self._money[table] and _sql_safe(v)}
        where = tuple(usable)
        if (table, where) not in self._lookup_sql:
            self._lookup_sql[(table, where)] = self._select(table, where)
        sql = self._lookup_sql[(table, where)]
        return db.execute(sql, tuple(usable.values())).fetchall()


def _sql_safe(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return _INT64[0] <= value <= _INT64[1]  # sqlite3 cannot bind a wider int
    return value is None or isinstance(value, (str, bool, float))
