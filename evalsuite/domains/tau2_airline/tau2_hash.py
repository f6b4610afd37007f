"""The airline DB as tau2's hash sees it (the hash itself: evalsuite.domains.tau2.tau2_hash).

Every reservation carries its `status` (null until cancelled), payment methods
only the fields of their kind; flight-date records only the fields of their
status.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalsuite.domains.tau2.rows import Row
from evalsuite.domains.tau2.tau2_hash import Tau2Hash
from evalsuite.domains.tau2_airline.convert import (
    flight_entity,
    model_of_db_json,
    reservation_entity,
    to_nested,
    user_entity,
)
from evalsuite.domains.tau2_airline.schema import COLUMNS


def _entity(collection: str, root: Row, children: Mapping[str, list[Row]]) -> dict[str, Any]:
    if collection == "flights":
        return flight_entity(root, children["flight_dates"])
    if collection == "users":
        return user_entity(root, children["payment_methods"], children["saved_passengers"],
                           [r["reservation_id"] for r in children["user_reservations"]])
    return reservation_entity(root, children["segments"], children["passengers"], children["payments"])


TAU2_HASH = Tau2Hash(
    initial="124e39a664b56402bcd09cb8a6a9cece6acb8462337c969799d5658e3250f263",  # spec §3 / README
    owner={"flights": ("flights", None), "flight_dates": ("flights", "flight_number"),
           "users": ("users", None), "payment_methods": ("users", "user_id"),
           "saved_passengers": ("users", "user_id"), "user_reservations": ("users", "user_id"),
           "reservations": ("reservations", None), "segments": ("reservations", "reservation_id"),
           "passengers": ("reservations", "reservation_id"), "payments": ("reservations", "reservation_id")},
    columns=COLUMNS, entity=_entity, model_dump=lambda rows: to_nested(rows, model=True),
    model_of_db_json=model_of_db_json)
