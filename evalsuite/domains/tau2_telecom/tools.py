"""The telecom agent tools (the carrier's side), behaving as TOOLS_SPEC.md §4 and §6 describe.

13 tools: 6 read, 6 write and the generic transfer. Arguments are taken raw
(see evalsuite.domains.tau2.tools): a missing or unexpected keyword is Python's
TypeError naming `TelecomTools.<tool>`, a badly typed value fails where Python
fails on it, with Python's text. The four tools tau2 answers with a plain dict
(`get_data_usage`, `suspend_line`, `resume_line`, `refuel_data`) give their
numbers as strings, as tau2 prints them; records keep real numbers. Dates come
from the world's clock (2025-02-25), never the machine's.
"""
from __future__ import annotations

import calendar
import uuid
from datetime import date, timedelta
from typing import Any

from evalsuite.core.records import Check
from evalsuite.domains.tau2.tools import add_generic_tools, agent_role, python_error, registrar
from evalsuite.domains.tau2_telecom import convert, store
from evalsuite.domains.tau2_telecom.schema import CLOCK, metadata
from evalsuite.worlds.domain import CheckInput, Domain, ToolContext, ToolError

DOMAIN = Domain(name="tau2_telecom", version="1.0.0", metadata=metadata, clock=CLOCK,
                handoff_tools=frozenset({"transfer_to_human_agents"}))
_tool = registrar(DOMAIN, "TelecomTools")
_DETAILS = {"L": ("line", store.get_line), "D": ("device", store.get_device), "B": ("bill", store.get_bill),
            "C": ("customer", store.get_customer), "P": ("plan", store.get_plan)}


def month_end(day: date) -> date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def next_month(day: date) -> date:
    """The first day of the month after `day`'s."""
    return month_end(day) + timedelta(days=1)


# ---- read tools ----------------------------------------------------------------------------------

@_tool("read")
def get_customer_by_phone(ctx: ToolContext, /, phone_number):
    """Find a customer by a phone number: their primary contact number or the number of one of their lines.
    Arguments: phone_number (str, e.g. '555-123-2002')."""
    return store.customer_record(ctx.db, store.customer_by_phone(ctx.db, phone_number))


@_tool("read")
def get_customer_by_id(ctx: ToolContext, /, customer_id):
    """A customer's record by id. Arguments: customer_id (str, e.g. 'C1001')."""
    return store.customer_record(ctx.db, store.get_customer(ctx.db, customer_id))


@_tool("read")
def get_customer_by_name(ctx: ToolContext, /, full_name, dob):
    """Every customer with this full name (any case) and date of birth; [] when none.
    Arguments: full_name (str), dob (str, 'YYYY-MM-DD')."""
    if not isinstance(full_name, str):
        raise ToolError(f"'{type(full_name).__name__}' object has no attribute 'lower'")
    return [store.customer_record(ctx.db, c) for c in store.rows(ctx.db, "customers")
            if c["full_name"].lower() == full_name.lower() and c["date_of_birth"] == dob]


@_tool("read")
def get_details_by_id(ctx: ToolContext, /, id):  # noqa: A002 - tau2's argument name
    """The record of any id: a line (L…), device (D…), bill (B…), customer (C…) or plan (P…).
    Arguments: id (str)."""
    if not isinstance(id, str):
        raise ToolError(f"'{type(id).__name__}' object has no attribute 'startswith'")
    kind, lookup = _DETAILS.get(id[:1], (None, None))
    if lookup is None:
        raise ToolError(f"Unknown ID format or type: {id}")
    found = lookup(ctx.db, id)
    if kind == "customer":
        return store.customer_record(ctx.db, found)
    if kind == "bill":
        return store.bill_record(ctx.db, found)
    return {"line": convert.line_entity, "device": convert.device_entity, "plan": convert.plan_entity}[kind](found)


@_tool("read")
def get_bills_for_customer(ctx: ToolContext, /, customer_id, limit=12):
    """A customer's bills, newest issue date first, at most `limit` of them.
    Arguments: customer_id (str), limit (int, default 12)."""
    customer = store.get_customer(ctx.db, customer_id)
    bills = sorted(store.customer_bills(ctx.db, customer["customer_id"]), key=lambda b: b["issue_date"],
                   reverse=True)
    try:
        kept = bills[:limit]
    except TypeError as exc:
        raise python_error(exc) from exc
    return [store.bill_record(ctx.db, b) for b in kept]


@_tool("read")
def get_data_usage(ctx: ToolContext, /, customer_id, line_id):
    """A line's data used, plan limit and refuelled data this cycle, and the cycle's end date.
    Arguments: customer_id (str), line_id (str)."""
    _, line = store.line_of_customer(ctx.db, customer_id, line_id)
    plan = store.get_plan(ctx.db, line["plan_id"])
    return {"line_id": line_id, "data_used_gb": str(line["data_used_gb"]), "data_limit_gb": str(plan["data_limit_gb"]),
            "data_refueling_gb": str(line["data_refueling_gb"]), "cycle_end_date": str(month_end(ctx.now.date()))}


add_generic_tools(_tool, calculate=False)


# ---- write tools ---------------------------------------------------------------------------------

