"""The sync step of dual control (TOOLS_SPEC.md §9.2): after every successful call on either world, every set-up
step and every assertion, the phone's surroundings learn the state of its line, and a payment request or payment
crosses between the carrier's records and the phone.

`LINK(agent_ctx, user_ctx)` reads the agent's world and writes the phone's
surroundings (and a paid bill back to the agent's world); it does nothing until
the phone has a number (set_user_info). It writes only cells that change.
"""
from __future__ import annotations

from evalsuite.domains.tau2_telecom import store
from evalsuite.domains.tau2_telecom.phone import Phone
from evalsuite.worlds.domain import ToolContext, ToolError


def LINK(agent_ctx: ToolContext, user_ctx: ToolContext) -> None:  # noqa: N802 - the name the registry looks up
    """One sync step, in §9.2's order."""
    ph = Phone.load(user_ctx.db)
    number = ph.s["phone_number"]
    if number is None:
        return
    db = agent_ctx.db
    found = store.rows(db, "line_by_phone", number) if isinstance(number, str) else []
    if not found:
        raise ToolError(f"Line with phone number {number} not found")
    line = found[0]
    plan = store.get_plan(db, line["plan_id"])
    ph.s.update(line_active=line["status"] == "Active", roaming_allowed=bool(line["roaming_enabled"]),
                mobile_data_usage_exceeded=line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"])
    if ph.s["request_bill_id"] is not None and ph.s["request_paid"]:
        bill = store.get_bill(db, ph.s["request_bill_id"])
        store.update(agent_ctx, "bills", "bill_id", bill["bill_id"], status="Paid")
        ph.s.update(request_bill_id=None, request_amount_due=None, request_paid=None)
    if ph.s["request_bill_id"] is None:
        customer = store.customer_by_phone(db, number)
        awaiting = next((b for b in store.customer_bills(db, customer["customer_id"])
                         if b["status"] == "Awaiting Payment"), None)
        if awaiting is not None:
            ph.s.update(request_bill_id=awaiting["bill_id"], request_amount_due=awaiting["total_due"],
                        request_paid=False)
    ph.save(user_ctx)
