"""tau2's carrier DB (db.toml, parsed) <-> rows of the agent-side tables, both directions.

`from_nested` gives rows ready for `World.build`: every record validated as
tau2 loads it (unknown fields refused, absent optional fields given their
defaults, ints in float fields made floats, dates and datetimes parsed and kept
in the text form tau2 prints). `to_nested` rebuilds the DB from rows as SQLite
returns them: with `model=True` in tau2's model form (every field present, the
form the hash dumps and the tools return), with `model=False` in db.toml's own
form (absent null fields left out, datetimes with a `T`), equal to what
`tomllib` reads from db.toml. The record builders are shared with the tools, so
a tool result and an exported state never disagree on shape.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from evalsuite.domains.tau2 import rows as tau2_rows
from evalsuite.domains.tau2.rows import Row, by_position, check_top_level, grouped
from evalsuite.domains.tau2_telecom.schema import COLUMNS

TOP_LEVEL = ("plans", "customers", "lines", "bills", "devices")  # model order (db.toml: plans, devices, lines, …)
TOML_ORDER = ("plans", "devices", "lines", "customers", "bills")
ADDRESS = ("street", "city", "state", "zip_code")
PAYMENT_METHOD = ("method_type", "account_number_last_4", "expiration_date")
LINE_ITEM = ("description", "amount", "date", "item_type")
ENUMS = {
    "device_type": ("phone", "router", "tablet", "watch", "other"),
    "line_status": ("Active", "Suspended", "Pending Activation", "Closed"),
    "account_status": ("Active", "Suspended", "Pending Verification", "Closed"),
    "method_type": ("Credit Card", "Debit Card", "PayPal"),
    "bill_status": ("Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"),
}
# Each record's fields in tau2's order: (name, kind, default); kind says how a value is checked and stored.
REQUIRED = object()
FIELDS: dict[str, tuple[tuple[str, str, Any], ...]] = {
    "plans": (("plan_id", "str", REQUIRED), ("name", "str", REQUIRED), ("data_limit_gb", "float", REQUIRED),
              ("price_per_month", "float", REQUIRED), ("data_refueling_price_per_gb", "float", REQUIRED)),
    "devices": (("device_id", "str", REQUIRED), ("device_type", "device_type", REQUIRED), ("model", "str", REQUIRED),
                ("imei", "str?", None), ("is_esim_capable", "bool", REQUIRED), ("activated", "bool", False),
                ("activation_date", "datetime?", None), ("last_esim_transfer_date", "datetime?", None)),
    "lines": (("line_id", "str", REQUIRED), ("phone_number", "str", REQUIRED),
              ("status", "line_status", "Pending Activation"), ("plan_id", "str", REQUIRED),
              ("device_id", "str?", None), ("data_used_gb", "float", 0.0), ("data_refueling_gb", "float", 0.0),
              ("roaming_enabled", "bool", False), ("contract_end_date", "date?", None),
              ("last_plan_change_date", "date?", None), ("last_sim_replacement_date", "date?", None),
              ("suspension_start_date", "date?", None)),
    "customers": (("customer_id", "str", REQUIRED), ("full_name", "str", REQUIRED),
                  ("date_of_birth", "str", REQUIRED), ("email", "str", REQUIRED), ("phone_number", "str", REQUIRED),
                  ("address", "address", REQUIRED), ("account_status", "account_status", "Pending Verification"),
                  ("payment_methods", "payment_methods", ()), ("line_ids", "ids", ()), ("bill_ids", "ids", ()),
                  ("created_at", "datetime", REQUIRED), ("last_extension_date", "date?", None),
                  ("goodwill_credit_used_this_year", "float", 0.0)),
    "bills": (("bill_id", "str", REQUIRED), ("customer_id", "str", REQUIRED), ("period_start", "date", REQUIRED),
              ("period_end", "date", REQUIRED), ("issue_date", "date", REQUIRED), ("total_due", "float", REQUIRED),
              ("due_date", "date", REQUIRED), ("line_items", "line_items", ()), ("status", "bill_status", "Draft")),
}
BOOLS = {"is_esim_capable", "activated", "roaming_enabled"}
DATETIMES = {"activation_date", "last_esim_transfer_date", "created_at"}


# ---- rows -> records (tau2 model field order) ------------------------------------------------------

def plan_entity(p: Mapping[str, Any]) -> dict[str, Any]:
    return {f: p[f] for f, _, _ in FIELDS["plans"]}


def device_entity(d: Mapping[str, Any]) -> dict[str, Any]:
    return {f: bool(d[f]) if f in BOOLS else d[f] for f, _, _ in FIELDS["devices"]}


def line_entity(x: Mapping[str, Any]) -> dict[str, Any]:
    return {f: bool(x[f]) if f in BOOLS else x[f] for f, _, _ in FIELDS["lines"]}


def customer_entity(c: Mapping[str, Any], methods: Sequence[Mapping[str, Any]], line_ids: Sequence[str],
                    bill_ids: Sequence[str]) -> dict[str, Any]:
    lists = {"address": {f: c[f] for f in ADDRESS},
             "payment_methods": [{f: m[f] for f in PAYMENT_METHOD} for m in methods],
             "line_ids": list(line_ids), "bill_ids": list(bill_ids)}
    return {f: lists[f] if f in lists else c[f] for f, _, _ in FIELDS["customers"]}


def bill_entity(b: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {f: [{k: i[k] for k in LINE_ITEM} for i in items] if f == "line_items" else b[f]
            for f, _, _ in FIELDS["bills"]}


def to_nested(rows: Mapping[str, Sequence[Sequence[Any]]], model: bool = True) -> dict[str, Any]:
    """The DB from every table's rows (tuples in column order, any row order): model form, or db.toml's."""
    r = {t: tau2_rows.as_dicts(COLUMNS[t], rows[t]) for t in COLUMNS}
    methods, owned_lines, owned_bills = (grouped(r[t], "customer_id")
                                         for t in ("payment_methods", "customer_lines", "customer_bills"))
    items = grouped(r["line_items"], "bill_id")
    db = {
        "plans": [plan_entity(p) for p in by_position(r["plans"])],
        "customers": [customer_entity(c, methods.get(c["customer_id"], []),
                                      [x["line_id"] for x in owned_lines.get(c["customer_id"], [])],
                                      [x["bill_id"] for x in owned_bills.get(c["customer_id"], [])])
                      for c in by_position(r["customers"])],
        "lines": [line_entity(x) for x in by_position(r["lines"])],
        "bills": [bill_entity(b, items.get(b["bill_id"], [])) for b in by_position(r["bills"])],
        "devices": [device_entity(d) for d in by_position(r["devices"])],
    }
    return db if model else {c: [_toml_record(e) for e in db[c]] for c in TOML_ORDER}


def _toml_record(entity: Mapping[str, Any]) -> dict[str, Any]:
    """A record as db.toml writes it: no null fields (TOML has none), datetimes with a `T`."""
    return {k: v.replace(" ", "T") if k in DATETIMES else v for k, v in entity.items() if v is not None}


# ---- nested DB -> rows ---------------------------------------------------------------------------

def from_nested(db: Mapping[str, Any]) -> dict[str, list[Row]]:
    """Rows of every agent-side table from the parsed db.toml (top-level lists in any key order)."""
    check_top_level(db, TOP_LEVEL)
    out: dict[str, list[Row]] = {t: [] for t in COLUMNS}
    for collection in TOP_LEVEL:
        if not isinstance(db[collection], list):
            raise ValueError(f"{collection}: must be a list, got {type(db[collection]).__name__}")
        for pos, record in enumerate(db[collection]):
            values = validated(collection, record, f"{collection}[{pos}]")
            _add_rows(out, collection, pos, values)
    return out


def validated(collection: str, record: Any, where: str) -> dict[str, Any]:
    """One record's fields in tau2's order, checked and defaulted as tau2's loading does."""
    if not isinstance(record, Mapping):
        raise ValueError(f"{where}: must be a table, got {type(record).__name__}")
    fields = FIELDS[collection]
    unknown = sorted(set(record) - {f for f, _, _ in fields})
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}")
    out = {}
    for name, kind, default in fields:
        if name not in record:
            if default is REQUIRED:
                raise ValueError(f"{where}.{name}: field required")
            out[name] = list(default) if isinstance(default, tuple) else default
        else:
            out[name] = _value(kind, record[name], f"{where}.{name}")
    return out


