"""tau2's nested airline DB (db.json) <-> rows of our tables, both directions, exactly.

`from_nested` gives rows ready for `World.build` and for Parquet. `to_nested`
reads rows as SQLite returns them (tuples in table column order) and rebuilds
the nested dict: with `model=False` in db.json's own form (its key orders, no
reservation `status` while it is null), so `json.dumps(to_nested(rows),
indent=4)` reproduces db.json byte for byte; with `model=True` in tau2's model
form (the form the hash dumps and the tools return: model field order, every
optional field present). The entity builders are shared with the tools, so a
tool result and an exported state can never disagree on shape.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalsuite.domains.tau2 import rows as tau2_rows
from evalsuite.domains.tau2.rows import Row, by_position, check_fields, check_keyed, check_top_level, grouped
from evalsuite.domains.tau2_airline.schema import ADDRESS_FIELDS, CABINS, COLUMNS, DATE_FIELDS, TIME_FIELDS

TOP_LEVEL = ("flights", "users", "reservations")
PM_FIELDS = {"credit_card": ("brand", "last_four"), "gift_card": ("amount",), "certificate": ("amount",)}
_FIELDS = {
    "flight": {"flight_number", "origin", "destination", "scheduled_departure_time_est",
               "scheduled_arrival_time_est", "dates"},
    "user": {"user_id", "name", "address", "email", "dob", "payment_methods", "saved_passengers", "membership",
             "reservations"},
    "passenger": {"first_name", "last_name", "dob"},
    "reservation": {"reservation_id", "user_id", "origin", "destination", "flight_type", "cabin", "flights",
                    "passengers", "payment_history", "created_at", "total_baggages", "nonfree_baggages",
                    "insurance"},
    "segment": {"flight_number", "origin", "destination", "date", "price"},
    "payment": {"payment_id", "amount"},
}
_SCHEDULE = ("scheduled_departure_time_est", "scheduled_arrival_time_est")


# ---- exact cells: values a tool stores unchecked ------------------------------------------------

def to_cell(value: Any) -> Any:
    """A value for an exact (BLOB affinity) column: text and numbers as they are; anything SQLite cannot hold as
    itself (a bool, a list, an object) as its JSON bytes, which no text or number can be mistaken for."""
    if value is None or type(value) in (str, int, float):
        return value
    return json.dumps(value).encode()


def from_cell(cell: Any) -> Any:
    return json.loads(cell) if isinstance(cell, bytes) else cell


# ---- rows -> entities (tau2 model field order unless `model` is False) ----------------------------

def seats(d: Mapping[str, Any]) -> dict[str, int]:
    return {c: d[f"seats_{c}"] for c in CABINS}


def prices(d: Mapping[str, Any]) -> dict[str, int]:
    return {c: d[f"price_{c}"] for c in CABINS}


def flight_date_record(d: Mapping[str, Any]) -> dict[str, Any]:
    """A flight-date record: `status` and the fields of that status."""
    out: dict[str, Any] = {"status": d["status"]}
    for f in DATE_FIELDS[d["status"]]:
        out[f] = seats(d) if f == "available_seats" else prices(d) if f == "prices" else d[f]
    return out


def flight_entity(f: Mapping[str, Any], dates: Iterable[Mapping[str, Any]], model: bool = True) -> dict[str, Any]:
    head = ("flight_number", "origin", "destination") if model else ("origin", "destination", "flight_number")
    return {**{k: f[k] for k in head + _SCHEDULE}, "dates": {d["date"]: flight_date_record(d) for d in dates}}


def direct_flight(f: Mapping[str, Any], d: Mapping[str, Any], date: str | None) -> dict[str, Any]:
    """A search hit (§4.5): the flight, its status on the date searched and that date's seats and prices."""
    return {"flight_number": f["flight_number"], "origin": f["origin"], "destination": f["destination"],
            "status": d["status"], **{k: f[k] for k in _SCHEDULE}, "date": date,
            "available_seats": seats(d), "prices": prices(d)}


def payment_method_entity(pm: Mapping[str, Any]) -> dict[str, Any]:
    return {"source": pm["source"], "id": pm["id"], **{f: pm[f] for f in PM_FIELDS[pm["source"]]}}


