"""Data access for the telecom agent tools, helpers and the link step: tau2's lookups (TOOLS_SPEC.md §6) with their
exact error texts, record reads, and the few shared writes, in plain SQL on a SQLite connection.

tau2 keeps its records in lists and looks an id up by scanning for the first
equal one: an id of another type simply matches nothing (never a TypeError),
and the message shows the value as given. Reads take the connection itself
(a tool's `ctx.db`, a check's end state); writes go through the tool context so
the call counts its rows.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from evalsuite.domains.tau2.rows import Row, as_dicts
from evalsuite.domains.tau2_telecom import convert
from evalsuite.domains.tau2_telecom.schema import COLUMNS, select_sql
from evalsuite.worlds.domain import ToolContext, ToolError

_SQL = {
    "customer": select_sql("customers", "customer_id = ?"),
    "line": select_sql("lines", "line_id = ?"),
    "plan": select_sql("plans", "plan_id = ?"),
    "device": select_sql("devices", "device_id = ?"),
    "bill": select_sql("bills", "bill_id = ?"),
    "customers": select_sql("customers", order="position"),
    "line_by_phone": select_sql("lines", "phone_number = ?", "position"),
    "methods": select_sql("payment_methods", "customer_id = ?", "position"),
    "items": select_sql("line_items", "bill_id = ?", "position"),
    "line_ids": "SELECT line_id FROM customer_lines WHERE customer_id = ? ORDER BY position",
    "bill_ids": "SELECT bill_id FROM customer_bills WHERE customer_id = ? ORDER BY position",
}
_TABLE = {"customer": "customers", "line": "lines", "plan": "plans", "device": "devices", "bill": "bills",
          "customers": "customers", "line_by_phone": "lines", "methods": "payment_methods", "items": "line_items"}


def rows(db: sqlite3.Connection, query: str, *params: Any) -> list[Row]:
    return as_dicts(COLUMNS[_TABLE[query]], db.execute(_SQL[query], params).fetchall())


def ids(db: sqlite3.Connection, query: str, owner: str) -> list[str]:
    return [r[0] for r in db.execute(_SQL[query], (owner,))]


def _lookup(db: sqlite3.Connection, kind: str, value: Any, message: str) -> Row:
    found = rows(db, kind, value) if isinstance(value, str) else []
    if not found:
        raise ToolError(message)
    return found[0]


# ---- the shared lookups (§6) ---------------------------------------------------------------------

def get_customer(db: sqlite3.Connection, customer_id: Any) -> Row:
    return _lookup(db, "customer", customer_id, f"Customer with ID {customer_id} not found")


def get_line(db: sqlite3.Connection, line_id: Any) -> Row:
    return _lookup(db, "line", line_id, f"Line with ID {line_id} not found")


def get_plan(db: sqlite3.Connection, plan_id: Any) -> Row:
    return _lookup(db, "plan", plan_id, f"Plan with ID {plan_id} not found")


def get_device(db: sqlite3.Connection, device_id: Any) -> Row:
    return _lookup(db, "device", device_id, f"Device with ID {device_id} not found")


def get_bill(db: sqlite3.Connection, bill_id: Any) -> Row:
    return _lookup(db, "bill", bill_id, f"Bill with ID {bill_id} not found")


def line_of_customer(db: sqlite3.Connection, customer_id: Any, line_id: Any) -> tuple[Row, Row]:
    """(customer, line): the customer, then the line among its line ids, then the line itself."""
    customer = get_customer(db, customer_id)
    if line_id not in ids(db, "line_ids", customer["customer_id"]):
        raise ToolError(f"Line {line_id} not found for customer {customer_id}")
    return customer, get_line(db, line_id)


def customer_by_phone(db: sqlite3.Connection, phone_number: Any) -> Row:
    """§6.1: the first customer whose own number, or one of whose lines' numbers (line id order), matches."""
    for customer in rows(db, "customers"):
        if customer["phone_number"] == phone_number:
            return customer
        for line_id in ids(db, "line_ids", customer["customer_id"]):
            if get_line(db, line_id)["phone_number"] == phone_number:
                return customer
    raise ToolError(f"Customer with phone number {phone_number} not found")


def customer_bills(db: sqlite3.Connection, customer_id: str) -> list[Row]:
    """The customer's bills in bill id order (a missing one is the bill lookup's error)."""
    return [get_bill(db, b) for b in ids(db, "bill_ids", customer_id)]


# ---- records as tau2 returns them ----------------------------------------------------------------

def customer_record(db: sqlite3.Connection, customer: Row) -> dict[str, Any]:
    cid = customer["customer_id"]
    return convert.customer_entity(customer, rows(db, "methods", cid), ids(db, "line_ids", cid),
                                   ids(db, "bill_ids", cid))


def bill_record(db: sqlite3.Connection, bill: Row) -> dict[str, Any]:
    return convert.bill_entity(bill, rows(db, "items", bill["bill_id"]))


# ---- shared writes -------------------------------------------------------------------------------

def update(ctx: ToolContext, table: str, key: str, value: str, **cells: Any) -> None:
    """Set some cells of one row, found by its id column."""
    ctx.run(f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in cells)} WHERE {key} = ?", [*cells.values(), value])


def append(ctx: ToolContext, table: str, owner: tuple[str, str] | None, values: dict[str, Any]) -> None:
    """Insert a row at the end of its list: of the whole table, or of its owner's rows (`owner` = (column, id))."""
    where, params = (f" WHERE {owner[0]} = ?", (owner[1],)) if owner else ("", ())
    position = ctx.db.execute(f"SELECT COALESCE(MAX(position) + 1, 0) FROM {table}{where}", params).fetchone()[0]
    row = {**({owner[0]: owner[1]} if owner else {}), "position": position, **values}
    ctx.run(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", list(row.values()))


def new_bill(ctx: ToolContext, customer_id: str, bill: dict[str, Any], items: Sequence[dict[str, Any]]) -> None:
    """Append a bill (fields as FIELDS["bills"] less line_items) to the bills and to the customer's bill ids."""
    if rows(ctx.db, "bill", bill["bill_id"]):
        raise ToolError(f"Bill {bill['bill_id']} already exists (tau2 would add a second record with that id; "
                        "this world keys bills by id)")
    append(ctx, "bills", None, bill)
    append(ctx, "customer_bills", ("customer_id", customer_id), {"bill_id": bill["bill_id"]})
    for item in items:
        append(ctx, "line_items", ("bill_id", bill["bill_id"]), item)
