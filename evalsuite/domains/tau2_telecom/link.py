"""The sync step of dual control (TOOLS_SPEC.md §9.2): after every successful call on either world, every set-up
step and every assertion, the phone's surroundings learn the state of its line, and a payment request or payment
crosses between the carrier's records and the phone.

`LINK(agent_ctx, user_ctx)` reads the agent's world and writes the phone's
surroundings (and a paid bill back to the agent's world); it does nothing until
the phone has a number (set_user_info). It reads only the surroundings row of
the phone's world and writes only cells that change: it runs after every call.
"""
from __future__ import annotations

from evalsuite.domains.tau2.rows import as_dicts
from evalsuite.domains.tau2_telecom import store
from evalsuite.domains.tau2_telecom.schema import USER_COLUMNS, user_select_sql
from evalsuite.worlds.domain import ToolContext, ToolError

_SURROUNDINGS = user_select_sql("surroundings")
# The customer's first bill awaiting payment, in bill id order (every listed bill exists: no tool removes one).
_AWAITING = ("SELECT b.bill_id, b.total_due FROM customer_bills cb JOIN bills b ON b.bill_id = cb.bill_id "
             "WHERE cb.customer_id = ? AND b.status = 'Awaiting Payment' ORDER BY cb.position LIMIT 1")


def LINK(agent_ctx: ToolContext, user_ctx: ToolContext) -> None:  # noqa: N802 - the name the registry looks up
    """One sync step, in §9.2's order."""
    before = as_dicts(USER_COLUMNS["surroundings"], user_ctx.db.execute(_SURROUNDINGS).fetchall())[0]
    number = before["phone_number"]
    if number is None:
        return
    db = agent_ctx.db
    found = store.rows(db, "line_by_phone", number) if isinstance(number, str) else []
    if not found:
        raise ToolError(f"Line with phone number {number} not found")
    line = found[0]
    plan = store.get_plan(db, line["plan_id"])
    s = {**before, "line_active": line["status"] == "Active", "roaming_allowed": bool(line["roaming_enabled"]),
         "mobile_data_usage_exceeded": line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]}
    if s["request_bill_id"] is not None and s["request_paid"]:
        bill = store.get_bill(db, s["request_bill_id"])
        store.update(agent_ctx, "bills", "bill_id", bill["bill_id"], status="Paid")
        s.update(request_bill_id=None, request_amount_due=None, request_paid=None)
    if s["request_bill_id"] is None:
        customer = store.customer_by_phone(db, number)
        awaiting = db.execute(_AWAITING, (customer["customer_id"],)).fetchone()
        if awaiting is not None:
            s.update(request_bill_id=awaiting[0], request_amount_due=awaiting[1], request_paid=False)
    changed = {c: v for c, v in s.items() if v != before[c]}
    if changed:
        store.update(user_ctx, "surroundings", "id", s["id"], **changed)
