"""The travel environment as the peer holds it (its catalogue, user, reservation, calendar and inbox models, dumped
field for field in the peer's order), loaded with its injections as the peer loads them
(evalsuite.domains.agentdojo_common), and converted to and from the world's rows.

Two values of the peer's end state are not the environment's to decide: a sent
e-mail's timestamp (the peer's clock; ours is the world clock) and the order of
a new event's participants (the peer builds it from a set, so it changes with
the process's string hashing; ours is sorted). `comparable` masks the one and
sorts the other, which is all the peer's own comparison of two states reads.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import model_validator

from evalsuite.domains.agentdojo_common import CalendarEvent, Contact, Email, PeerInbox, load_peer_environment
from evalsuite.domains.agentdojo_common import PeerModel as _Peer
from evalsuite.domains.agentdojo_travel.schema import JSON_COLUMNS, USER_FIELDS, metadata


class User(_Peer):
    first_name: str
    last_name: str
    ID_number: str
    email: str
    phone_number: str
    address: str
    passport_number: str
    bank_account_number: str
    credit_card_number: str


class Hotel(_Peer):
    name: str
    city: str
    rating: float
    price_min: float
    price_max: float
    address: str
    reviews: list[str]


class Restaurant(_Peer):
    name: str
    city: str
    address: str
    rating: float
    price_per_person: float
    operating_hours: str
    reviews: list[str]
    contact_information: str
    cuisine_type: str
    dietary_restrictions: str


class CarRentalCompany(_Peer):
    name: str
    city: str
    address: str
    rating: float
    price_per_day: float
    reviews: list[str]
    contact_information: str
    car_types_available: list[str]
    fuel_options: list[str]


class Flight(_Peer):
    airline: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_time: dt.datetime
    arrival_time: dt.datetime
    price: float
    contact_information: str


class Hotels(_Peer):
    hotel_list: list[Hotel]


class Restaurants(_Peer):
    restaurant_list: list[Restaurant]


class CarRental(_Peer):
    company_list: list[CarRentalCompany]


class Flights(_Peer):
    flight_list: list[Flight]


class Reservation(_Peer):
    reservation_type: str | None
    title: str
    start_time: dt.datetime
    end_time: dt.datetime
    contact_information: str


class Calendar(_Peer):
    current_day: dt.date
    account_email: str
    initial_events: list[CalendarEvent]
    events: dict[str, CalendarEvent] = {}

    @model_validator(mode="after")
    def _index(self) -> Calendar:
        """The peer's events dict is its initial list by id, the same objects (a change to one shows in both)."""
        ids = [e.id_ for e in self.initial_events]
        if len(ids) != len(set(ids)):
            raise ValueError(f"calendar.initial_events: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
        if not self.events:
            self.events = {e.id_: e for e in self.initial_events}
        return self


class Inbox(PeerInbox):
    """The peer's inbox as travel loads it: ids checked unique; e-mails and contacts taken from the initial ones."""

    @model_validator(mode="after")
    def _index(self) -> Inbox:
        ids = [e.id_ for e in self.initial_emails]
        if len(ids) != len(set(ids)):
            raise ValueError(f"inbox.initial_emails: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
        if not self.emails:
            self.emails = {e.id_: e for e in self.initial_emails}
        if not self.contact_list:
            self.contact_list = _contacts(self.initial_emails)
        return self


def _contacts(initial: list[Email]) -> list[Contact]:
    """Everyone the initial e-mails name, first seen first, named after the address's local part (dots as
    spaces, title case), as the peer builds its contact list."""
    seen: list[str] = []
    for email in initial:
        seen += [a for a in (*email.recipients, email.sender, *email.cc, *email.bcc) if a not in seen]
    return [Contact(email=a, name=a.split("@")[0].replace(".", " ").title()) for a in seen]


class TravelEnvironment(_Peer):
    hotels: Hotels
    restaurants: Restaurants
    car_rental: CarRental
    flights: Flights
    user: User
    calendar: Calendar
    reservation: Reservation
    inbox: Inbox


def load_environment(env_yaml: Path, vectors_yaml: Path,
                     injections: Mapping[str, str] | None = None) -> TravelEnvironment:
    return load_peer_environment(TravelEnvironment, env_yaml, vectors_yaml, injections)


def iso(value: dt.datetime | dt.date) -> str:
    """A time as the peer's JSON dump writes it."""
    return value.isoformat()


_KINDS = (("hotel", "hotels", "hotel_list"), ("restaurant", "restaurants", "restaurant_list"),
          ("car", "car_rental", "company_list"))
_TABLE_OF_KIND = {"hotel": "hotels", "restaurant": "restaurants", "car": "car_companies"}


def _catalogue_rows(env: TravelEnvironment) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {"reviews": []}
    for kind, attr, listed in _KINDS:
        items = getattr(getattr(env, attr), listed)
        rows[_TABLE_OF_KIND[kind]] = [{"pos": i, **_cells(item.model_dump(exclude={"reviews"}))}
                                      for i, item in enumerate(items)]
        rows["reviews"] += [{"kind": kind, "item": i, "pos": j, "text": r}
                            for i, item in enumerate(items) for j, r in enumerate(item.reviews)]
    rows["flights"] = [{"pos": i, **_cells(f.model_dump())} for i, f in enumerate(env.flights.flight_list)]
    return rows


def _cells(fields: dict[str, Any]) -> dict[str, Any]:
    """A model's fields as a row's cells: times in ISO, lists as JSON."""
    out = {}
    for k, v in fields.items():
        if isinstance(v, (dt.datetime, dt.date)):
            v = iso(v)
        elif k in JSON_COLUMNS:
            v = json.dumps(v)
        out[k] = v
    return out


def _attachment_cells(email: Email, events: Mapping[str, CalendarEvent]) -> str:
    """An e-mail's attachments as stored: an event that is the calendar's own object is stored by its id."""
    out: list[Any] = []
    for a in email.attachments:
        if isinstance(a, str):
            out.append(a)
        elif events.get(a.id_) is a:
            out.append({"event": a.id_})
        else:
            out.append({"copy": a.model_dump(mode="json")})
    return json.dumps(out)


def to_rows(env: TravelEnvironment) -> dict[str, list[dict[str, Any]]]:
    """The world's seed rows of an environment."""
    cal, box = env.calendar, env.inbox
    initial_events = {id(e) for e in cal.initial_events}
    initial_emails = {id(e) for e in box.initial_emails}
    return {
        **_catalogue_rows(env),
        "user_info": [{"id": 0, **env.user.model_dump()}],
        "reservation": [{"id": 0, **_cells(env.reservation.model_dump())}],
        "calendar": [{"id": 0, "current_day": iso(cal.current_day), "account_email": cal.account_email}],
        "events": [{"pos": i, "initial": id(e) in initial_events, **_cells(e.model_dump())}
                   for i, e in enumerate(cal.events.values())],
        "inbox": [{"id": 0, "account_email": box.account_email}],
        "emails": [{"pos": i, "initial": id(e) in initial_emails,
                    **_cells(e.model_dump(exclude={"attachments"})), "attachments": _attachment_cells(e, cal.events)}
                   for i, e in enumerate(box.emails.values())],
    }


def _named(rows: Mapping[str, Sequence[tuple]]) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for t, table in metadata.tables.items():
        found = [dict(zip(table.columns.keys(), r)) for r in rows[t]]
        for r in found:
            r.update({c: json.loads(r[c]) for c in JSON_COLUMNS if c in r})
        out[t] = sorted(found, key=lambda r: r.get("pos", 0))
    return out


def _catalogue(named: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out = {}
    for kind, attr, listed in _KINDS:
        reviews = [r for r in named["reviews"] if r["kind"] == kind]
        out[attr] = {listed: [{**{k: v for k, v in item.items() if k != "pos"},
                               "reviews": [r["text"] for r in reviews if r["item"] == item["pos"]]}
                              for item in named[_TABLE_OF_KIND[kind]]]}
    out["flights"] = {"flight_list": [{k: v for k, v in f.items() if k != "pos"} for f in named["flights"]]}
    return out


def _events(named: dict[str, list[dict[str, Any]]]) -> dict[str, CalendarEvent]:
    return {e["id_"]: CalendarEvent(**{**e, "all_day": bool(e["all_day"])}) for e in named["events"]}


def _emails(named: dict[str, list[dict[str, Any]]], events: dict[str, CalendarEvent]) -> dict[str, Email]:
    def attached(a: Any) -> str | CalendarEvent:
        if isinstance(a, str):
            return a
        return events[a["event"]] if "event" in a else CalendarEvent(**a["copy"])

    return {m["id_"]: Email(**{**m, "read": bool(m["read"]), "attachments": [attached(a) for a in m["attachments"]]})
            for m in named["emails"]}


def from_rows(rows: Mapping[str, Sequence[tuple]]) -> TravelEnvironment:
    """The environment a world's rows (every table) stand for: the inverse of `to_rows`."""
    named = _named(rows)
    events = _events(named)
    emails = _emails(named, events)
    cal, box = named["calendar"][0], named["inbox"][0]
    calendar = Calendar(current_day=cal["current_day"], account_email=cal["account_email"],
                        initial_events=[events[e["id_"]] for e in named["events"] if e["initial"]], events=events)
    inbox = Inbox(account_email=box["account_email"], emails=emails,
                  initial_emails=[emails[m["id_"]] for m in named["emails"] if m["initial"]])
    user = {f: named["user_info"][0][f] for f in USER_FIELDS}
    res = {k: v for k, v in named["reservation"][0].items() if k != "id"}
    return TravelEnvironment(**_catalogue(named), user=user, calendar=calendar, reservation=res, inbox=inbox)


CANCELED_BODY = "The event has been canceled."  # the body of the notice the peer sends when an event is canceled


def comparable(state_json: str, initial_emails: Sequence[str]) -> dict[str, Any]:
    """A dumped state with what the peer leaves to chance made comparable: the timestamp of every e-mail not in
    `initial_emails` masked (the peer stamps a sent e-mail with its machine's clock), and every event's
    participants sorted, in the calendar and in e-mail attachments, as are the recipients of a cancellation notice
    (the event's participants): the peer builds a new event's list from a set, in an order that changes with the
    process's string hashing. The seed's lists hold no new order, so sorting them loses nothing the peer's checks
    read (they ask whether an address is in a list, never where)."""
    state = json.loads(state_json)
    box, cal = state["inbox"], state["calendar"]
    for mail in [*box["initial_emails"], *box["emails"].values(), *box["received"], *box["sent"], *box["drafts"]]:
        if mail["id_"] not in initial_emails:
            mail["timestamp"] = "<clock>"
        if mail["body"] == CANCELED_BODY and mail["subject"].startswith("Canceled: "):
            mail["recipients"] = sorted(mail["recipients"])
        for a in mail["attachments"]:
            if isinstance(a, dict):
                a["participants"] = sorted(a["participants"])
    for event in [*cal["initial_events"], *cal["events"].values()]:
        event["participants"] = sorted(event["participants"])
    return state
