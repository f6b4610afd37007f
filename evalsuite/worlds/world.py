"""A world: the pristine SQLite state of a domain, and the reset that restores it into the copy each trial acts on.

Every trial starts from a restore of the pristine world, checked against the
recorded seed hash before any agent acts: a world that does not reset
identically turns infrastructure noise into agent failures. The first reset
restores the whole image and hashes it; later ones put back only the rows the
previous trial's change log names and verify those rows by digest, so a reset
costs what the trial touched, not the world's size. Anything the log cannot
vouch for (a schema change, a pragma, a write to the log itself or to a table
without triggers) sends the reset back to the whole image and a full hash. The calls a trial makes on the
restored copy are evalsuite.worlds.trial_world's.
"""
from __future__ import annotations

import hashlib
import itertools
import sqlite3
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import closing
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel
from sqlalchemy import Connection, Table, create_engine, event
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.pool import StaticPool
from sqlalchemy.schema import CreateIndex, CreateTable

from evalsuite.core.hashing import TableHash, combine_sha256, row_digest
from evalsuite.core.io import write_with
from evalsuite.core.records import Role
from evalsuite.worlds import changes
from evalsuite.worlds.domain import Domain
from evalsuite.worlds.faults import FaultPlan
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.types import Money

# Rows read, hashed or inserted per block: a large table never becomes one list of rows.
BLOCK_ROWS = 20_000
# Canonical table hashes by the sha256 of the world image they were computed from: one build opens the same
# world in several stages, and identical bytes hold identical rows. A few worlds at most, so a bounded dict.
_HASHES: dict[str, dict[str, str]] = {}
_HASHES_KEPT = 8
# Empties the change log after a row restore. The comment makes the text unique: SQLite asks the authorizer only
# when a statement is prepared, and a trial's own statement of the same text would reuse this unwatched one.
_CLEAR_LOG = f"DELETE FROM {changes.q(changes.LOG)} /* evalsuite row reset */"
# What the triggers' record rests on, read before a row restore: a schema change (a dropped trigger included) bumps
# schema_version even when made behind the authorizer's back, and without recursive triggers a REPLACE deletes
# rows unlogged. Plain pragmas: SQLite 3.40's pragma_* table functions crash after a deserialize that changed
# the schema.
_TRIGGERS_ON = "PRAGMA recursive_triggers = ON /* evalsuite reset */"
_LOG_GUARD = ("PRAGMA schema_version", "PRAGMA recursive_triggers")
_WRITES = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}
_READS = {sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_TRANSACTION,
          sqlite3.SQLITE_SAVEPOINT, getattr(sqlite3, "SQLITE_RECURSIVE", 33)}


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
        _install_indexes(self._pristine, domain.tables)  # a world file written before an index was declared
        self._queries = {name: _select_sql(t) for name, t in domain.tables.items()}
        changes.install(self._pristine, domain.tables)
        self._money = {name: [i for i, c in enumerate(t.columns) if isinstance(c.type, Money)]
                       for name, t in domain.tables.items()}
        self.schemas = {
            name: TableSchema(columns=[c.name for c in t.columns], key=[c.name for c in t.primary_key.columns],
                              money=[c.name for c in t.columns if isinstance(c.type, Money)])
            for name, t in domain.tables.items()
        }
        self._pristine.execute("PRAGMA query_only = ON")  # domain checks read it; nothing may write it
        self._image = self._pristine.serialize()
        self.table_hashes = self._image_hashes()
        self.content_sha256 = combine_sha256(self.table_hashes)
        self.seed_sha256 = seed_sha256 or self.content_sha256
        # pristine rows (and their digests) by key, kept across resets, up to changes.SEED_CACHE_ROWS of them
        self._seed_at: dict[tuple[str, tuple], tuple[list[tuple], list[bytes]]] = {}
        self.origin = self  # the world this one's pristine state was loaded by (itself, or a sibling's origin)
        self._open_trial_copy()

    def sibling(self) -> World:
        """Another world over this one's pristine state, with a trial copy of its own: trials in flight at once
        on one thread (evalsuite.trials.engine) each act on one. What is read-only is shared (the pristine
        database, its image and hashes, the row selector, the pristine rows a reset has read), so a sibling
        costs its trial copy, not another load and hash of the world. Siblings stay on their creator's thread."""
        twin = object.__new__(World)
        shared = ("domain", "path", "_pristine", "_queries", "_money", "schemas", "_image", "table_hashes",
                  "content_sha256", "seed_sha256", "_seed_at", "origin")
        twin.__dict__.update({name: self.__dict__[name] for name in shared})
        twin.__dict__["selector"] = self.selector
        twin._open_trial_copy()
        return twin

    def _open_trial_copy(self) -> None:
        """The copy every reset restores and trials act on, watched by the authorizer, with its change state."""
        domain = self.domain
        # Statements are cached per connection; grading, hashing and the tools together use more than the default 128.
        self._scratch = sqlite3.connect(":memory:", check_same_thread=False, cached_statements=512)
        # A REPLACE that deletes a conflicting row fires the delete trigger only with recursive triggers on,
        # and the change log must see that row go.
        self._scratch.execute(_TRIGGERS_ON)
        scratch = self._scratch
        self.engine = create_engine("sqlite://", creator=lambda: scratch, poolclass=StaticPool)
        # One SQLAlchemy connection for every trial (a trial's call is one transaction on it): a connection per
        # trial cost more than restoring a few rows. Opened before the authorizer watches (first-connect pragmas).
        self._conn = self.engine.connect()
        self._trial: TrialWorld | None = None
        self._restore_sql = {name: _restore_sql(t) for name, t in domain.tables.items()}
        # Every table a statement prepared on the trial copy could write, and whether one could do more than
        # write rows (a pragma, schema change, attach, a write to the log not made by its triggers). SQLite asks
        # at prepare time and statements are cached across trials, so both only grow: what a cached statement
        # may write stays in the set.
        self._writable: set[str] = set()
        self._logged_tables = set(domain.tables) | {changes.LOG}
        self._resetting = False  # the reset's own statements are not the trial's
        self._guard: tuple = ()  # _LOG_GUARD's answer on the freshly restored image
        self.last_reset: str | None = None  # "image" or "rows": how the current trial's copy was restored
        # AUTOINCREMENT counters live in sqlite_sequence, which SQLite writes without asking: whole image only.
        self._beyond_rows = bool(self._pristine.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'")
                                 .fetchone())
        self._restored = False  # the trial copy holds the pristine rows plus what the change log names
        self._scratch.set_authorizer(self._authorizer)

    def close(self) -> None:
        """Give back this world's memory now: its trial copy, and for the world that loaded them (not a sibling) the
        pristine copy and its image. A large world is three copies of its file; a build opens one per stage, and
        waiting for the garbage collector (the world's trial and row selector point back at it) holds them all."""
        if self._trial is not None:
            self._trial.close()
            self._trial = None
        self._conn.close()
        self.engine.dispose()
        self._scratch.close()
        if self.origin is self:
            self._pristine.close()
            self._image = b""

    @property
    def _authorizer(self) -> Callable[..., int]:
        """_authorize through a weak reference: the trial copy holding a bound method of its world is a cycle the
        garbage collector cannot see through a sqlite3 connection, and every world of a build (its pristine copy,
        image and trial copy: three times a large world's size) would stay in memory to the process's end."""
        ref = weakref.ref(self)

        def authorize(*args) -> int:
            world = ref()
            return sqlite3.SQLITE_DENY if world is None else world._authorize(*args)

        return authorize

    @classmethod
    def build(cls, domain: Domain, tables: Mapping[str, Iterable[Mapping[str, Any]]], path: str | Path) -> World:
        """Write the seed tables into a fresh SQLite file (all or nothing) and open it.

        The file is filled under a temporary name unique to this call, so two builds never write one file.
        """
        def fill(tmp: Path) -> None:
            engine = create_engine(f"sqlite:///{tmp}")
            # A fresh file under a temporary name, renamed into place once whole and hashed after: a crash leaves
            # only the temporary file, so neither a rollback journal nor syncs can save anything.
            event.listen(engine, "connect", _unjournaled)
            try:
                with engine.begin() as conn:
                    # Indexes after the rows: built once from sorted keys, where one kept up row by row took twice
                    # the inserts' time for a 1M-row table. An index changes no row and so no hash.
                    for table in domain.metadata.sorted_tables:
                        conn.execute(CreateTable(table))
                    for name, table in domain.tables.items():
                        _insert(conn, table, tables.get(name, ()))
                    for table in domain.metadata.sorted_tables:
                        for index in sorted(table.indexes, key=lambda i: i.name):
                            conn.execute(CreateIndex(index))
            finally:
                engine.dispose()

        return cls(domain, write_with(path, fill))

    @property
    def trial_db(self) -> sqlite3.Connection:
        """The trial copy every reset restores, as SQLite (one per world: its trials take it in turn)."""
        return self._scratch

    @property
    def trial_connection(self) -> Connection:
        """The one SQLAlchemy connection on the trial copy that tool calls run their transactions on."""
        return self._conn

    @property
    def pristine_db(self) -> sqlite3.Connection:
        """The pristine world, for reading only (domain checks compare the end state with it)."""
        return self._pristine

    @cached_property
    def initial_rows(self) -> dict[str, list[tuple]]:
        """Every table's pristine rows in key order; read when first asked for (a large world holds millions)."""
        return self.read_rows(self._pristine)

    @cached_property
    def selector(self) -> changes.RowSelector:
        """The change selection of the pristine rows, made when a trial is first graded; it reads a table's
        pristine rows only when a grade needs one of them."""
        return changes.RowSelector(self.domain.tables, _PristineRows(self), seed_db=self._pristine)

    def _image_hashes(self) -> dict[str, str]:
        """The pristine's table hashes, computed once per distinct image in this process."""
        image = hashlib.sha256(self._image).hexdigest()
        if image not in _HASHES:
            while len(_HASHES) >= _HASHES_KEPT:
                _HASHES.pop(next(iter(_HASHES)))
            _HASHES[image] = self.hash_tables(self._pristine)
        return dict(_HASHES[image])

    def hash_tables(self, conn: sqlite3.Connection, tables: Iterable[str] | None = None) -> dict[str, str]:
        """Every table's (or these tables') canonical hash, read from `conn` a block of rows at a time."""
        out = {}
        for name in self._queries if tables is None else tables:
            query = self._queries[name]
            digest = TableHash([c.name for c in self.domain.tables[name].columns], self._money[name])
            cursor = conn.execute(query)
            while rows := cursor.fetchmany(BLOCK_ROWS):
                digest.add_rows(rows)
            out[name] = digest.hexdigest()
        return out

    def _authorize(self, action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None) -> int:
        if self._resetting:
            return sqlite3.SQLITE_OK
        if action in _WRITES and db == "main":
            self._writable.add(arg1 or "")
            if arg1 == changes.LOG and trigger is None:
                self._beyond_rows = True  # the log was written directly: it no longer vouches for the rows
        elif action not in _READS:
            self._beyond_rows = True
        return sqlite3.SQLITE_OK

    def _restore_logged(self) -> bool:
        """Put back the pristine row (or its absence) at every key the change log names, then check each of
        those rows against its pristine row by digest. Every other row the triggers saw no statement touch.
        False (nothing done) when the log cannot vouch for the trial: then only the whole image will do."""
        if self._beyond_rows or self._writable - self._logged_tables:
            return False
        self._restored = False  # until verified: a failure half-way leaves the next reset the whole image
        if self._unwatched(*_LOG_GUARD) != self._guard:
            return False
        self._resetting = True
        try:
            expected = {name: self._put_back(name, sorted(keys, key=changes.pk_order))
                        for name, keys in self.selector.changed_keys(self._scratch).items()}
            self._scratch.execute(_CLEAR_LOG)
            self._scratch.commit()
        finally:
            self._resetting = False
        self._restored = all(self._row_digests(self._scratch, name, keys) == digests
                             for name, (keys, digests) in expected.items())
        return self._restored

    def _unwatched(self, *statements: str) -> tuple:
        """Run the reset's own statements unseen by the authorizer; each one's first value (None: no row)."""
        self._resetting = True
        try:
            rows = [self._scratch.execute(sql).fetchone() for sql in statements]
        finally:
            self._resetting = False
        return tuple(r[0] if r else None for r in rows)

    def _put_back(self, name: str, keys: list[tuple]) -> tuple[list[tuple], list[bytes]]:
        """Delete the trial's rows at `keys` and insert the pristine ones (rowid included: unordered reads keep
        their order); returns the keys and the pristine rows' digests."""
        delete, _, insert, _ = self._restore_sql[name]
        found = [self._seed_rows(name, key) for key in keys]
        self._scratch.executemany(delete, keys)
        self._scratch.executemany(insert, [row for rows, _ in found for row in rows])
        return keys, [d for _, digests in found for d in digests]

    def _seed_rows(self, name: str, key: tuple) -> tuple[list[tuple], list[bytes]]:
        """The pristine row at `key` (none or one) and its digest; the pristine is read-only, so kept."""
        hit = self._seed_at.get((name, key))
        if hit is None:
            if len(self._seed_at) >= changes.SEED_CACHE_ROWS:
                self._seed_at.clear()
            _, select, _, money = self._restore_sql[name]
            rows = self._pristine.execute(select, key).fetchall()
            hit = self._seed_at[(name, key)] = (rows, [row_digest(row, money) for row in rows])
        return hit

    def _row_digests(self, conn: sqlite3.Connection, name: str, keys: list[tuple]) -> list[bytes]:
        _, select, _, money = self._restore_sql[name]
        return [row_digest(row, money) for key in keys for row in conn.execute(select, key)]

    def read_rows(self, conn: sqlite3.Connection) -> dict[str, list[tuple]]:
        return {name: conn.execute(q).fetchall() for name, q in self._queries.items()}

    def seed_row(self, table: str, key: tuple) -> tuple | None:
        """One row of the pristine world, by primary key."""
        return self.selector.seed_row(table, key)

    def reset(self, role: Role | None = None, *, policy_text: str = "", clock: datetime | None = None,
              faults: FaultPlan | None = None) -> TrialWorld:
        """Restore the pristine world into the trial copy and verify its hash.

        The previous trial is closed first: it shares the one copy, so a call or a
        grade through it now would act on this trial's state.
        """
        if self._trial is not None:
            self._trial.close()
            self._trial = None
        self._scratch.rollback()  # a write left uncommitted by the last trial is no part of any state
        if self._restored and self._restore_logged():
            got, self.last_reset = self.content_sha256, "rows"
        else:
            self.last_reset = "image"
            self._scratch.set_authorizer(None)  # sqlite3_deserialize prepares an ATTACH of its own
            self._scratch.deserialize(self._image)
            self._scratch.set_authorizer(self._authorizer)
            # A copy byte-identical to the pristine image has the pristine's canonical hash, computed
            # at open; anything else is hashed in full, so a changed copy can never pass as the seed.
            if self._scratch.serialize() == self._image:
                got = self.content_sha256
            else:
                got = combine_sha256(self.hash_tables(self._scratch))
            self._restored = got == self.content_sha256
            self._guard = self._unwatched(_TRIGGERS_ON, *_LOG_GUARD)[1:]
        if got != self.seed_sha256:
            raise ResetError(f"{self.path}: world hash after reset {got[:12]}… != recorded seed hash "
                             f"{self.seed_sha256[:12]}…; trial refused")
        self._trial = TrialWorld(self, role, policy_text, clock or self.domain.clock, faults or FaultPlan())
        return self._trial


