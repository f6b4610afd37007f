"""tau2's nested retail DB (db.json) <-> rows of our tables, both directions, exactly.

`from_nested` gives rows ready for `World.build` and for Parquet (JSON columns
as json.dumps text). `to_nested` reads rows as SQLite returns them (tuples in
table column order, JSON columns as text, booleans as 0/1) and rebuilds the nested dict with
db.json's key order, so `json.dumps(to_nested(rows), indent=4)` reproduces
db.json byte for byte. The entity builders are shared with the tools, so a tool
result and an exported state can never disagree on shape.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalsuite.domains.tau2 import rows as tau2_rows
from evalsuite.domains.tau2.rows import Row, by_position, check_keyed, check_top_level, grouped
from evalsuite.domains.tau2.rows import json_cell as _json
from evalsuite.domains.tau2_retail.schema import ADDRESS_FIELDS, COLUMNS, JSON_COLUMNS, ORDER_OPTIONAL

TOP_LEVEL = ("products", "users", "orders")
_PM_FIELDS = {"credit_card": ("brand", "last_four"), "gift_card": ("balance",), "paypal": ()}
_FIELDS = {
    "product": {"name", "product_id", "variants"},
    "variant": {"item_id", "options", "available", "price"},
    "user": {"user_id", "name", "address", "email", "payment_methods", "orders"},
    "order": {"order_id", "user_id", "address", "items", "status", "fulfillments", "payment_history"},
    "order_item": {"name", "product_id", "item_id", "price", "options"},
    "fulfillment": {"tracking_id", "item_ids"},
    "payment": {"transaction_type", "amount", "payment_method_id"},
}


# ---- rows -> entities (tau2 model field order) -------------------------------------------------

# The columns the builders below read of a part row (a variant, payment method, order line, fulfillment or
# payment). A tool reading an entity selects just these (store.py): the owner ids and positions it would skip
# cost as much to read and put in a dict as the values the entity holds.
PART_COLUMNS = {
    "variants": ("item_id", "options", "available", "price"),
    "payment_methods": ("source", "id", "brand", "last_four", "balance"),
    "order_items": ("name", "product_id", "item_id", "price", "options"),
    "fulfillments": ("tracking_ids", "item_ids"),
    "payments": ("transaction_type", "amount", "payment_method_id"),
}


def address(row: Mapping[str, Any]) -> dict[str, str]:
    return {f: row[f] for f in ADDRESS_FIELDS}


def variant_entity(v: Mapping[str, Any]) -> dict[str, Any]:
    return {"item_id": v["item_id"], "options": _json(v["options"]), "available": bool(v["available"]),
            "price": v["price"]}


def product_entity(p: Mapping[str, Any], variants: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {"name": p["name"], "product_id": p["product_id"],
            "variants": {v["item_id"]: variant_entity(v) for v in variants}}


def payment_method_entity(pm: Mapping[str, Any]) -> dict[str, Any]:
    out = {"source": pm["source"], "id": pm["id"]}
    for f in _PM_FIELDS[pm["source"]]:
        out[f] = pm[f]
    return out


def user_entity(u: Mapping[str, Any], methods: Iterable[Mapping[str, Any]], order_ids: Iterable[str]) -> dict[str, Any]:
    return {"user_id": u["user_id"], "name": {"first_name": u["first_name"], "last_name": u["last_name"]},
            "address": address(u), "email": u["email"],
            "payment_methods": {pm["id"]: payment_method_entity(pm) for pm in methods}, "orders": list(order_ids)}


def order_entity(o: Mapping[str, Any], items: Iterable[Mapping[str, Any]], fulfillments: Iterable[Mapping[str, Any]],
                 payments: Iterable[Mapping[str, Any]], optional_nulls: bool = True) -> dict[str, Any]:
    """The Order; with `optional_nulls` False, null optional fields are left out as in db.json."""
    out = {
        "order_id": o["order_id"], "user_id": o["user_id"], "address": address(o),
        "items": [{"name": i["name"], "product_id": i["product_id"], "item_id": i["item_id"], "price": i["price"],
                   "options": _json(i["options"])} for i in items],
        "status": o["status"],
        "fulfillments": [{"tracking_id": _json(f["tracking_ids"]), "item_ids": _json(f["item_ids"])}
                         for f in fulfillments],
        "payment_history": [{"transaction_type": p["transaction_type"], "amount": p["amount"],
                             "payment_method_id": p["payment_method_id"]} for p in payments],
    }
    for f in ORDER_OPTIONAL:
        value = _json(o[f]) if f in JSON_COLUMNS["orders"] else o[f]
        if value is not None or optional_nulls:
            out[f] = value
    return out


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


# ---- rows -> nested DB -------------------------------------------------------------------------

def to_nested(rows: Mapping[str, Sequence[Sequence[Any]]], optional_nulls: bool = False) -> dict[str, Any]:
    """Rebuild the DB from every table's rows (tuples in column order, any row order)."""
    r = {t: tau2_rows.as_dicts(COLUMNS[t], rows[t]) for t in COLUMNS}
    variants = grouped(r["variants"], "product_id")
    methods = grouped(r["payment_methods"], "user_id")
    user_orders = grouped(r["user_orders"], "user_id")
    items, fulfil, pays = (grouped(r[t], "order_id") for t in ("order_items", "fulfillments", "payments"))
    return {
        "products": {p["product_id"]: product_entity(p, variants.get(p["product_id"], []))
                     for p in by_position(r["products"])},
        "users": {u["user_id"]: user_entity(u, methods.get(u["user_id"], []),
                                            [x["order_id"] for x in user_orders.get(u["user_id"], [])])
                  for u in by_position(r["users"])},
        "orders": {o["order_id"]: order_entity(o, items.get(o["order_id"], []), fulfil.get(o["order_id"], []),
                                               pays.get(o["order_id"], []), optional_nulls)
                   for o in by_position(r["orders"])},
    }


