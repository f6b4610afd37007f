"""The retail DB as tau2's hash sees it (the hash itself: evalsuite.domains.tau2.tau2_hash).

Every order carries its seven optional fields (null when unset), payment
methods only the fields of their kind.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from evalsuite.domains.tau2.rows import Row
from evalsuite.domains.tau2.tau2_hash import Tau2Hash
from evalsuite.domains.tau2_retail.convert import order_entity, product_entity, to_nested, user_entity
from evalsuite.domains.tau2_retail.schema import COLUMNS, ORDER_OPTIONAL


def _entity(collection: str, root: Row, children: Mapping[str, list[Row]]) -> dict[str, Any]:
    if collection == "products":
        return product_entity(root, children["variants"])
    if collection == "users":
        return user_entity(root, children["payment_methods"], [r["order_id"] for r in children["user_orders"]])
    return order_entity(root, children["order_items"], children["fulfillments"], children["payments"],
                        optional_nulls=True)


def _model_of_db_json(db: Mapping[str, Any]) -> dict[str, Any]:
    """Absent optional order fields read as null, as tau2's model loads them."""
    db = copy.deepcopy(dict(db))
    for order in db["orders"].values():
        for field in ORDER_OPTIONAL:
            order.setdefault(field, None)
    return db


TAU2_HASH = Tau2Hash(
    initial="b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c",  # spec §3 / README
    owner={"products": ("products", None), "variants": ("products", "product_id"),
           "users": ("users", None), "payment_methods": ("users", "user_id"), "user_orders": ("users", "user_id"),
           "orders": ("orders", None), "order_items": ("orders", "order_id"), "fulfillments": ("orders", "order_id"),
           "payments": ("orders", "order_id")},
    columns=COLUMNS, entity=_entity, model_dump=lambda rows: to_nested(rows, optional_nulls=True),
    model_of_db_json=_model_of_db_json)