@_tool("write")
def suspend_line(ctx: ToolContext, /, customer_id, line_id, reason):
    """Suspend an active line. Arguments: customer_id (str), line_id (str), reason (str)."""
    _, line = store.line_of_customer(ctx.db, customer_id, line_id)
    if line["status"] != "Active":
        raise ToolError("Line must be active to suspend")
    store.update(ctx, "lines", "line_id", line["line_id"], status="Suspended",
                 suspension_start_date=str(ctx.now.date()))
    return {"message": "Line suspended successfully. $5/month holding fee will apply.",
            "line": convert.line_entity(store.get_line(ctx.db, line["line_id"]))}


@_tool("write")
def resume_line(ctx: ToolContext, /, customer_id, line_id):
    """Resume a suspended (or pending) line. Arguments: customer_id (str), line_id (str)."""
    _, line = store.line_of_customer(ctx.db, customer_id, line_id)
    if line["status"] not in ("Suspended", "Pending Activation"):
        raise ToolError("Line must be suspended to resume")
    store.update(ctx, "lines", "line_id", line["line_id"], status="Active", suspension_start_date=None)
    return {"message": "Line resumed successfully",
            "line": convert.line_entity(store.get_line(ctx.db, line["line_id"]))}


@_tool("write")
def send_payment_request(ctx: ToolContext, /, customer_id, bill_id):
    """Send the customer a request to pay one of their bills (it then awaits payment).
    Arguments: customer_id (str), bill_id (str)."""
    customer = store.get_customer(ctx.db, customer_id)
    cid = customer["customer_id"]
    if any(b["status"] == "Awaiting Payment" for b in store.customer_bills(ctx.db, cid)):
        raise ToolError("A bill is already awaiting payment for this customer")
    if bill_id not in store.ids(ctx.db, "bill_ids", cid):
        raise ToolError(f"Bill {bill_id} not found for customer {customer_id}")
    bill = store.get_bill(ctx.db, bill_id)
    store.update(ctx, "bills", "bill_id", bill["bill_id"], status="Awaiting Payment")
    return f"Payment request sent to the customer for bill {bill_id}"


def _set_roaming(ctx: ToolContext, customer_id: Any, line_id: Any, on: bool) -> str:
    _, line = store.line_of_customer(ctx.db, customer_id, line_id)
    word = "enabled" if on else "disabled"
    if bool(line["roaming_enabled"]) == on:
        return f"Roaming was already {word}"
    store.update(ctx, "lines", "line_id", line["line_id"], roaming_enabled=on)
    return f"Roaming {word} successfully"


@_tool("write")
def enable_roaming(ctx: ToolContext, /, customer_id, line_id):
    """Allow roaming on a line. Arguments: customer_id (str), line_id (str)."""
    return _set_roaming(ctx, customer_id, line_id, True)


@_tool("write")
def disable_roaming(ctx: ToolContext, /, customer_id, line_id):
    """Stop roaming on a line. Arguments: customer_id (str), line_id (str)."""
    return _set_roaming(ctx, customer_id, line_id, False)


@_tool("write")
def refuel_data(ctx: ToolContext, /, customer_id, line_id, gb_amount):
    """Add data to a line for this cycle, charged to the customer's draft bill at the plan's price per GB.
    Arguments: customer_id (str), line_id (str), gb_amount (number of GB, > 0)."""
    customer, line = store.line_of_customer(ctx.db, customer_id, line_id)
    try:
        refused = gb_amount <= 0
    except TypeError as exc:
        raise python_error(exc) from exc
    if refused:
        raise ToolError("Refuel amount must be positive")
    price = store.get_plan(ctx.db, line["plan_id"])["data_refueling_price_per_gb"]
    charge = gb_amount * price
    refuelled = line["data_refueling_gb"] + gb_amount
    store.update(ctx, "lines", "line_id", line["line_id"], data_refueling_gb=refuelled)
    item = {"description": f"Data refueling: {gb_amount} GB at ${price}/GB", "amount": charge,
            "date": str(ctx.now.date()), "item_type": "Credit" if charge < 0 else "Charge"}
    _charge_draft_bill(ctx, customer["customer_id"], item)
    return {"message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
            "new_data_refueling_gb": str(refuelled), "charge": str(charge)}


def _charge_draft_bill(ctx: ToolContext, customer_id: str, item: dict[str, Any]) -> None:
    """Add the item to the customer's first draft bill, a new one (random id, next month) when there is none."""
    draft = next((b for b in store.customer_bills(ctx.db, customer_id) if b["status"] == "Draft"), None)
    if draft is None:
        start = next_month(ctx.now.date())
        draft = {"bill_id": f"B{uuid.uuid4().hex[:8].upper()}", "customer_id": customer_id,
                 "period_start": str(start), "period_end": str(month_end(start)), "issue_date": str(start),
                 "total_due": 0.0, "due_date": str(start + timedelta(days=14)), "status": "Draft"}
        store.new_bill(ctx, customer_id, draft, [])
    store.append(ctx, "line_items", ("bill_id", draft["bill_id"]), item)
    store.update(ctx, "bills", "bill_id", draft["bill_id"], total_due=draft["total_due"] + item["amount"])


ROLE = agent_role(DOMAIN, "telecom_agent")


@DOMAIN.check
def handed_off(inp: CheckInput) -> Check:
    """The agent transferred the customer to a human agent: what resolves an issue nothing on record can fix (a
    PIN-locked SIM, an ended contract), τ²-bench's lone gold action there."""
    ok = any(e.tool in DOMAIN.handoff_tools and e.outcome == "ok" for e in inp.trace)
    return Check.outcome(ok, "" if ok else "no transfer to a human agent")
