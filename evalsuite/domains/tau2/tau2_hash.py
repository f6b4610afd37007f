"""tau2's DB hash (§3 of each TOOLS_SPEC.md): sha256 of the whole DB as one sorted-key JSON dump.

The dump is of tau2's model form: every optional field present (null when
unset), each record with exactly the fields of its kind. Our columns hold the
values tau2 holds (REAL for its floats, exact cells where a type can vary), and
Python's json prints them the same way, so the hash is reproduced bit for bit
from our rows. A domain describes its DB to the hash with a `Tau2Hash`.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalsuite.domains.tau2.rows import Row, as_dicts
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

Rows = Mapping[str, Sequence[Sequence[Any]]]


def hash_model_dump(db: Mapping[str, Any]) -> str:
    """The hash of a DB already in tau2's model form (optional fields present)."""
    body = json.dumps(db, sort_keys=True, default=str)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Tau2Hash:
    """One domain's DB as the hash sees it.

    `owner` names, for every table, the top-level collection its rows belong to
    and the column holding the owning entity's id (None when the table is the
    collection's own: its key is the entity id). `entity(collection, root,
    children)` builds one entity in model form from its root row and its child
    tables' rows (position order); `model_dump(rows)` the whole DB from every
    table's rows; `model_of_db_json(db)` a db.json-shaped dict in model form.
    """

    initial: str
    owner: Mapping[str, tuple[str, str | None]]
    columns: Mapping[str, Sequence[str]]
    entity: Callable[[str, Row, Mapping[str, list[Row]]], dict[str, Any]]
    model_dump: Callable[[Rows], dict[str, Any]]
    model_of_db_json: Callable[[Mapping[str, Any]], dict[str, Any]]

    @property
    def collections(self) -> tuple[str, ...]:
        """Top-level keys, sorted as the dump orders them."""
        return tuple(sorted({c for c, _ in self.owner.values()}))

    def hash_rows(self, rows: Rows) -> str:
        """The hash of a state given as every table's raw rows."""
        return hash_model_dump(self.model_dump(rows))

    def hash_db_json(self, db: Mapping[str, Any]) -> str:
        """The hash tau2 gives a db.json-shaped dict once loaded (absent optional fields read as null)."""
        return hash_model_dump(self.model_of_db_json(db))

    def world_hash(self, state: World | TrialWorld) -> str:
        """The hash of a pristine world or of a trial's current state, the plain way: one full dump."""
        return self.hash_rows(state.rows() if isinstance(state, TrialWorld) else state.initial_rows)

    def hasher(self, world: World) -> Tau2Hasher:
        return Tau2Hasher(self, world)

    def read_entity(self, db: Any, collection: str, key: str) -> dict[str, Any] | None:
        """One entity read from a SQLite connection in model form, or None when it does not exist."""
        tables = [t for t, (c, _) in self.owner.items() if c == collection]
        root = next(t for t in tables if self.owner[t][1] is None)
        rows = as_dicts(self.columns[root], db.execute(self._select(root), (key,)).fetchall())
        if not rows:
            return None
        children = {t: as_dicts(self.columns[t], db.execute(self._select(t), (key,)).fetchall())
                    for t in tables if t != root}
        return self.entity(collection, rows[0], children)

    def _select(self, table: str) -> str:
        owner = self.owner[table][1]
        where = f"{owner or self.columns[table][0]} = ?"  # a root table's first column is its id
        order = "" if owner is None else " ORDER BY position"
        return f"SELECT {', '.join(self.columns[table])} FROM {table} WHERE {where}{order}"


class Tau2Hasher:
    """The same hash, re-dumping only the entities a trial changed (found through the world's change log).

    `json.dumps(db, sort_keys=True)` is the concatenation of each entity's own
    sorted dump in sorted key order, so the seed's entity dumps are cached and
    only changed entities are rebuilt and dumped again. The bytes hashed are
    exactly those of the full dump.
    """

    def __init__(self, spec: Tau2Hash, world: World):
        self.spec = spec
        self.world = world
        seed = spec.model_dump(world.initial_rows)
        self._items = {c: {k: _item(k, v) for k, v in seed[c].items()} for c in spec.collections}
        self._joined = {c: _join(items) for c, items in self._items.items()}

    def hash(self, trial: TrialWorld) -> str:
        changed = self._changed_entities(trial)
        parts = []
        for c in self.spec.collections:
            if not changed.get(c):
                parts.append(f'"{c}": {self._joined[c]}')
                continue
            items = dict(self._items[c])
            for key in changed[c]:
                entity = self.spec.read_entity(trial.db, c, key)
                if entity is None:
                    items.pop(key, None)
                else:
                    items[key] = _item(key, entity)
            parts.append(f'"{c}": {_join(items)}')
        return hashlib.sha256(("{" + ", ".join(parts) + "}").encode("utf-8")).hexdigest()

    def _changed_entities(self, trial: TrialWorld) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for table, keys in trial.changed_keys().items():
            collection, owner = self.spec.owner[table]
            for key in keys:
                if owner is None:  # the row is the entity itself: its key is the entity id
                    out.setdefault(collection, set()).add(key[0])
                    continue
                at = self.spec.columns[table].index(owner)
                for row in (self.world.seed_row(table, key), trial.row(table, key)):
                    if row is not None:
                        out.setdefault(collection, set()).add(row[at])
        return out


def _item(key: str, entity: Mapping[str, Any]) -> str:
    """One `"key": {...}` member of the sorted dump."""
    return f"{json.dumps(key)}: {json.dumps(entity, sort_keys=True, default=str)}"


def _join(items: Mapping[str, str]) -> str:
    return "{" + ", ".join(items[k] for k in sorted(items)) + "}"