# ---- nested DB -> rows -------------------------------------------------------------------------

def _check(obj: Mapping[str, Any], kind: str, where: str, optional: Iterable[str] = ()) -> None:
    tau2_rows.check_fields(obj, kind, _FIELDS[kind], where, optional)


def from_nested(db: Mapping[str, Any]) -> dict[str, list[Row]]:
    """Rows of every table from the nested DB; positions record map and list order."""
    check_top_level(db, TOP_LEVEL)
    out: dict[str, list[Row]] = {t: [] for t in COLUMNS}
    for pos, (pid, p) in enumerate(db["products"].items()):
        _check(p, "product", f"products[{pid}]")
        check_keyed(pid, p["product_id"], f"products[{pid}]")
        out["products"].append({"product_id": pid, "position": pos, "name": p["name"]})
        for vpos, (iid, v) in enumerate(p["variants"].items()):
            _check(v, "variant", f"products[{pid}].variants[{iid}]")
            check_keyed(iid, v["item_id"], f"products[{pid}].variants[{iid}]")
            out["variants"].append({"item_id": iid, "product_id": pid, "position": vpos, "available": v["available"],
                                    "price": v["price"], "options": json.dumps(v["options"])})
    for pos, (uid, u) in enumerate(db["users"].items()):
        _user_rows(out, pos, uid, u)
    for pos, (oid, o) in enumerate(db["orders"].items()):
        _order_rows(out, pos, oid, o)
    return out


def _user_rows(out: dict[str, list[Row]], pos: int, uid: str, u: Mapping[str, Any]) -> None:
    where = f"users[{uid}]"
    _check(u, "user", where)
    check_keyed(uid, u["user_id"], where)
    out["users"].append({"user_id": uid, "position": pos, "first_name": u["name"]["first_name"],
                         "last_name": u["name"]["last_name"], "email": u["email"], **address(u["address"])})
    for mpos, (mid, m) in enumerate(u["payment_methods"].items()):
        check_keyed(mid, m["id"], f"{where}.payment_methods[{mid}]")
        extra = _PM_FIELDS.get(m.get("source"))
        if extra is None or set(m) != {"source", "id", *extra}:
            raise ValueError(f"{where}.payment_methods[{mid}]: fields {sorted(m)} "
                             f"do not fit source {m.get('source')!r}")
        out["payment_methods"].append({"id": mid, "user_id": uid, "position": mpos, "source": m["source"],
                                       "brand": m.get("brand"), "last_four": m.get("last_four"),
                                       "balance": m.get("balance")})
    out["user_orders"].extend({"user_id": uid, "position": i, "order_id": oid} for i, oid in enumerate(u["orders"]))


def _order_rows(out: dict[str, list[Row]], pos: int, oid: str, o: Mapping[str, Any]) -> None:
    where = f"orders[{oid}]"
    _check(o, "order", where, optional=ORDER_OPTIONAL)
    check_keyed(oid, o["order_id"], where)
    out["orders"].append({"order_id": oid, "position": pos, "user_id": o["user_id"], **address(o["address"]),
                          "status": o["status"], **{f: _dumps(o.get(f)) if f in JSON_COLUMNS["orders"] else o.get(f)
                                                   for f in ORDER_OPTIONAL}})
    for i, it in enumerate(o["items"]):
        _check(it, "order_item", f"{where}.items[{i}]")
        out["order_items"].append({"order_id": oid, "position": i, "item_id": it["item_id"],
                                   "product_id": it["product_id"], "name": it["name"], "price": it["price"],
                                   "options": json.dumps(it["options"])})
    for i, f in enumerate(o["fulfillments"]):
        _check(f, "fulfillment", f"{where}.fulfillments[{i}]")
        out["fulfillments"].append({"order_id": oid, "position": i, "tracking_ids": json.dumps(f["tracking_id"]),
                                    "item_ids": json.dumps(f["item_ids"])})
    for i, p in enumerate(o["payment_history"]):
        _check(p, "payment", f"{where}.payment_history[{i}]")
        out["payments"].append({"order_id": oid, "position": i, "transaction_type": p["transaction_type"],
                                "amount": p["amount"], "payment_method_id": p["payment_method_id"]})
