"""Data access for the airline tools: tau2's shared lookups (TOOLS_SPEC.md §2) and entity reads, in plain SQL.

Statements go to the trial's own DBAPI connection, inside the transaction the
world opened for the call (see evalsuite.domains.tau2.rows).
"""
from __future__ import annotations

from typing import Any

from evalsuite.domains.tau2.rows import Row, key, named_queries, scalars
from evalsuite.domains.tau2_airline import convert
from evalsuite.domains.tau2_airline.schema import select_sql
from evalsuite.worlds.domain import ToolContext

_SQL = {
    "user": select_sql("users", "user_id = ?"),
    "reservation": select_sql("reservations", "reservation_id = ?"),
    "flight": select_sql("flights", "flight_number = ?"),
    "flight_date": select_sql("flight_dates", "flight_number = ? AND date = ?"),
    "methods": select_sql("payment_methods", "user_id = ?", "position"),
    "saved": select_sql("saved_passengers", "user_id = ?", "position"),
    "segments": select_sql("segments", "reservation_id = ?", "position"),
    "passengers": select_sql("passengers", "reservation_id = ?", "position"),
    "payments": select_sql("payments", "reservation_id = ?", "position"),
    "user_reservations": "SELECT reservation_id FROM user_reservations WHERE user_id = ? ORDER BY position",
}


rows, _one = named_queries(_SQL)


# ---- shared lookups: each raises tau2's exact message (the id as given, in Python's text form) -----------

def get_user(ctx: ToolContext, user_id: Any) -> Row:
    return _one(ctx, "user", f"User {user_id} not found", key(user_id))


def get_reservation(ctx: ToolContext, reservation_id: Any) -> Row:
    return _one(ctx, "reservation", f"Reservation {reservation_id} not found", key(reservation_id))


def get_flight(ctx: ToolContext, flight_number: Any) -> Row:
    return _one(ctx, "flight", f"Flight {flight_number} not found", key(flight_number))


def get_flight_date(ctx: ToolContext, flight_number: Any, date: Any) -> Row:
    flight = get_flight(ctx, flight_number)
    return _one(ctx, "flight_date", f"Flight {flight_number} not found on date {date}", flight["flight_number"],
                key(date))


def methods(ctx: ToolContext, user_id: str) -> dict[str, Row]:
    """The user's payment methods by id, in map order."""
    return {m["id"]: m for m in rows(ctx, "methods", user_id)}


# ---- entities as tau2 returns them ---------------------------------------------------------------

def user_entity(ctx: ToolContext, user: Row) -> dict[str, Any]:
    uid = user["user_id"]
    return convert.user_entity(user, rows(ctx, "methods", uid), rows(ctx, "saved", uid),
                               scalars(ctx, _SQL["user_reservations"], (uid,)))


def reservation_entity(ctx: ToolContext, reservation_id: str) -> dict[str, Any]:
    """The Reservation as it is now (read after any write of the call)."""
    return convert.reservation_entity(rows(ctx, "reservation", reservation_id)[0],
                                      rows(ctx, "segments", reservation_id), rows(ctx, "passengers", reservation_id),
                                      rows(ctx, "payments", reservation_id))
