"""Tables of the tau2 airline world, following TOOLS_SPEC.md §1's suggested SQL mapping.

Maps of the source (flights, a flight's dates, users, a user's payment
methods, reservations) get a `position` column: db.json order is observable
(searches scan flights in db order; a certificate is added at the end of its
user's map) and keeps the JSON round trip exact. Lists (saved passengers, a
user's reservation ids, a reservation's segments, passengers and payments) are
rows keyed by (owner, position). A flight-date record is one row whatever its
status; which time fields it has follows from the status (`DATE_FIELDS`).
Payment method ids are unique per user only (every user's first certificate
sent is `certificate_3221322`), so that table is keyed by (user_id, id).

Balances are REAL (tau2 holds floats: 98.0); prices, payments and seat counts
INTEGER. Three reservation fields the tools can store unchecked (`cabin`,
`total_baggages`, `nonfree_baggages`, §4.11-§4.12) are exact cells: BLOB
affinity keeps a string a string and an int an int (see convert.to_cell).
"""
from __future__ import annotations

from functools import partial

from sqlalchemy import Column, Float, ForeignKey, Index, Integer, MetaData, String, Table

from evalsuite.domains.tau2 import rows
from evalsuite.domains.tau2.rows import CLUSTERED
from evalsuite.worlds.types import ExactNumber

metadata = MetaData()

CABINS = ("basic_economy", "economy", "business")  # the key order of every seat and price map in db.json
ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")
TIME_FIELDS = ("actual_departure_time_est", "actual_arrival_time_est", "estimated_departure_time_est",
               "estimated_arrival_time_est")
# The fields a flight-date record has besides `status`, by status (§1, tagged union).
DATE_FIELDS: dict[str, tuple[str, ...]] = {
    "available": ("available_seats", "prices"),
    "landed": ("actual_departure_time_est", "actual_arrival_time_est"),
    "cancelled": (),
    "delayed": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "on time": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "flying": ("actual_departure_time_est", "estimated_arrival_time_est"),
}

flights = Table(
    "flights", metadata,
    Column("flight_number", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("origin", String, nullable=False),
    Column("destination", String, nullable=False),
    Column("scheduled_departure_time_est", String, nullable=False),
    Column("scheduled_arrival_time_est", String, nullable=False),
    **CLUSTERED,
)
# The searches scan flights from an origin (to a destination) in db order.
Index("ix_flights_route_position", flights.c.origin, flights.c.destination, flights.c.position)

flight_dates = Table(
    "flight_dates", metadata,
    Column("flight_number", String, ForeignKey("flights.flight_number"), primary_key=True),
    Column("date", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("status", String, nullable=False),
    *[Column(f"seats_{c}", Integer) for c in CABINS],  # available only
    *[Column(f"price_{c}", Integer) for c in CABINS],  # available only
    *[Column(f, String) for f in TIME_FIELDS],
    **CLUSTERED,
)

users = Table(
    "users", metadata,
    Column("user_id", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    *[Column(f, String, nullable=f == "address2") for f in ADDRESS_FIELDS],
    Column("email", String, nullable=False),
    Column("dob", String, nullable=False),
    Column("membership", String, nullable=False),
    **CLUSTERED,
)

payment_methods = Table(
    "payment_methods", metadata,
    Column("user_id", String, ForeignKey("users.user_id"), primary_key=True),
    Column("id", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("source", String, nullable=False),
    Column("brand", String),  # credit_card only
    Column("last_four", String),  # credit_card only
    Column("amount", Float),  # gift_card and certificate only: the balance or value
    Index("ix_payment_methods_user_position", "user_id", "position"),
    **CLUSTERED,
)



def _people(name: str, owner: str) -> Table:
    """A list of passengers (a user's saved ones, a reservation's): keyed by (owner id, position)."""
    owner_table = owner.removesuffix("_id") + "s"
    return Table(name, metadata,
                 Column(owner, String, ForeignKey(f"{owner_table}.{owner}"), primary_key=True),
                 Column("position", Integer, primary_key=True),
                 *[Column(f, String, nullable=False) for f in ("first_name", "last_name", "dob")],
                 **CLUSTERED)


saved_passengers = _people("saved_passengers", "user_id")

user_reservations = Table(
    "user_reservations", metadata,
    Column("user_id", String, ForeignKey("users.user_id"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("reservation_id", String, nullable=False),
    **CLUSTERED,
)

reservations = Table(
    "reservations", metadata,
    Column("reservation_id", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("user_id", String, nullable=False),
    Column("origin", String, nullable=False),
    Column("destination", String, nullable=False),
    Column("flight_type", String, nullable=False),
    Column("cabin", ExactNumber),
    Column("created_at", String, nullable=False),
    Column("total_baggages", ExactNumber),
    Column("nonfree_baggages", ExactNumber),
    Column("insurance", String, nullable=False),
    Column("status", String),  # absent from db.json (null); "cancelled" once cancelled
    **CLUSTERED,
)

segments = Table(
    "segments", metadata,
    Column("reservation_id", String, ForeignKey("reservations.reservation_id"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("flight_number", String, nullable=False),
    Column("origin", String, nullable=False),
    Column("destination", String, nullable=False),
    Column("date", String, nullable=False),
    Column("price", Integer, nullable=False),
    **CLUSTERED,
)

passengers = _people("passengers", "reservation_id")

payments = Table(
    "payments", metadata,
    Column("reservation_id", String, ForeignKey("reservations.reservation_id"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("payment_id", String, nullable=False),
    Column("amount", Integer, nullable=False),
    **CLUSTERED,
)

COLUMNS = rows.table_columns(metadata)

select_sql = partial(rows.select_sql, COLUMNS)  # select_sql(table, where="", order="")
