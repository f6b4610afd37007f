"""tau2's DB hash (TOOLS_SPEC.md §3): sha256 of the whole DB as one sorted-key JSON dump.

The dump is of tau2's model form: every order carries its seven optional fields
(null when unset), payment methods only the fields of their kind. Our REAL
columns hold the same doubles tau2 holds, and Python's json prints them the
same way, so the hash is reproduced bit for bit from our rows.
"""
from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from evalsuite.domains.tau2_retail.convert import as_dicts, order_entity, product_entity, to_nested, user_entity
from evalsuite.domains.tau2_retail.schema import COLUMNS, ORDER_OPTIONAL, select_sql
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

INITIAL_HASH = "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"  # spec §3 / README


def hash_model_dump(db: Mapping[str, Any]) -> str:
    """The hash of a DB already in tau2's model form (optional fields present)."""
    body = json.dumps(db, sort_keys=True, default=str)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def hash_db_json(db: Mapping[str, Any]) -> str:
    """The hash tau2 gives a db.json-shaped dict once loaded: absent optional order fields read as null."""
    db = copy.deepcopy(dict(db))
    for order in db["orders"].values():
        for field in ORDER_OPTIONAL:
            order.setdefault(field, None)
    return hash_model_dump(db)


def hash_rows(rows: Mapping[str, Sequence[Sequence[Any]]]) -> str:
    """The hash of a state given as every table's raw rows."""
    return hash_model_dump(to_nested(rows, optional_nulls=True))


def world_hash(state: World | TrialWorld) -> str:
    """tau2's hash of a pristine world or of a trial's current state, the plain way: one full dump."""
    if isinstance(state, TrialWorld):
        return hash_rows(state.rows())
    return hash_rows(state.initial_rows)


class Tau2Hasher:
    """The same hash, re-dumping only the entities a trial changed (found through the world's change log).

    `json.dumps(db, sort_keys=True)` is the concatenation of each entity's own
    sorted dump in sorted key order, so the seed's entity dumps are cached and
    only changed products, users and orders are rebuilt and dumped again. The
    bytes hashed are exactly those of the full dump.
    """

    def __init__(self, world: World):
        self.world = world
        seed = to_nested(world.initial_rows, optional_nulls=True)
        self._items = {c: {k: _item(k, v) for k, v in seed[c].items()} for c in COLLECTIONS}
        self._joined = {c: _join(items) for c, items in self._items.items()}

    def hash(self, trial: TrialWorld) -> str:
        changed = self._changed_entities(trial)
        parts = []
        for c in COLLECTIONS:
            if not changed.get(c):
                parts.append(f'"{c}": {self._joined[c]}')
                continue
            items = dict(self._items[c])
            for key in changed[c]:
                entity = _entity(trial.db, c, key)
                if entity is None:
                    items.pop(key, None)
                else:
                    items[key] = _item(key, entity)
            parts.append(f'"{c}": {_join(items)}')
        return hashlib.sha256(("{" + ", ".join(parts) + "}").encode("utf-8")).hexdigest()

    def _changed_entities(self, trial: TrialWorld) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for table, keys in trial.changed_keys().items():
            collection, owner = COLLECTION_OF_TABLE[table]
            for key in keys:
                if owner is None:  # the row is the entity itself: its key is the entity id
                    out.setdefault(collection, set()).add(key[0])
                    continue
                for row in (self.world.seed_row(table, key), trial.row(table, key)):
                    if row is not None:
                        out.setdefault(collection, set()).add(row[COLUMNS[table].index(owner)])
        return out


COLLECTIONS = ("orders", "products", "users")  # sorted, as the dump orders them
# table -> (collection, column naming the owning entity; None when the table is the collection itself)
COLLECTION_OF_TABLE = {
    "products": ("products", None), "variants": ("products", "product_id"),
    "users": ("users", None), "payment_methods": ("users", "user_id"), "user_orders": ("users", "user_id"),
    "orders": ("orders", None), "order_items": ("orders", "order_id"), "fulfillments": ("orders", "order_id"),
    "payments": ("orders", "order_id"),
}
_ENTITY_SQL = {
    "products": [("products", "product_id = ?", ""), ("variants", "product_id = ?", "position")],
    "users": [("users", "user_id = ?", ""), ("payment_methods", "user_id = ?", "position"),
              ("user_orders", "user_id = ?", "position")],
    "orders": [("orders", "order_id = ?", ""), ("order_items", "order_id = ?", "position"),
               ("fulfillments", "order_id = ?", "position"), ("payments", "order_id = ?", "position")],
}


def _entity(db: Any, collection: str, key: str) -> dict[str, Any] | None:
    found = [as_dicts(t, db.execute(select_sql(t, where, order), (key,)).fetchall())
             for t, where, order in _ENTITY_SQL[collection]]
    if not found[0]:
        return None
    if collection == "products":
        return product_entity(found[0][0], found[1])
    if collection == "users":
        return user_entity(found[0][0], found[1], [r["order_id"] for r in found[2]])
    return order_entity(found[0][0], *found[1:], optional_nulls=True)


def _item(key: str, entity: Mapping[str, Any]) -> str:
    """One `"key": {...}` member of the sorted dump."""
    return f"{json.dumps(key)}: {json.dumps(entity, sort_keys=True, default=str)}"


def _join(items: Mapping[str, str]) -> str:
    return "{" + ", ".join(items[k] for k in sorted(items)) + "}"
