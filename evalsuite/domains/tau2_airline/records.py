"""The records tau2's airline tools validate arguments against (TOOLS_SPEC.md §4.0), so validation fails with the
same text: the same class names, field order, types and literal order give pydantic's own message, word for word.

Only these are validated: the list arguments `flights`, `passengers` and `payment_methods` (converted only when
every element is a JSON object), the new Reservation of a booking and the Certificate `send_certificate` adds.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from evalsuite.worlds.domain import ToolError

Cabin = Literal["business", "economy", "basic_economy"]


class FlightInfo(BaseModel):
    flight_number: str
    date: str


class Passenger(BaseModel):
    first_name: str
    last_name: str
    dob: str


class Payment(BaseModel):
    payment_id: str
    amount: int


class ReservationFlight(BaseModel):
    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class Reservation(BaseModel):
    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: Literal["round_trip", "one_way"]
    cabin: Cabin
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Literal["yes", "no"]
    status: Literal["cancelled"] | None = None


class Certificate(BaseModel):
    source: Literal["certificate"]
    id: str
    amount: float


Record = TypeVar("Record", bound=BaseModel)


def validated(build: Callable[..., Record], **fields: Any) -> Record:
    """`build(**fields)`, a validation failure reported with the library's own multi-line text (as tau2 shows it)."""
    try:
        return build(**fields)
    except ValidationError as exc:
        raise ToolError(str(exc)) from exc


def converted(items: Any, record: type[Record]) -> Any:
    """A list argument as records when every element is a JSON object, else as given (later use then fails the
    way Python fails on it, e.g. "'str' object has no attribute 'flight_number'")."""
    if all(isinstance(item, dict) for item in items):
        return [validated(record, **item) for item in items]
    return items
