"""The carrier-side helpers (TOOLS_SPEC.md §7): what tasks' set-up calls on the agent's world, and the assertions
tau2 grades with there (each also a domain check). No participant can call them.
"""
from __future__ import annotations

import sqlite3
from datetime import timedelta

from evalsuite.domains.tau2_telecom import store
from evalsuite.domains.tau2_telecom.assertions import assertion
from evalsuite.domains.tau2_telecom.tools import DOMAIN, month_end
from evalsuite.worlds.domain import ToolContext, ToolError

OWNER = "TelecomTools"
_assertion = assertion(DOMAIN, OWNER)


def _helper(fn):
    fn.__qualname__ = f"{OWNER}.{fn.__name__}"
    return DOMAIN.helper(fn)


@_helper
def set_data_usage(ctx: ToolContext, /, customer_id, line_id, data_used_gb):
    """Set a line's data used this cycle."""
    _, line = store.line_of_customer(ctx.db, customer_id, line_id)
    store.update(ctx, "lines", "line_id", line["line_id"], data_used_gb=data_used_gb)
    return f"Data usage set to {data_used_gb} GB for line {line_id}"


@_helper
def suspend_line_for_overdue_bill(ctx: ToolContext, /, customer_id, line_id, new_bill_id, contract_ended):
    """Suspend an active line for an unpaid bill: a new Overdue bill of the plan's monthly price, dated last month
    (and, if `contract_ended`, the contract ended last month)."""
    customer, line = store.line_of_customer(ctx.db, customer_id, line_id)
    if line["status"] != "Active":
        raise ToolError("Line must be active to suspend for unpaid bill")
    price = store.get_plan(ctx.db, line["plan_id"])["price_per_month"]
    if price <= 0:
        raise ToolError("Plan price must be positive")
    cid = customer["customer_id"]
    if any(b["status"] == "Overdue" for b in store.customer_bills(ctx.db, cid)):
        raise ToolError("Customer already has an overdue bill")
    today = ctx.now.date()
    last_month_end = today.replace(day=1) - timedelta(days=1)
    start = last_month_end.replace(day=1)
    bill = {"bill_id": new_bill_id, "customer_id": cid, "period_start": str(start),
            "period_end": str(month_end(start)), "issue_date": str(start), "total_due": price,
            "due_date": str(start + timedelta(days=14)), "status": "Overdue"}
    item = {"description": f"Charge for line {line_id}", "amount": price, "date": str(today), "item_type": "Charge"}
    store.new_bill(ctx, cid, bill, [item])
    cells = {"status": "Suspended", "suspension_start_date": str(today)}
    if contract_ended:
        cells["contract_end_date"] = str(last_month_end)
    store.update(ctx, "lines", "line_id", line["line_id"], **cells)
    return f"Line {line_id} suspended for unpaid bill {new_bill_id}"


@_assertion
def assert_line_status(db: sqlite3.Connection, /, customer_id, line_id, expected_status) -> bool:
    """The line's status is `expected_status`."""
    return store.line_of_customer(db, customer_id, line_id)[1]["status"] == expected_status


@_assertion
def assert_overdue_bill_exists(db: sqlite3.Connection, /, customer_id, overdue_bill_id) -> bool:
    """The bill is the customer's and Overdue (else an error)."""
    customer = store.get_customer(db, customer_id)
    if overdue_bill_id not in store.ids(db, "bill_ids", customer["customer_id"]):
        raise ToolError(f"Bill {overdue_bill_id} not found for customer {customer_id}")
    if store.get_bill(db, overdue_bill_id)["status"] != "Overdue":
        raise ToolError(f"Bill {overdue_bill_id} is not overdue")
    return True


@_assertion
def assert_no_overdue_bill(db: sqlite3.Connection, /, overdue_bill_id) -> bool:
    """No bill has this id, or it is Paid."""
    found = store.rows(db, "bill", overdue_bill_id) if isinstance(overdue_bill_id, str) else []
    return not found or found[0]["status"] == "Paid"


@_assertion
def assert_data_refueling_amount(db: sqlite3.Connection, /, customer_id, line_id, expected_amount) -> bool:
    """The line's refuelled data equals `expected_amount` (within 1e-6 GB)."""
    return abs(store.line_of_customer(db, customer_id, line_id)[1]["data_refueling_gb"] - expected_amount) < 1e-6
