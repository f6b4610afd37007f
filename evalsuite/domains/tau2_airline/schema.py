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
from evalsuite.domains.tau2.tables import ADDRESS_FIELDS, mapped, owned, required
from evalsuite.worlds.types import ExactNumber

metadata = MetaData()

CABINS = ("basic_economy", "economy", "business")  # the key order of every seat and price map in db.json
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

flights = mapped(metadata, "flights", "flight_number",
                 *required("origin", "destination", "scheduled_departure_time_est", "scheduled_arrival_time_est"))
# The searches scan flights from an origin (direct: to a destination) in db order.
Index("ix_flights_route_position", flights.c.origin, flights.c.destination, flights.c.position)
Index("ix_flights_origin_position", flights.c.origin, flights.c.position)

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

users = mapped(metadata, "users", "user_id", *required("first_name", "last_name"),
               *[Column(f, String, nullable=f == "address2") for f in ADDRESS_FIELDS],
               *required("email", "dob", "membership"))

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


# A list of passengers (a user's saved ones, a reservation's).
PERSON = ("first_name", "last_name", "dob")
saved_passengers = owned(metadata, "saved_passengers", "user_id", *required(*PERSON))
user_reservations = owned(metadata, "user_reservations", "user_id", *required("reservation_id"))

reservations = mapped(
    metadata, "reservations", "reservation_id",
    *required("user_id", "origin", "destination", "flight_type"),
    Column("cabin", ExactNumber),
    Column("created_at", String, nullable=False),
    Column("total_baggages", ExactNumber),
    Column("nonfree_baggages", ExactNumber),
    Column("insurance", String, nullable=False),
    Column("status", String),  # absent from db.json (null); "cancelled" once cancelled
)

segments = owned(metadata, "segments", "reservation_id", *required("flight_number", "origin", "destination", "date"),
                 Column("price", Integer, nullable=False))
passengers = owned(metadata, "passengers", "reservation_id", *required(*PERSON))
payments = owned(metadata, "payments", "reservation_id", *required("payment_id"),
                 Column("amount", Integer, nullable=False))

COLUMNS = rows.table_columns(metadata)

select_sql = partial(rows.select_sql, COLUMNS)  # select_sql(table, where="", order="")