class _PristineRows(Mapping[str, list[tuple]]):
    """A world's pristine rows per table, read from its pristine copy when looked up."""

    def __init__(self, world: World):
        self._world = world

    def __getitem__(self, name: str) -> list[tuple]:
        return self._world._pristine.execute(self._world._queries[name]).fetchall()

    def __iter__(self) -> Iterator[str]:
        return iter(self._world._queries)

    def __len__(self) -> int:
        return len(self._world._queries)


class Columns(NamedTuple):
    """A block of rows given column by column, each values list as long as the others: a large table is inserted
    without a dict per row (evalsuite.sourcing.snapshot.iter_frame_columns)."""

    names: list[str]
    values: list[list[Any]]


def _insert(conn: Connection, table: Table, rows: Iterable[Mapping[str, Any]] | Iterable[Columns]) -> None:
    """Insert dict rows (or Columns blocks) a block at a time as plain tuples, each value through its column's bind
    processing (Money quantized), as `insert(table)` would; the first row's keys (block's names) name the columns
    given."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return
    given = first.names if isinstance(first, Columns) else list(first)
    unknown = sorted(set(given) - set(table.columns.keys()))
    if unknown:
        raise ValueError(f"table {table.name}: unknown column(s) {unknown}")
    columns = [c for c in table.columns if c.name in given]
    procs = [c.type.dialect_impl(conn.dialect).bind_processor(conn.dialect) for c in columns]
    sql = (f"INSERT INTO {changes.q(table.name)} ({', '.join(changes.q(c.name) for c in columns)}) "
           f"VALUES ({', '.join('?' for _ in columns)})")
    names = [c.name for c in columns]
    cursor = conn.connection.driver_connection.cursor()
    if isinstance(first, Columns):
        blocks = ([b.values[b.names.index(n)] for n in names] for b in itertools.chain([first], rows))
    else:
        blocks = ([[row.get(n) for row in block] for n in names] for block in _blocks(itertools.chain([first], rows)))
    for values in blocks:
        values = [c.type.bind_block(col) if isinstance(c.type, Money) else list(map(p, col)) if p else col
                  for c, p, col in zip(columns, procs, values)]
        cursor.executemany(sql, zip(*values))


def _unjournaled(conn: sqlite3.Connection, _record: Any) -> None:
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")


def _blocks(rows: Iterable[Any]) -> Iterable[list[Any]]:
    it = iter(rows)
    while block := list(itertools.islice(it, BLOCK_ROWS)):
        yield block


def _install_indexes(conn: sqlite3.Connection, tables: Mapping[str, Table]) -> None:
    """Create every index the domain declares, if missing; an index changes no row and so no hash."""
    for table in tables.values():
        for index in sorted(table.indexes, key=lambda i: i.name):
            conn.execute(str(CreateIndex(index, if_not_exists=True).compile(dialect=sqlite_dialect.dialect())))
    conn.commit()


def _restore_sql(table: Table) -> tuple[str, str, str, frozenset[int]]:
    """(delete, select, insert) of one row by primary key, and the money positions of the selected row."""
    name, cols = changes.q(table.name), [c.name for c in table.columns]
    where = " AND ".join(f"{changes.q(c.name)} IS ?" for c in table.primary_key.columns)
    if table.dialect_options["sqlite"].get("with_rowid", True) and "rowid" not in cols:
        cols = ["rowid", *cols]
    money = frozenset(i for i, c in enumerate(cols) if c in table.columns and isinstance(table.columns[c].type, Money))
    listed = ", ".join(changes.q(c) if c != "rowid" else c for c in cols)
    return (f"DELETE FROM {name} WHERE {where}", f"SELECT {listed} FROM {name} WHERE {where}",
            f"INSERT INTO {name} ({listed}) VALUES ({', '.join('?' for _ in cols)})", money)


def _select_sql(table) -> str:
    keys = [c.name for c in table.primary_key.columns]
    if not keys:
        raise ValueError(f"table {table.name}: a primary key is required")
    cols = ", ".join(changes.q(c.name) for c in table.columns)
    return f"SELECT {cols} FROM {changes.q(table.name)} ORDER BY {', '.join(changes.q(k) for k in keys)}"
