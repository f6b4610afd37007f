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

from evalsuite.domains.tau2_retail.convert import to_nested
from evalsuite.domains.tau2_retail.schema import ORDER_OPTIONAL
from evalsuite.world.world import TrialWorld, World

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
    """tau2's hash of a pristine world or of a trial's current state."""
    if isinstance(state, TrialWorld):
        return hash_rows(state.rows())
    return hash_rows(state.initial_rows)
