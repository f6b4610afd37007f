"""The tau2 airline world against TOOLS_SPEC.md: data round trip, tau2's hash, the 50 gold replays, every tool's
effects, outputs and errors.

Expectations come from the spec and the data, never from the original's code:
the hash is recomputed here by §3's recipe (plain json + hashlib), expected
end states are built by applying §4's rules to db.json's dicts in this file,
and the gold end-state hashes are read from the spec's own table (§9).
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pytest

from evalsuite.domains.tau2_airline import DOMAIN, ROLE, TAU2_HASH, build_world, from_nested, to_nested, tool_message
from evalsuite.worlds.world import World

SRC = Path(__file__).resolve().parents[2] / "third_party" / "tau2_airline"
SPEC = (SRC / "TOOLS_SPEC.md").read_text()


@pytest.fixture(scope="module")
def raw() -> str:
    return (SRC / "db.json").read_text()


@pytest.fixture(scope="module")
def db(raw) -> dict:
    return json.loads(raw)


@pytest.fixture(scope="module")
def world(tmp_path_factory, db) -> World:
    return build_world(db, tmp_path_factory.mktemp("airline") / "world.sqlite")


@pytest.fixture
def trial(world):
    return world.reset(ROLE)


def spec_hash(db: dict) -> str:
    """§3: sha256 of the sorted-key dump, every reservation's `status` present (null when absent)."""
    model = {**db, "reservations": {k: {**r, "status": r.get("status")} for k, r in db["reservations"].items()}}
    return hashlib.sha256(json.dumps(model, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def edited(db: dict, **changes) -> dict:
    """db.json with some entities replaced: {"users": {id: entity}, ...}; a collection's map keeps its order."""
    return {c: {**db[c], **changes.get(c, {})} for c in db}


def ok(trial, tool, **args):
    ev = trial.call(tool, args)
    assert ev.outcome == "ok", ev.error
    return ev.result


def err(trial, tool, **args) -> str:
    ev = trial.call(tool, args)
    assert ev.outcome == "error", ev.result
    return ev.error


def model(reservation: dict) -> dict:
    """A db.json reservation as the tools return it: segments in model field order, `status` present."""
    seg = ("flight_number", "origin", "destination", "date", "price")
    return {**reservation, "flights": [{k: s[k] for k in seg} for s in reservation["flights"]],
            "status": reservation.get("status")}


# ---- data, round trip, hash ----------------------------------------------------------------------

def test_initial_hash_is_the_spec_recipe(world, db):
    as_is = hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()
    assert as_is.startswith("a072e1ec")  # §3: without the absent status field
    assert TAU2_HASH.world_hash(world) == spec_hash(db) == TAU2_HASH.initial == TAU2_HASH.hash_db_json(db)
    assert TAU2_HASH.initial.startswith("124e39a6")


def test_round_trip_is_byte_identical(world, raw):
    assert json.dumps(to_nested(world.initial_rows), indent=4) == raw
    assert {t: len(r) for t, r in world.initial_rows.items()} == {  # README's record counts
        "flights": 300, "flight_dates": 9000, "users": 500, "payment_methods": 1486, "saved_passengers": 672,
        "user_reservations": 2000, "reservations": 2000, "segments": 5003, "passengers": 3593, "payments": 2000}


def test_from_nested_refuses_what_it_cannot_write_back(db):
    with pytest.raises(ValueError, match="top-level keys"):
        from_nested({**db, "airports": {}})
    flight = copy.deepcopy(db["flights"]["HAT001"])
    flight["dates"]["2024-05-01"]["gate"] = "B4"
    with pytest.raises(ValueError, match=r"flights\[HAT001\]\.dates\[2024-05-01\]: fields .* do not fit status"):
        from_nested(edited(db, flights={"HAT001": flight}))
    reservation = {**db["reservations"]["4WQ150"], "seat": "12A"}
    with pytest.raises(ValueError, match=r"reservations\[4WQ150\]: reservation missing \[\] / unknown \['seat'\]"):
        from_nested(edited(db, reservations={"4WQ150": reservation}))


def test_domain_surface_and_clock():
    kinds = {n: t.kind for n, t in DOMAIN.tools.items()}
    assert sorted(n for n, k in kinds.items() if k == "write") == [
        "book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
        "update_reservation_flights", "update_reservation_passengers"]
    assert sorted(n for n, k in kinds.items() if k == "read") == [
        "get_flight_status", "get_reservation_details", "get_user_details", "list_all_airports",
        "search_direct_flight", "search_onestop_flight"]
    assert {n for n, k in kinds.items() if k == "generic"} == {"calculate", "transfer_to_human_agents"}
    assert DOMAIN.roles["airline_agent"] == ROLE and ROLE.permitted == {n for n, k in kinds.items() if k != "generic"}
    # The policy's "now" is the world's: every trial sees it, whatever the machine's date.
    assert "The current time is 2024-05-15 15:00:00 EST." in (SRC / "policy.md").read_text()
    assert DOMAIN.clock.isoformat() == "2024-05-15T15:00:00"


# ---- the 50 gold replays -------------------------------------------------------------------------

def spec_gold_hashes() -> dict[str, str]:
    """§9's table: the expected end-state hash of every task whose gold changes the DB."""
    return dict(re.findall(r"^\| (\d+) \| `([0-9a-f]{64})` \|$", SPEC, re.M))


def test_every_gold_replay_ends_in_the_originals_state(world):
    tasks = json.loads((SRC / "tasks.json").read_text())
    expected = spec_gold_hashes()
    assert len(tasks) == 50 and len(expected) == 26
    hasher = TAU2_HASH.hasher(world)
    calls = 0
    for task in tasks:
        trial = world.reset(ROLE)
        for action in task["evaluation_criteria"]["actions"]:
            event = trial.call(action["name"], action["arguments"])
            assert event.outcome == "ok", (task["id"], action["action_id"], event.error)  # §9: none raises
            calls += 1
        assert hasher.hash(trial) == expected.get(task["id"], TAU2_HASH.initial), task["id"]
    assert calls == 142
    assert hasher.hash(trial) == TAU2_HASH.world_hash(trial)  # the incremental hash is the full dump's


# ---- read and generic tools ----------------------------------------------------------------------

def test_read_tools_return_the_db_records(trial, db):
    assert ok(trial, "get_user_details", user_id="mia_li_3668") == db["users"]["mia_li_3668"]
    got = ok(trial, "get_reservation_details", reservation_id="4WQ150")
    assert got == model(db["reservations"]["4WQ150"]) and got["status"] is None
    assert list(got["flights"][0]) == ["flight_number", "origin", "destination", "date", "price"]  # model order
    airports = ok(trial, "list_all_airports")
    assert [a["iata"] for a in airports][:3] == ["SFO", "JFK", "LAX"] and airports[-1] == {"iata": "LGA",
                                                                                             "city": "LaGuardia"}
    assert {a["iata"] for a in airports} == {f["origin"] for f in db["flights"].values()}  # the 20 of §1
    assert ok(trial, "get_flight_status", flight_number="HAT018", date="2024-05-11") == "delayed"  # §10's oddity
    assert ok(trial, "transfer_to_human_agents", summary="x") == "Transfer successful"
    assert ok(trial, "calculate", expression="(1911 - 148) * 2") == "3526.0"
    assert not trial.changed_keys()


def _hit(db: dict, number: str, date: str | None, on: str) -> dict:
    """§4.5's search record of a flight on a date, built from db.json."""
    f, d = db["flights"][number], db["flights"][number]["dates"][on]
    return {"flight_number": number, "origin": f["origin"], "destination": f["destination"], "status": "available",
            "scheduled_departure_time_est": f["scheduled_departure_time_est"],
            "scheduled_arrival_time_est": f["scheduled_arrival_time_est"], "date": date,
            "available_seats": d["available_seats"], "prices": d["prices"]}


def _available(db: dict, origin: str, on: str, destination: str | None = None) -> list[str]:
    return [n for n, f in db["flights"].items() if f["origin"] == origin
            and (destination is None or f["destination"] == destination)
            and f["dates"].get(on, {}).get("status") == "available"]


def test_search_direct_flight(trial, db):
    want = [_hit(db, n, None, "2024-05-20") for n in _available(db, "JFK", "2024-05-20", "SEA")]
    assert want and ok(trial, "search_direct_flight", origin="JFK", destination="SEA", date="2024-05-20") == want
    assert ok(trial, "search_direct_flight", origin="JFK", destination="SEA", date="2024-05-15") == []  # none bookable
    assert ok(trial, "search_direct_flight", origin="XXX", destination="SEA", date="2024-05-20") == []
    assert ok(trial, "search_direct_flight", origin="JFK", destination="SEA", date=20240520) == []


@pytest.mark.parametrize("origin, destination, date", [("LGA", "LGA", "2024-05-20"), ("JFK", "SEA", "2024-05-20"),
                                                       ("LGA", "PHX", "2024-05-30")])
def test_search_onestop_flight(trial, db, origin, destination, date):
    want = []
    for first in _available(db, origin, date):
        arrival = db["flights"][first]["scheduled_arrival_time_est"]
        # §4.6: a "+1" arrival connects on "2024-05-" + (day + 1), not zero-padded; times compared as text.
        connect = "2024-05-" + str(int(date[-2:]) + 1) if "+1" in arrival else date
        for second in _available(db, db["flights"][first]["destination"], connect, destination):
            if db["flights"][second]["scheduled_departure_time_est"] >= arrival:
                want.append([_hit(db, first, date, date), _hit(db, second, connect, connect)])
    assert ok(trial, "search_onestop_flight", origin=origin, destination=destination, date=date) == want
    if origin == "LGA" and destination == "LGA":
        assert want  # LGA -> PHX -> LGA is listed for LGA -> LGA (§4.6)


# ---- write tools: effects worked from §4 on db.json ----------------------------------------------

def test_book_reservation(trial, db):
    # Task 20's booking: one economy passenger on HAT136 + HAT039 (2024-05-20), paid by a 250 certificate and a card.
    price = [db["flights"][n]["dates"]["2024-05-20"]["prices"]["economy"] for n in ("HAT136", "HAT039")]
    args = dict(user_id="mia_li_3668", origin="JFK", destination="SEA", flight_type="one_way", cabin="economy",
                flights=[{"flight_number": "HAT136", "date": "2024-05-20", "extra": "dropped"},
                         {"flight_number": "HAT039", "date": "2024-05-20"}],
                passengers=[{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
                payment_methods=[{"payment_id": "certificate_7504069", "amount": 250},
                                 {"payment_id": "credit_card_4421486", "amount": str(sum(price) - 250)}],
                total_baggages=3, nonfree_baggages=0, insurance="no")
    got = ok(trial, "book_reservation", **args)
    segments = [{"flight_number": n, "origin": db["flights"][n]["origin"],
                 "destination": db["flights"][n]["destination"], "date": "2024-05-20", "price": p}
                for n, p in zip(("HAT136", "HAT039"), price)]
    booked = {"reservation_id": "HATHAT", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA",
              "flight_type": "one_way", "cabin": "economy", "flights": segments, "passengers": args["passengers"],
              "payment_history": [{"payment_id": "certificate_7504069", "amount": 250},
                                  {"payment_id": "credit_card_4421486", "amount": sum(price) - 250}],
              "created_at": "2024-05-15T15:00:00", "total_baggages": 3, "nonfree_baggages": 0, "insurance": "no",
              "status": None}
    assert got == booked
    user = copy.deepcopy(db["users"]["mia_li_3668"])
    del user["payment_methods"]["certificate_7504069"]  # a certificate is used up whatever remains (§4.9 step 9)
    user["reservations"].append("HATHAT")
    flights = {}
    for n in ("HAT136", "HAT039"):
        flights[n] = copy.deepcopy(db["flights"][n])
        flights[n]["dates"]["2024-05-20"]["available_seats"]["economy"] -= 1
    want = edited(db, users={"mia_li_3668": user}, flights=flights, reservations={"HATHAT": booked})
    assert TAU2_HASH.world_hash(trial) == spec_hash(want)
    assert json.loads(json.dumps(to_nested(trial.rows()))) == {**want, "reservations": {
        **want["reservations"], "HATHAT": {k: v for k, v in booked.items() if k != "status"}}}
    # §10: ids are a fixed sequence; a fourth booking in one episode is refused.
    for expect in ("HATHAU", "HATHAV"):
        assert ok(trial, "book_reservation", **{**args, "payment_methods": [
            {"payment_id": "credit_card_4421486", "amount": sum(price)}]})["reservation_id"] == expect
    assert err(trial, "book_reservation", **args) == "Too many reservations"


def test_booking_fees_and_an_overdrawn_gift_card(trial, db):
    # §4.9: insurance 30 and 50 a non-free bag per passenger; one gift card (98.0) listed twice is checked against
    # its full balance each time and ends negative (§10).
    user = "mei_hernandez_8984"
    assert db["users"][user]["payment_methods"]["gift_card_5309492"]["amount"] == 98.0
    price = db["flights"]["HAT136"]["dates"]["2024-05-20"]["prices"]["business"]
    total = 2 * price + 30 * 2 + 50 * 3
    people = [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}, {"first_name": "C", "last_name": "D",
                                                                           "dob": "1991-01-01"}]
    got = ok(trial, "book_reservation", user_id=user, origin="JFK", destination="ATL", flight_type="one_way",
             cabin="business", flights=[{"flight_number": "HAT136", "date": "2024-05-20"}], passengers=people,
             payment_methods=[{"payment_id": "gift_card_5309492", "amount": 70.0},
                              {"payment_id": "gift_card_5309492", "amount": 71},
                              {"payment_id": "credit_card_2140654", "amount": total - 141}],
             total_baggages=5, nonfree_baggages=3, insurance="yes")
    assert got["payment_history"][0] == {"payment_id": "gift_card_5309492", "amount": 70}
    balance = ok(trial, "get_user_details", user_id=user)["payment_methods"]["gift_card_5309492"]["amount"]
    assert balance == -43.0 and type(balance) is float


def test_a_certificate_listed_twice_leaves_the_booking_half_applied(trial, db):
    # §4.9 step 9: the second removal fails after the first; nothing is rolled back, nothing is booked.
    price = db["flights"]["HAT136"]["dates"]["2024-05-20"]["prices"]["economy"]
    event = trial.call("book_reservation", dict(
        user_id="mia_li_3668", origin="JFK", destination="ATL", flight_type="one_way", cabin="economy",
        flights=[{"flight_number": "HAT136", "date": "2024-05-20"}],
        passengers=[{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        payment_methods=[{"payment_id": "certificate_4856383", "amount": 50},
                         {"payment_id": "certificate_4856383", "amount": 50},
                         {"payment_id": "credit_card_4421486", "amount": price - 100}],
        total_baggages=0, nonfree_baggages=0, insurance="no"))
    assert (event.outcome, event.error, event.committed) == ("error", "'certificate_4856383'", True)
    assert tool_message(event) == "Error: 'certificate_4856383'"
    user = copy.deepcopy(db["users"]["mia_li_3668"])
    del user["payment_methods"]["certificate_4856383"]
    assert TAU2_HASH.world_hash(trial) == spec_hash(edited(db, users={"mia_li_3668": user}))


def test_cancel_refunds_every_entry_and_frees_nothing(trial, db):
    # §4.10: a negated copy of every entry then present; no balance or seat changes; again means again.
    first = ok(trial, "cancel_reservation", reservation_id="4WQ150")
    again = ok(trial, "cancel_reservation", reservation_id="4WQ150")
    paid = db["reservations"]["4WQ150"]["payment_history"][0]
    assert first["status"] == again["status"] == "cancelled"
    assert [p["amount"] for p in again["payment_history"]] == [paid["amount"], -paid["amount"], -paid["amount"],
                                                               paid["amount"]]
    want = {**db["reservations"]["4WQ150"], "status": "cancelled", "payment_history": again["payment_history"]}
    assert TAU2_HASH.world_hash(trial) == spec_hash(edited(db, reservations={"4WQ150": want}))
    assert set(trial.changed_keys()) == {"reservations", "payments"}


def test_cabin_change_reprices_every_segment(trial, db):
    # Task 7's upgrade: XEHM4B (basic economy, 2 passengers) to business on the same flights, paid by card.
    old = db["reservations"]["XEHM4B"]
    new = [{**s, "price": db["flights"][s["flight_number"]]["dates"][s["date"]]["prices"]["business"]}
           for s in old["flights"]]
    got = ok(trial, "update_reservation_flights", reservation_id="XEHM4B", cabin="business",
             flights=[{"flight_number": s["flight_number"], "date": s["date"]} for s in old["flights"]],
             payment_id="credit_card_2408938")
    difference = (sum(s["price"] for s in new) - sum(s["price"] for s in old["flights"])) * 2
    want = {**old, "cabin": "business", "flights": new,
            "payment_history": [*old["payment_history"], {"payment_id": "credit_card_2408938", "amount": difference}]}
    assert got == model(want)
    assert TAU2_HASH.world_hash(trial) == spec_hash(edited(db, reservations={"XEHM4B": want}))  # seats untouched


def test_a_cheaper_change_credits_the_gift_card(trial, db):
    # Task 15's change of M05KNL: kept segments keep their price, new ones take today's; the total goes to the card.
    old = db["reservations"]["M05KNL"]
    flights = [{"flight_number": "HAT110", "date": "2024-05-24"}, {"flight_number": "HAT172", "date": "2024-05-24"}]
    got = ok(trial, "update_reservation_flights", reservation_id="M05KNL", cabin=old["cabin"], flights=flights,
             payment_id="gift_card_8887175")
    keep = {(s["flight_number"], s["date"]): s["price"] for s in old["flights"]}
    prices = [keep.get((f["flight_number"], f["date"]),
                       db["flights"][f["flight_number"]]["dates"][f["date"]]["prices"][old["cabin"]]) for f in flights]
    total = (sum(prices) - sum(keep.values())) * len(old["passengers"])
    assert [s["price"] for s in got["flights"]] == prices and got["payment_history"][-1]["amount"] == total
    user = copy.deepcopy(db["users"][old["user_id"]])
    user["payment_methods"]["gift_card_8887175"]["amount"] -= total
    want = {**old, "flights": [{"origin": db["flights"][f["flight_number"]]["origin"],
                                "destination": db["flights"][f["flight_number"]]["destination"], **f, "price": p}
                               for f, p in zip(flights, prices)],
            "payment_history": [*old["payment_history"], {"payment_id": "gift_card_8887175", "amount": total}]}
    assert TAU2_HASH.world_hash(trial) == spec_hash(edited(db, users={old["user_id"]: user},
                                                           reservations={"M05KNL": want}))


def test_baggage_and_passenger_updates(trial, db):
    r = db["reservations"]["4WQ150"]  # paid by gift_card_3576581, 0 non-free bags
    owner = db["users"][r["user_id"]]
    balance = owner["payment_methods"]["gift_card_3576581"]["amount"]
    got = ok(trial, "update_reservation_baggages", reservation_id="4WQ150", total_baggages=6, nonfree_baggages=1,
             payment_id="gift_card_3576581")
    assert (got["total_baggages"], got["nonfree_baggages"], got["payment_history"][-1]) == (
        6, 1, {"payment_id": "gift_card_3576581", "amount": 50})
    ok(trial, "update_reservation_baggages", reservation_id="4WQ150", total_baggages=2, nonfree_baggages=0,
       payment_id="gift_card_3576581")  # fewer bags: free, no refund, nothing appended
    swapped = list(reversed(r["passengers"]))
    assert ok(trial, "update_reservation_passengers", reservation_id="4WQ150", passengers=swapped)["passengers"] == \
        swapped
    user = copy.deepcopy(owner)
    user["payment_methods"]["gift_card_3576581"]["amount"] = balance - 50
    want = {**r, "passengers": swapped, "total_baggages": 2, "nonfree_baggages": 0,
            "payment_history": [*r["payment_history"], {"payment_id": "gift_card_3576581", "amount": 50}]}
    assert TAU2_HASH.world_hash(trial) == spec_hash(edited(db, users={r["user_id"]: user},
                                                           reservations={"4WQ150": want}))


def test_values_stored_as_given(trial, db):
    # §4.11 and §4.12: counts are not type-checked and an empty flight list lets any cabin through; they hash as is.
    ok(trial, "update_reservation_baggages", reservation_id="4WQ150", total_baggages="3", nonfree_baggages=0,
       payment_id="gift_card_3576581")
    got = ok(trial, "update_reservation_flights", reservation_id="4WQ150", cabin="first", flights=[],
             payment_id="gift_card_3576581")
    assert (got["total_baggages"], got["cabin"], got["flights"]) == ("3", "first", [])
    r = db["reservations"]["4WQ150"]
    refund = -sum(s["price"] for s in r["flights"]) * len(r["passengers"])
    user = copy.deepcopy(db["users"][r["user_id"]])
    user["payment_methods"]["gift_card_3576581"]["amount"] -= refund
    want = {**r, "total_baggages": "3", "cabin": "first", "flights": [],
            "payment_history": [*r["payment_history"], {"payment_id": "gift_card_3576581", "amount": refund}]}
    assert TAU2_HASH.world_hash(trial) == spec_hash(edited(db, users={r["user_id"]: user},
                                                           reservations={"4WQ150": want}))
    ok(trial, "update_reservation_baggages", reservation_id="4WQ150", total_baggages=[1, True], nonfree_baggages=0,
       payment_id="gift_card_3576581")
    assert ok(trial, "get_reservation_details", reservation_id="4WQ150")["total_baggages"] == [1, True]
    assert err(trial, "update_reservation_baggages", reservation_id="4WQ150", total_baggages=1,
               nonfree_baggages="2", payment_id="gift_card_3576581") == \
        "unsupported operand type(s) for -: 'str' and 'int'"


def test_send_certificate(trial, db):
    said = [ok(trial, "send_certificate", user_id="mia_li_3668", amount=a) for a in (100, 150.0, "50")]
    assert said == [f"Certificate certificate_322132{i} added to user mia_li_3668 with amount {a}."
                    for i, a in ((2, "100"), (3, "150.0"), (4, "50"))]
    methods = ok(trial, "get_user_details", user_id="mia_li_3668")["payment_methods"]
    assert list(methods)[-3:] == ["certificate_3221322", "certificate_3221323", "certificate_3221324"]
    assert [methods[c]["amount"] for c in list(methods)[-3:]] == [100.0, 150.0, 50.0]
    assert type(methods["certificate_3221322"]["amount"]) is float
    assert err(trial, "send_certificate", user_id="mia_li_3668", amount=10) == "Too many certificates"
    assert ok(trial, "send_certificate", user_id="mei_hernandez_8984", amount=5).startswith(
        "Certificate certificate_3221322 added")  # ids are per user


# ---- errors --------------------------------------------------------------------------------------

BOOK = dict(user_id="mia_li_3668", origin="JFK", destination="SEA", flight_type="one_way", cabin="economy",
            flights=[{"flight_number": "HAT136", "date": "2024-05-20"}],
            passengers=[{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
            payment_methods=[{"payment_id": "credit_card_4421486", "amount": 1}], total_baggages=0,
            nonfree_baggages=0, insurance="no")
FLIGHTS = dict(reservation_id="XEHM4B", cabin="business", payment_id="credit_card_2408938",
               flights=[{"flight_number": "HAT005", "date": "2024-05-20"}])


def _pydantic(title: str, *blocks: tuple[str, str, str]) -> str:
    """§4.0's validation text: a header, then per field its name, the message and the documentation link."""
    n = len(blocks)
    head = f"{n} validation error{'s' if n > 1 else ''} for {title}"
    return "\n".join([head, *(f"{field}\n  {message}\n    For further information visit "
                              f"https://errors.pydantic.dev/2.14/v/{kind}" for field, message, kind in blocks)])


@pytest.mark.parametrize("tool, args, message", [
    ("no_such_tool", {}, "Tool 'no_such_tool' not found."),
    ("get_user_details", {}, "AirlineTools.get_user_details() missing 1 required positional argument: 'user_id'"),
    ("get_user_details", {"user_id": "mia_li_3668", "foo": 1},
     "AirlineTools.get_user_details() got an unexpected keyword argument 'foo'"),
    ("get_user_details", {"user_id": "nobody"}, "User nobody not found"),
    ("get_user_details", {"user_id": 7}, "User 7 not found"),
    ("get_reservation_details", {"reservation_id": "4wq150"}, "Reservation 4wq150 not found"),  # case-sensitive
    ("get_flight_status", {"flight_number": "HAT999", "date": "2024-05-20"}, "Flight HAT999 not found"),
    ("get_flight_status", {"flight_number": "HAT001", "date": "2024-06-01"},
     "Flight HAT001 not found on date 2024-06-01"),
    ("book_reservation", {**BOOK, "flights": [{"flight_number": "HAT057"}]},
     _pydantic("FlightInfo", ("date", "Field required [type=missing, input_value={'flight_number': 'HAT057'}, "
                                      "input_type=dict]", "missing"))),
    ("book_reservation", {**BOOK, "passengers": [{"first_name": 1, "last_name": "Li", "dob": "x"}]},
     _pydantic("Passenger", ("first_name", "Input should be a valid string [type=string_type, input_value=1, "
                                           "input_type=int]", "string_type"))),
    ("book_reservation", {**BOOK, "payment_methods": [{"payment_id": "credit_card_4421486", "amount": 141.5}]},
     _pydantic("Payment", ("amount", "Input should be a valid integer, got a number with a fractional part "
                                     "[type=int_from_float, input_value=141.5, input_type=float]", "int_from_float"))),
    ("book_reservation", {**BOOK, "cabin": "first", "total_baggages": "two", "insurance": True},
     _pydantic("Reservation",
               ("cabin", "Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, "
                         "input_value='first', input_type=str]", "literal_error"),
               ("total_baggages", "Input should be a valid integer, unable to parse string as an integer "
                                  "[type=int_parsing, input_value='two', input_type=str]", "int_parsing"),
               ("insurance", "Input should be 'yes' or 'no' [type=literal_error, input_value=True, input_type=bool]",
                "literal_error"))),
    ("book_reservation", {**BOOK, "flights": "HAT136"}, "'str' object has no attribute 'flight_number'"),
    ("book_reservation", {**BOOK, "user_id": "nobody"}, "User nobody not found"),
    ("book_reservation", {**BOOK, "flights": [{"flight_number": "HAT136", "date": "2024-05-15"}]},
     "Flight HAT136 not available on date 2024-05-15"),
    ("book_reservation", {**BOOK, "passengers": BOOK["passengers"] * 60}, "Not enough seats on flight HAT136"),
    ("book_reservation", {**BOOK, "payment_methods": [{"payment_id": "gift_card_5309492", "amount": 1}]},
     "Payment method gift_card_5309492 not found"),  # another user's card
    ("book_reservation", {**BOOK, "payment_methods": [{"payment_id": "certificate_4856383", "amount": 101}]},
     "Not enough balance in payment method certificate_4856383"),
    ("send_certificate", {"user_id": "mia_li_3668", "amount": "abc"},
     _pydantic("Certificate", ("amount", "Input should be a valid number, unable to parse string as a number "
                                         "[type=float_parsing, input_value='abc', input_type=str]", "float_parsing"))),
    ("update_reservation_flights", {**FLIGHTS, "payment_id": "credit_card_0000000"}, "Payment method not found"),
    ("update_reservation_flights", {**FLIGHTS, "reservation_id": "NO6JO3", "payment_id": "certificate_4856383"},
     "Certificate cannot be used to update reservation"),  # mia_li_3668's own certificate
    ("update_reservation_flights", {**FLIGHTS, "cabin": "first"}, "'first'"),
    ("update_reservation_flights", {**FLIGHTS, "flights": [{"flight_number": "HAT005", "date": "2024-05-14"}]},
     "Flight HAT005 not available on date 2024-05-14"),
    ("update_reservation_baggages", {"reservation_id": "4WQ150", "total_baggages": 9, "nonfree_baggages": 9,
                                     "payment_id": "gift_card_3576581"}, "Gift card balance is not enough"),
    ("update_reservation_baggages", {"reservation_id": "4WQ150", "total_baggages": 5, "nonfree_baggages": 0,
                                     "payment_id": "nothing"}, "Payment method not found"),  # checked at price 0
    ("update_reservation_passengers", {"reservation_id": "4WQ150", "passengers": []},
     "Number of passengers does not match"),
    ("update_reservation_passengers", {"reservation_id": "XXXXXX", "passengers": [{"first_name": "A"}]},
     _pydantic("Passenger", ("last_name", "Field required [type=missing, input_value={'first_name': 'A'}, "
                                          "input_type=dict]", "missing"),
               ("dob", "Field required [type=missing, input_value={'first_name': 'A'}, input_type=dict]",
                "missing"))),  # the list is converted before the reservation is looked up
    ("calculate", {"expression": "1/0"}, "division by zero"),
    ("calculate", {"expression": "2 + x"}, "Invalid characters in expression"),
])
def test_error_messages(trial, tool, args, message):
    assert err(trial, tool, **args) == message
    assert not trial.changed_keys()  # every check runs before the first write


def test_payments_must_add_up(trial, db):
    price = db["flights"]["HAT136"]["dates"]["2024-05-20"]["prices"]["economy"]
    assert err(trial, "book_reservation", **BOOK) == \
        f"Payment amount does not add up, total price is {price}, but paid 1"


def test_tool_message_renders_as_tau2(trial):
    assert tool_message(trial.call("get_user_details", {"user_id": "x"})) == "Error: User x not found"
    assert tool_message(trial.call("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-20"})) == \
        "available"
    shown = tool_message(trial.call("list_all_airports"))
    assert json.loads(shown)[0] == {"iata": "SFO", "city": "San Francisco"}
