"""Row helpers every tau2 domain uses between its nested DB (db.json) and its tables, and in its tools.

Tables follow one convention: a map of the source becomes a table with a
`position` column (map order is observable and keeps the JSON round trip
exact), a list a table keyed by (owner, position); JSON-valued columns hold
json.dumps text. Tools read and write through the trial's own DBAPI connection
in plain SQL (see evalsuite.worlds.domain.ToolContext.db).
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import MetaData

from evalsuite.worlds.domain import ToolContext, ToolError

Row = dict[str, Any]

# WITHOUT ROWID: rows are stored in primary-key order, so a lookup by key or by
# (owner, position) prefix is one B-tree descent with no second rowid lookup.
CLUSTERED = {"sqlite_with_rowid": False}


def table_columns(metadata: MetaData) -> dict[str, tuple[str, ...]]:
    """Column names per table, in table order (plain str, not SQLAlchemy's quoted_name: a str subclass pydantic
    serializes down a slow path)."""
    return {name: tuple(str(c.name) for c in t.columns) for name, t in metadata.tables.items()}


def select_sql(columns: Mapping[str, Sequence[str]], table: str, where: str = "", order: str = "") -> str:
    """`SELECT <all columns in table order> FROM table [WHERE …] [ORDER BY …]` as plain SQL."""
    sql = f'SELECT {", ".join(columns[table])} FROM {table}'
    if where:
        sql += f" WHERE {where}"
    if order:
        sql += f" ORDER BY {order}"
    return sql


def as_dicts(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[Row]:
    """Rows as SQLite returns them (tuples in table column order) as dicts."""
    return [dict(zip(columns, r)) for r in rows]


def grouped(rows: list[Row], owner: str) -> dict[str, list[Row]]:
    """Rows by their owner's id, each group in position order."""
    out: dict[str, list[Row]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: r["position"]):
        out[r[owner]].append(r)
    return out


def by_position(rows: Iterable[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: r["position"])


def json_cell(value: str | None) -> Any:
    """A JSON column's value: a fresh container per call (callers may mutate what they get)."""
    if value is None:
        return None
    parsed = _parse(value)
    return dict(parsed) if isinstance(parsed, dict) else list(parsed) if isinstance(parsed, list) else parsed


@lru_cache(maxsize=8192)
def _parse(text: str) -> Any:
    # The same option maps and id lists recur across thousands of rows; parse each text once.
    return json.loads(text)


def check_fields(obj: Mapping[str, Any], kind: str, fields: set[str], where: str, optional: Iterable[str] = ()) -> None:
    """Refuse fields we would not write back: the round trip must be exact or fail loudly."""
    keys = set(obj)
    missing = fields - keys
    unknown = keys - fields - set(optional)
    if missing or unknown:
        raise ValueError(f"{where}: {kind} missing {sorted(missing)} / unknown {sorted(unknown)}")


def check_keyed(key: str, value: str, where: str) -> None:
    if key != value:
        raise ValueError(f"{where}: map key {key!r} differs from the entity id {value!r}")


def check_top_level(db: Mapping[str, Any], top_level: Sequence[str]) -> None:
    if set(db) != set(top_level):
        raise ValueError(f"DB top-level keys must be exactly {list(top_level)}, got {list(db)}")


# ---- tools' data access --------------------------------------------------------------------------

def key(value: Any) -> str | None:
    """tau2 looks ids up in dicts: an unhashable id is a TypeError, any other non-string id is just absent."""
    if isinstance(value, (list, dict)):
        raise TypeError(f"unhashable type: '{type(value).__name__}'")
    return value if isinstance(value, str) else None


def named_queries(sql: Mapping[str, str]) -> tuple[Callable[..., list[Row]], Callable[..., Row]]:
    """A domain's `rows(ctx, query, *params)` and `one(ctx, query, message, *params)` over its named queries.

    `one` gives the first row found, else ToolError(message); a None parameter (an id of a type tau2's dict
    lookup cannot find, see `key`) finds nothing. Every query is a SELECT naming its columns: it writes no row
    for `ctx.rows_written` to count, and its column names are read from the cursor once per query, not on every
    call (building `description` costs about as much as the rows)."""
    columns: dict[str, list[str]] = {}

    def rows(ctx: ToolContext, query: str, *params: Any) -> list[Row]:
        cursor = ctx.db.execute(sql[query], params)
        cols = columns.get(query)
        if cols is None:
            cols = columns[query] = [d[0] for d in cursor.description]
        return [dict(zip(cols, r)) for r in cursor.fetchall()]

    def one(ctx: ToolContext, query: str, message: str, *params: Any) -> Row:
        found = [] if None in params else rows(ctx, query, *params)
        if not found:
            raise ToolError(message)
        return found[0]

    return rows, one


def scalars(ctx: ToolContext, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    return [r[0] for r in ctx.db.execute(sql, params)]


def write(ctx: ToolContext, sql: str, params: Sequence[Any] | Sequence[Sequence[Any]], many: bool = False) -> None:
    """Run a write, its row count added to the call's as `ctx.execute` would; `many` for a batch of parameters."""
    if many:
        ctx.rows_written += max(ctx.db.executemany(sql, params).rowcount, 0)
    else:
        ctx.run(sql, params)
