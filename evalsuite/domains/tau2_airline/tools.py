"""The airline tools, behaving as TOOLS_SPEC.md §2 and §4 describe (checks, effects, errors, quirks).

Tools take raw keyword arguments (see evalsuite.domains.tau2.tools); only the
records of records.py are validated. Every write tool finishes its checks
before its first write, as the original does, except where the original
itself fails half-way (a certificate listed twice in one booking): that call
keeps its earlier writes (PartialWriteError). Times come from the world's
clock (the domain's: the policy's "now", 2024-05-15 15:00 EST), never from the
machine's.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from evalsuite.domains.tau2.rows import Row, key, scalars, write
from evalsuite.domains.tau2.tools import add_generic_tools, agent_role, python_error, registrar
from evalsuite.domains.tau2_airline import convert, store
from evalsuite.domains.tau2_airline.records import (
    Certificate,
    FlightInfo,
    Passenger,
    Payment,
    Reservation,
    converted,
    validated,
)
from evalsuite.domains.tau2_airline.schema import CABINS, COLUMNS, metadata
from evalsuite.worlds.domain import Domain, PartialWriteError, ToolContext, ToolError

CLOCK = datetime(2024, 5, 15, 15, 0, 0)  # policy.md: "The current time is 2024-05-15 15:00:00 EST."
DOMAIN = Domain(name="tau2_airline", version="1.0.0", metadata=metadata, clock=CLOCK)
_tool = registrar(DOMAIN, "AirlineTools")

# §4.3: a fixed list, not derived from the DB.
AIRPORTS = [("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
            ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
            ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"),
            ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"),
            ("PHL", "Philadelphia"), ("LGA", "LaGuardia")]
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
INSURANCE_FEE, BAG_FEE = 30, 50
_FLIGHT = ", ".join(f"f.{c}" for c in COLUMNS["flights"])
_DATE = ", ".join(f"d.{c}" for c in COLUMNS["flight_dates"])
_AVAILABLE_FROM = (f"SELECT {_FLIGHT}, {_DATE} FROM flights f JOIN flight_dates d "
                   "ON d.flight_number = f.flight_number AND d.date = ? AND d.status = 'available' WHERE f.origin = ?")


# ---- read tools ----------------------------------------------------------------------------------

@_tool("read")
def get_user_details(ctx: ToolContext, /, user_id):
    """A user's profile: name, address, email, date of birth, payment methods, saved passengers, membership and
    reservation ids. Arguments: user_id (str, e.g. 'sara_doe_496')."""
    return store.user_entity(ctx, store.get_user(ctx, user_id))


@_tool("read")
def get_reservation_details(ctx: ToolContext, /, reservation_id):
    """A reservation: trip, cabin, flights, passengers, payment history, baggage, insurance, status.
    Arguments: reservation_id (str, e.g. '8JX2WO')."""
    return store.reservation_entity(ctx, store.get_reservation(ctx, reservation_id)["reservation_id"])


@_tool("read")
def list_all_airports(ctx: ToolContext, /):
    """Every airport served, as a list of {iata, city}. No arguments."""
    return [{"iata": code, "city": city} for code, city in AIRPORTS]


@_tool("read")
def get_flight_status(ctx: ToolContext, /, flight_number, date):
    """The status of a flight on a date (available, on time, delayed, flying, landed, cancelled).
    Arguments: flight_number (str, e.g. 'HAT001'), date (str, 'YYYY-MM-DD')."""
    return store.get_flight_date(ctx, flight_number, date)["status"]


@_tool("read")
def search_direct_flight(ctx: ToolContext, /, origin, destination, date):
    """Direct flights between two airports bookable on a date, with seats and prices per cabin.
    Arguments: origin, destination (str, IATA code such as 'JFK'), date (str, 'YYYY-MM-DD')."""
    return [convert.direct_flight(f, d, None) for f, d in _available(ctx, origin, date, destination)]


@_tool("read")
def search_onestop_flight(ctx: ToolContext, /, origin, destination, date):
    """One-stop connections between two airports departing on a date: pairs of flights, the second leaving
    the connecting airport no earlier than the first arrives. Arguments: origin, destination (str, IATA code),
    date (str, 'YYYY-MM-DD')."""
    out = []
    for first, first_day in _available(ctx, origin, date):
        arrival = first["scheduled_arrival_time_est"]
        # §4.6: a next-day arrival connects on the next day of the clock's month, the day not zero-padded.
        connect = f"{ctx.now:%Y-%m-}{int(date[-2:]) + 1}" if "+1" in arrival else date
        for second, second_day in _available(ctx, first["destination"], connect, destination):
            if second["scheduled_departure_time_est"] >= arrival:  # compared as text, "+1" and all
                out.append([convert.direct_flight(first, first_day, date),
                            convert.direct_flight(second, second_day, connect)])
    return out


def _available(ctx: ToolContext, origin: Any, date: Any, destination: Any = None) -> list[tuple[Row, Row]]:
    """(flight, flight-date) of every flight from `origin` (to `destination` when given) available on `date`,
    in db order. tau2 compares with == and looks the date up in a map: a non-text value matches nothing."""
    day = key(date)
    if not all(isinstance(v, str) for v in (origin, day, destination if destination is not None else "")):
        return []
    sql, params = _AVAILABLE_FROM, [day, origin]
    if destination is not None:
        sql, params = sql + " AND f.destination = ?", [*params, destination]
    width = len(COLUMNS["flights"])
    found = ctx.db.execute(sql + " ORDER BY f.position", params).fetchall()
    return [(dict(zip(COLUMNS["flights"], r[:width])), dict(zip(COLUMNS["flight_dates"], r[width:])))
            for r in found]


add_generic_tools(_tool)


# ---- write tools ---------------------------------------------------------------------------------

@_tool("write")
def book_reservation(ctx: ToolContext, /, user_id, origin, destination, flight_type, cabin, flights, passengers,
                     payment_methods, total_baggages, nonfree_baggages, insurance):
    """Book a reservation for a user and charge its payment methods. Arguments: user_id, origin, destination
    (str), flight_type ('one_way' or 'round_trip'), cabin ('basic_economy', 'economy' or 'business'), flights
    (list of {flight_number, date}), passengers (list of {first_name, last_name, dob}), payment_methods (list of
    {payment_id, amount}, amounts adding up to the total price), total_baggages, nonfree_baggages (int),
    insurance ('yes' or 'no')."""
    flights = converted(flights, FlightInfo)
    passengers = converted(passengers, Passenger)
    payment_methods = converted(payment_methods, Payment)
    user = store.get_user(ctx, user_id)
    taken = set(scalars(ctx, "SELECT reservation_id FROM reservations WHERE reservation_id IN (?, ?, ?)",
                        NEW_RESERVATION_IDS))
    new_id = next((i for i in NEW_RESERVATION_IDS if i not in taken), None)
    if new_id is None:
        raise ToolError("Too many reservations")
    booking = validated(Reservation, reservation_id=new_id, user_id=user_id, origin=origin, destination=destination,
                        flight_type=flight_type, cabin=cabin, flights=[], passengers=passengers,
                        payment_history=payment_methods, created_at=f"{ctx.now:%Y-%m-%dT%H:%M:%S}",
                        total_baggages=total_baggages, nonfree_baggages=nonfree_baggages, insurance=insurance)
    count = len(booking.passengers)
    segments, total = [], 0
    for info in flights:
        flight, day = _bookable(ctx, _field(info, "flight_number"), _field(info, "date"), booking.cabin, count)
        price = day[f"price_{booking.cabin}"]
        segments.append({"flight_number": flight["flight_number"], "origin": flight["origin"],
                         "destination": flight["destination"], "date": day["date"], "price": price})
        total += price * count
    if insurance == "yes":
        total += INSURANCE_FEE * count
    total += BAG_FEE * nonfree_baggages
    owned = store.methods(ctx, user["user_id"])
    for entry in booking.payment_history:
        method = owned.get(entry.payment_id)
        if method is None:
            raise ToolError(f"Payment method {entry.payment_id} not found")
        if method["source"] in ("gift_card", "certificate") and method["amount"] < entry.amount:
            raise ToolError(f"Not enough balance in payment method {entry.payment_id}")
    paid = sum(entry.amount for entry in booking.payment_history)
    if paid != total:
        raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
    _charge(ctx, user["user_id"], owned, booking.payment_history)
    for s in segments:
        write(ctx, f"UPDATE flight_dates SET seats_{booking.cabin} = seats_{booking.cabin} - ? "
                   "WHERE flight_number = ? AND date = ?", (count, s["flight_number"], s["date"]))
    _insert_reservation(ctx, booking, segments)
    return store.reservation_entity(ctx, new_id)


def _charge(ctx: ToolContext, user_id: str, owned: dict[str, Row], entries: list[Payment]) -> None:
    """§4.9 step 9, entry by entry: a gift card is debited, a certificate removed whatever its remainder. A
    certificate listed twice fails on its second removal with the earlier entries already applied."""
    balances = {m_id: m["amount"] for m_id, m in owned.items()}
    removed: set[str] = set()
    for entry in entries:
        source = owned[entry.payment_id]["source"]
        if source == "gift_card":
            balances[entry.payment_id] -= entry.amount
            write(ctx, "UPDATE payment_methods SET amount = ? WHERE user_id = ? AND id = ?",
                  (balances[entry.payment_id], user_id, entry.payment_id))
        elif source == "certificate":
            if entry.payment_id in removed:
                raise PartialWriteError(repr(entry.payment_id))  # Python's KeyError text
            removed.add(entry.payment_id)
            write(ctx, "DELETE FROM payment_methods WHERE user_id = ? AND id = ?", (user_id, entry.payment_id))


def _insert_reservation(ctx: ToolContext, booking: Reservation, segments: list[dict[str, Any]]) -> None:
    rid, uid = booking.reservation_id, booking.user_id
    position = scalars(ctx, "SELECT coalesce(max(position) + 1, 0) FROM reservations")[0]
    write(ctx, "INSERT INTO reservations (reservation_id, position, user_id, origin, destination, flight_type, "
               "cabin, created_at, total_baggages, nonfree_baggages, insurance, status) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
          (rid, position, uid, booking.origin, booking.destination, booking.flight_type, booking.cabin,
           booking.created_at, booking.total_baggages, booking.nonfree_baggages, booking.insurance))
    _set_segments(ctx, rid, segments)
    _set_people(ctx, "passengers", "reservation_id", rid, booking.passengers)
    write(ctx, "INSERT INTO payments (reservation_id, position, payment_id, amount) VALUES (?, ?, ?, ?)",
          [(rid, i, p.payment_id, p.amount) for i, p in enumerate(booking.payment_history)], many=True)
    at = scalars(ctx, "SELECT coalesce(max(position) + 1, 0) FROM user_reservations WHERE user_id = ?", (uid,))[0]
    write(ctx, "INSERT INTO user_reservations (user_id, position, reservation_id) VALUES (?, ?, ?)", (uid, at, rid))


@_tool("write")
def cancel_reservation(ctx: ToolContext, /, reservation_id):
    """Cancel a reservation: every payment so far is refunded to its method. Arguments: reservation_id (str)."""
    rid = store.get_reservation(ctx, reservation_id)["reservation_id"]
    history = store.rows(ctx, "payments", rid)
    write(ctx, "INSERT INTO payments (reservation_id, position, payment_id, amount) VALUES (?, ?, ?, ?)",
          [(rid, len(history) + i, p["payment_id"], -p["amount"]) for i, p in enumerate(history)], many=True)
    write(ctx, "UPDATE reservations SET status = 'cancelled' WHERE reservation_id = ?", (rid,))
    return store.reservation_entity(ctx, rid)


@_tool("write")
def update_reservation_baggages(ctx: ToolContext, /, reservation_id, total_baggages, nonfree_baggages, payment_id):
    """Set a reservation's checked bags; each added non-free bag costs 50, paid with the given method.
    Arguments: reservation_id (str), total_baggages, nonfree_baggages (int), payment_id (str)."""
    reservation = store.get_reservation(ctx, reservation_id)
    rid = reservation["reservation_id"]
    store.get_user(ctx, reservation["user_id"])
    try:
        price = BAG_FEE * max(0, nonfree_baggages - convert.from_cell(reservation["nonfree_baggages"]))
    except TypeError as exc:
        raise python_error(exc) from exc
    _pay_update(ctx, reservation, payment_id, price)
    write(ctx, "UPDATE reservations SET total_baggages = ?, nonfree_baggages = ? WHERE reservation_id = ?",
          (convert.to_cell(total_baggages), convert.to_cell(nonfree_baggages), rid))
    return store.reservation_entity(ctx, rid)


@_tool("write")
def update_reservation_flights(ctx: ToolContext, /, reservation_id, cabin, flights, payment_id):
    """Replace a reservation's flights (the complete new list) and cabin; the price difference is paid with, or
    refunded to, the given method. Arguments: reservation_id (str), cabin (str), flights (list of
    {flight_number, date}), payment_id (str)."""
    flights = converted(flights, FlightInfo)
    reservation = store.get_reservation(ctx, reservation_id)
    rid = reservation["reservation_id"]
    store.get_user(ctx, reservation["user_id"])
    old = store.rows(ctx, "segments", rid)
    count = len(store.rows(ctx, "passengers", rid))
    same_cabin = cabin == convert.from_cell(reservation["cabin"])
    segments, total = [], 0
    for info in flights:
        number, date = _field(info, "flight_number"), _field(info, "date")
        kept = next((s for s in old if s["flight_number"] == number and s["date"] == date), None) \
            if same_cabin else None
        if kept is None:
            flight, day = _bookable(ctx, number, date, cabin, count)
            kept = {"flight_number": flight["flight_number"], "origin": flight["origin"],
                    "destination": flight["destination"], "date": day["date"], "price": day[f"price_{cabin}"]}
        segments.append({k: kept[k] for k in ("flight_number", "origin", "destination", "date", "price")})
        total += kept["price"] * count
    total -= sum(s["price"] for s in old) * count
    _pay_update(ctx, reservation, payment_id, total)
    write(ctx, "DELETE FROM segments WHERE reservation_id = ?", (rid,))
    _set_segments(ctx, rid, segments)
    write(ctx, "UPDATE reservations SET cabin = ? WHERE reservation_id = ?", (convert.to_cell(cabin), rid))
    return store.reservation_entity(ctx, rid)


@_tool("write")
def update_reservation_passengers(ctx: ToolContext, /, reservation_id, passengers):
    """Replace a reservation's passengers (same number of passengers). Arguments: reservation_id (str),
    passengers (list of {first_name, last_name, dob})."""
    passengers = converted(passengers, Passenger)
    rid = store.get_reservation(ctx, reservation_id)["reservation_id"]
    if len(passengers) != len(store.rows(ctx, "passengers", rid)):
        raise ToolError("Number of passengers does not match")
    # Deviation: a list that is not all objects tau2 stores as it is; our rows hold passengers, so such an element
    # is refused with the validation text.
    passengers = [p if isinstance(p, Passenger) else validated(Passenger.model_validate, obj=p) for p in passengers]
    write(ctx, "DELETE FROM passengers WHERE reservation_id = ?", (rid,))
    _set_people(ctx, "passengers", "reservation_id", rid, passengers)
    return store.reservation_entity(ctx, rid)


@_tool("write")
def send_certificate(ctx: ToolContext, /, user_id, amount):
    """Add a travel certificate of the given value to a user's payment methods (as compensation).
    Arguments: user_id (str), amount (number)."""
    uid = store.get_user(ctx, user_id)["user_id"]
    owned = store.methods(ctx, uid)
    cid = next((c for c in CERTIFICATE_IDS if c not in owned), None)
    if cid is None:
        raise ToolError("Too many certificates")
    certificate = validated(Certificate, source="certificate", id=cid, amount=amount)
    position = max((m["position"] for m in owned.values()), default=-1) + 1
    write(ctx, "INSERT INTO payment_methods (user_id, id, position, source, brand, last_four, amount) "
               "VALUES (?, ?, ?, 'certificate', NULL, NULL, ?)", (uid, cid, position, certificate.amount))
    return f"Certificate {cid} added to user {user_id} with amount {amount}."


# ---- helpers of the write tools ------------------------------------------------------------------

def _field(info: Any, name: str) -> Any:
    """`info.<name>` of a converted record; an unconverted element fails as Python's attribute access does."""
    try:
        return getattr(info, name)
    except AttributeError as exc:
        raise python_error(exc) from exc