def person(p: Mapping[str, Any]) -> dict[str, str]:
    return {"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}


def user_entity(u: Mapping[str, Any], methods: Iterable[Mapping[str, Any]], saved: Iterable[Mapping[str, Any]],
                reservation_ids: Iterable[str]) -> dict[str, Any]:
    return {"user_id": u["user_id"], "name": {"first_name": u["first_name"], "last_name": u["last_name"]},
            "address": {f: u[f] for f in ADDRESS_FIELDS}, "email": u["email"], "dob": u["dob"],
            "payment_methods": {pm["id"]: payment_method_entity(pm) for pm in methods},
            "saved_passengers": [person(p) for p in saved], "membership": u["membership"],
            "reservations": list(reservation_ids)}


def segment_entity(s: Mapping[str, Any], model: bool = True) -> dict[str, Any]:
    head = ("flight_number", "origin", "destination") if model else ("origin", "destination", "flight_number")
    return {**{k: s[k] for k in head}, "date": s["date"], "price": s["price"]}


def reservation_entity(r: Mapping[str, Any], segments: Iterable[Mapping[str, Any]],
                       passengers: Iterable[Mapping[str, Any]], payments: Iterable[Mapping[str, Any]],
                       model: bool = True) -> dict[str, Any]:
    """The Reservation; with `model` False, a null status is left out as in db.json."""
    out = {**{k: r[k] for k in ("reservation_id", "user_id", "origin", "destination", "flight_type")},
           "cabin": from_cell(r["cabin"]),
           "flights": [segment_entity(s, model) for s in segments],
           "passengers": [person(p) for p in passengers],
           "payment_history": [{"payment_id": p["payment_id"], "amount": p["amount"]} for p in payments],
           "created_at": r["created_at"], "total_baggages": from_cell(r["total_baggages"]),
           "nonfree_baggages": from_cell(r["nonfree_baggages"]), "insurance": r["insurance"]}
    if model or r["status"] is not None:
        out["status"] = r["status"]
    return out


# ---- rows -> nested DB -------------------------------------------------------------------------

def to_nested(rows: Mapping[str, Sequence[Sequence[Any]]], model: bool = False) -> dict[str, Any]:
    """Rebuild the DB from every table's rows (tuples in column order, any row order)."""
    r = {t: tau2_rows.as_dicts(COLUMNS[t], rows[t]) for t in COLUMNS}
    dates = grouped(r["flight_dates"], "flight_number")
    methods, saved, booked = (grouped(r[t], "user_id") for t in ("payment_methods", "saved_passengers",
                                                                  "user_reservations"))
    segs, pax, pays = (grouped(r[t], "reservation_id") for t in ("segments", "passengers", "payments"))
    nested = {
        "flights": {f["flight_number"]: flight_entity(f, dates.get(f["flight_number"], []), model)
                    for f in by_position(r["flights"])},
        "users": {u["user_id"]: user_entity(u, methods.get(u["user_id"], []), saved.get(u["user_id"], []),
                                            [x["reservation_id"] for x in booked.get(u["user_id"], [])])
                  for u in by_position(r["users"])},
        "reservations": {x["reservation_id"]: reservation_entity(x, segs.get(x["reservation_id"], []),
                                                                 pax.get(x["reservation_id"], []),
                                                                 pays.get(x["reservation_id"], []), model)
                         for x in by_position(r["reservations"])},
    }
    return nested


def model_of_db_json(db: Mapping[str, Any]) -> dict[str, Any]:
    """A db.json-shaped DB in tau2's model form: every reservation with its `status` (null when absent)."""
    return {**db, "reservations": {k: {**v, "status": v.get("status")} for k, v in db["reservations"].items()}}


# ---- nested DB -> rows -------------------------------------------------------------------------

def _check(obj: Mapping[str, Any], kind: str, where: str, optional: Iterable[str] = ()) -> None:
    check_fields(obj, kind, _FIELDS[kind], where, optional)


def from_nested(db: Mapping[str, Any]) -> dict[str, list[Row]]:
    """Rows of every table from the nested DB; positions record map and list order."""
    check_top_level(db, TOP_LEVEL)
    out: dict[str, list[Row]] = {t: [] for t in COLUMNS}
    for pos, (number, f) in enumerate(db["flights"].items()):
        _flight_rows(out, pos, number, f)
    for pos, (uid, u) in enumerate(db["users"].items()):
        _user_rows(out, pos, uid, u)
    for pos, (rid, r) in enumerate(db["reservations"].items()):
        _reservation_rows(out, pos, rid, r)
    return out


def _flight_rows(out: dict[str, list[Row]], pos: int, number: str, f: Mapping[str, Any]) -> None:
    where = f"flights[{number}]"
    _check(f, "flight", where)
    check_keyed(number, f["flight_number"], where)
    out["flights"].append({"flight_number": number, "position": pos, "origin": f["origin"],
                           "destination": f["destination"], **{k: f[k] for k in _SCHEDULE}})
    for dpos, (date, d) in enumerate(f["dates"].items()):
        out["flight_dates"].append(_date_row(number, dpos, date, d, f"{where}.dates[{date}]"))


def _date_row(number: str, pos: int, date: str, d: Mapping[str, Any], where: str) -> Row:
    fields = DATE_FIELDS.get(d.get("status"))
    if fields is None or list(d) != ["status", *fields]:
        raise ValueError(f"{where}: fields {list(d)} do not fit status {d.get('status')!r}")
    row: Row = {"flight_number": number, "date": date, "position": pos, "status": d["status"],
                **{f"seats_{c}": None for c in CABINS}, **{f"price_{c}": None for c in CABINS},
                **{t: d.get(t) for t in TIME_FIELDS}}
    for name, prefix in (("available_seats", "seats"), ("prices", "price")):
        if name in d:
            if list(d[name]) != list(CABINS):
                raise ValueError(f"{where}.{name}: keys {list(d[name])} are not {list(CABINS)}")
            row.update({f"{prefix}_{c}": d[name][c] for c in CABINS})
    return row


def _user_rows(out: dict[str, list[Row]], pos: int, uid: str, u: Mapping[str, Any]) -> None:
    where = f"users[{uid}]"
    _check(u, "user", where)
    check_keyed(uid, u["user_id"], where)
    if list(u["address"]) != list(ADDRESS_FIELDS) or list(u["name"]) != ["first_name", "last_name"]:
        raise ValueError(f"{where}: name {list(u['name'])} / address {list(u['address'])} fields differ")
    out["users"].append({"user_id": uid, "position": pos, **u["name"], **u["address"], "email": u["email"],
                         "dob": u["dob"], "membership": u["membership"]})
    for mpos, (mid, m) in enumerate(u["payment_methods"].items()):
        check_keyed(mid, m["id"], f"{where}.payment_methods[{mid}]")
        extra = PM_FIELDS.get(m.get("source"))
        if extra is None or list(m) != ["source", "id", *extra]:
            raise ValueError(f"{where}.payment_methods[{mid}]: fields {list(m)} do not fit source {m.get('source')!r}")
        out["payment_methods"].append({"user_id": uid, "id": mid, "position": mpos, "source": m["source"],
                                       "brand": m.get("brand"), "last_four": m.get("last_four"),
                                       "amount": m.get("amount")})
    for i, p in enumerate(u["saved_passengers"]):
        _check(p, "passenger", f"{where}.saved_passengers[{i}]")
        out["saved_passengers"].append({"user_id": uid, "position": i, **person(p)})
    out["user_reservations"].extend({"user_id": uid, "position": i, "reservation_id": rid}
                                    for i, rid in enumerate(u["reservations"]))


def _reservation_rows(out: dict[str, list[Row]], pos: int, rid: str, r: Mapping[str, Any]) -> None:
    where = f"reservations[{rid}]"
    _check(r, "reservation", where, optional=("status",))
    check_keyed(rid, r["reservation_id"], where)
    out["reservations"].append({
        "reservation_id": rid, "position": pos,
        **{k: r[k] for k in ("user_id", "origin", "destination", "flight_type")}, "cabin": to_cell(r["cabin"]),
        "created_at": r["created_at"], "total_baggages": to_cell(r["total_baggages"]),
        "nonfree_baggages": to_cell(r["nonfree_baggages"]), "insurance": r["insurance"], "status": r.get("status")})
    for i, s in enumerate(r["flights"]):
        _check(s, "segment", f"{where}.flights[{i}]")
        out["segments"].append({"reservation_id": rid, "position": i, **segment_entity(s)})
    for i, p in enumerate(r["passengers"]):
        _check(p, "passenger", f"{where}.passengers[{i}]")
        out["passengers"].append({"reservation_id": rid, "position": i, **person(p)})
    for i, p in enumerate(r["payment_history"]):
        _check(p, "payment", f"{where}.payment_history[{i}]")
        out["payments"].append({"reservation_id": rid, "position": i, "payment_id": p["payment_id"],
                                "amount": p["amount"]})