def _value(kind: str, value: Any, where: str) -> Any:
    """A field's value as tau2 holds it, or ValueError naming the field."""
    if kind.endswith("?"):
        return None if value is None else _value(kind[:-1], value, where)
    checks = {"str": lambda v: v if isinstance(v, str) else None,
              "float": lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None,
              "bool": lambda v: v if isinstance(v, bool) else None,
              "date": lambda v: str(v if isinstance(v, date) else date.fromisoformat(v)),
              "datetime": lambda v: str(v if isinstance(v, datetime) else datetime.fromisoformat(v)),
              "address": lambda v: _record(v, ADDRESS), "ids": lambda v: _strings(v),
              "payment_methods": lambda v: [_record(m, PAYMENT_METHOD, "method_type") for m in v],
              "line_items": lambda v: [_line_item(i) for i in v]}
    try:
        got = checks[kind](value) if kind in checks else value if value in ENUMS[kind] else None
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"{where}: {exc}") from exc
    if got is None:
        raise ValueError(f"{where}: invalid value {value!r}")
    return got


def _record(value: Any, fields: Sequence[str], enum_field: str = "") -> dict[str, str] | None:
    if not isinstance(value, Mapping) or set(value) != set(fields) or not all(isinstance(value[f], str)
                                                                              for f in fields):
        raise ValueError(f"fields must be exactly {list(fields)} (text), got {value!r}")
    if enum_field and value[enum_field] not in ENUMS[enum_field]:
        raise ValueError(f"{enum_field} {value[enum_field]!r} is not one of {list(ENUMS[enum_field])}")
    return {f: value[f] for f in fields}


def _strings(value: Any) -> list[str] | None:
    return list(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _line_item(item: Any) -> dict[str, Any]:
    if not isinstance(item, Mapping) or set(item) != set(LINE_ITEM):
        raise ValueError(f"line item fields must be exactly {list(LINE_ITEM)}, got {item!r}")
    return {"description": _value("str", item["description"], "description"),
            "amount": _value("float", item["amount"], "amount"), "date": _value("date", item["date"], "date"),
            "item_type": _value("str", item["item_type"], "item_type")}


def _add_rows(out: dict[str, list[Row]], collection: str, pos: int, v: dict[str, Any]) -> None:
    if collection == "customers":
        cid = v["customer_id"]
        out["payment_methods"].extend({"customer_id": cid, "position": i, **m}
                                      for i, m in enumerate(v.pop("payment_methods")))
        out["customer_lines"].extend({"customer_id": cid, "position": i, "line_id": x}
                                     for i, x in enumerate(v.pop("line_ids")))
        out["customer_bills"].extend({"customer_id": cid, "position": i, "bill_id": x}
                                     for i, x in enumerate(v.pop("bill_ids")))
        v.update(v.pop("address"))
    elif collection == "bills":
        out["line_items"].extend({"bill_id": v["bill_id"], "position": i, **item}
                                 for i, item in enumerate(v.pop("line_items")))
    out[collection].append({**v, "position": pos})