def _bookable(ctx: ToolContext, number: str, date: str, cabin: Any, count: int) -> tuple[Row, Row]:
    """The flight and its date record, checked bookable in `cabin` for `count` passengers (current counts)."""
    flight = store.get_flight(ctx, number)
    day = store.get_flight_date(ctx, number, date)
    if day["status"] != "available":
        raise ToolError(f"Flight {number} not available on date {date}")
    if key(cabin) not in CABINS:  # tau2 indexes the seat map: Python's KeyError text
        raise ToolError(repr(cabin))
    if day[f"seats_{cabin}"] < count:
        raise ToolError(f"Not enough seats on flight {number}")
    return flight, day


def _pay_update(ctx: ToolContext, reservation: Row, payment_id: Any, price: Any) -> None:
    """The payment step of the update tools (§4.11 step 3), run whatever the price, zero and refunds included: a
    negative price credits a gift card and is recorded as a negative payment."""
    method = store.methods(ctx, reservation["user_id"]).get(key(payment_id))
    if method is None:
        raise ToolError("Payment method not found")
    if method["source"] == "certificate":
        raise ToolError("Certificate cannot be used to update reservation")
    debit = method["source"] == "gift_card"
    if debit and method["amount"] < price:
        raise ToolError("Gift card balance is not enough")
    if debit:
        write(ctx, "UPDATE payment_methods SET amount = ? WHERE user_id = ? AND id = ?",
              (method["amount"] - price, reservation["user_id"], method["id"]))
    if price == 0:
        return
    try:  # the history holds Payment records: a fractional price (from a fractional bag count) fails here
        entry = validated(Payment, payment_id=method["id"], amount=price)
    except ToolError as exc:
        raise (PartialWriteError(str(exc)) if debit else exc) from exc
    rid = reservation["reservation_id"]
    at = scalars(ctx, "SELECT count(*) FROM payments WHERE reservation_id = ?", (rid,))[0]
    write(ctx, "INSERT INTO payments (reservation_id, position, payment_id, amount) VALUES (?, ?, ?, ?)",
          (rid, at, entry.payment_id, entry.amount))


def _set_segments(ctx: ToolContext, rid: str, segments: list[dict[str, Any]]) -> None:
    write(ctx, "INSERT INTO segments (reservation_id, position, flight_number, origin, destination, date, price) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)",
          [(rid, i, s["flight_number"], s["origin"], s["destination"], s["date"], s["price"])
           for i, s in enumerate(segments)], many=True)


def _set_people(ctx: ToolContext, table: str, owner: str, owner_id: str, people: list[Passenger]) -> None:
    write(ctx, f"INSERT INTO {table} ({owner}, position, first_name, last_name, dob) VALUES (?, ?, ?, ?, ?)",
          [(owner_id, i, p.first_name, p.last_name, p.dob) for i, p in enumerate(people)], many=True)


# ---- the agent's role --------------------------------------------------------------------------

ROLE = agent_role(DOMAIN, "airline_agent")
