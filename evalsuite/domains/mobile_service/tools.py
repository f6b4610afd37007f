"""The carrier agent's tools (reads and writes on customers, lines, plans and bills) and the domain checks."""
from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select, update

from evalsuite.core.records import Check, Role
from evalsuite.domains.mobile_service import schema as s
from evalsuite.grading.grader import output_present
from evalsuite.worlds.domain import CheckInput, Domain, ToolContext, ToolError, mapping_rows

DOMAIN = Domain(name="mobile_service", version="1.0.0", metadata=s.metadata)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LineArgs(Args):
    line_id: str


class CustomerArgs(Args):
    customer_id: str


class PlanArgs(Args):
    plan_id: str


class NoArgs(Args):
    pass


class BillArgs(Args):
    bill_id: str


class RefuelArgs(Args):
    line_id: str
    gb: int = Field(ge=1, le=10)


class ChangePlanArgs(Args):
    line_id: str
    plan_id: str


def _one(ctx: ToolContext, table, column, value) -> dict:
    found = mapping_rows(ctx.execute(select(table).where(column == value)))
    if not found:
        raise ToolError(f"{table.name[:-1]} {value} not found")
    return _money_as_text(found[0])


def _money_as_text(row: dict) -> dict:
    return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in row.items()}


@DOMAIN.tool("read")
def get_customer(ctx: ToolContext, args: CustomerArgs) -> dict:
    """The customer's account and the ids of their lines."""
    out = _one(ctx, s.customers, s.customers.c.customer_id, args.customer_id)
    lines = ctx.execute(select(s.lines.c.line_id).where(s.lines.c.customer_id == args.customer_id))
    out["line_ids"] = list(lines.scalars())
    return out


@DOMAIN.tool("read")
def get_line(ctx: ToolContext, args: LineArgs) -> dict:
    """A line: plan, status (active or suspended), roaming, data used and data refuelled this month (GB)."""
    return _one(ctx, s.lines, s.lines.c.line_id, args.line_id)


@DOMAIN.tool("read")
def get_plan(ctx: ToolContext, args: PlanArgs) -> dict:
    """A plan: monthly data allowance (GB), monthly fee and the price of one GB of refuelled data."""
    return _one(ctx, s.plans, s.plans.c.plan_id, args.plan_id)


@DOMAIN.tool("read")
def list_plans(ctx: ToolContext, args: NoArgs) -> list[dict]:
    """Every plan on offer."""
    return [_money_as_text(r) for r in mapping_rows(ctx.execute(select(s.plans).order_by(s.plans.c.plan_id)))]


@DOMAIN.tool("read")
def get_bills(ctx: ToolContext, args: LineArgs) -> list[dict]:
    """The bills of a line with their status (paid or overdue)."""
    rows = ctx.execute(select(s.bills).where(s.bills.c.line_id == args.line_id).order_by(s.bills.c.bill_id))
    return [_money_as_text(r) for r in mapping_rows(rows)]


@DOMAIN.tool("write")
def pay_overdue_bill(ctx: ToolContext, args: BillArgs) -> str:
    """Take the customer's payment for an overdue bill (only with their agreement)."""
    bill = _one(ctx, s.bills, s.bills.c.bill_id, args.bill_id)
    if bill["status"] != "overdue":
        raise ToolError(f"bill {args.bill_id} is not overdue")
    ctx.execute(update(s.bills).where(s.bills.c.bill_id == args.bill_id).values(status="paid"))
    return f"bill {args.bill_id} paid: {bill['amount']}"


@DOMAIN.tool("write")
def resume_line(ctx: ToolContext, args: LineArgs) -> str:
    """Resume a suspended line; refused while the line has an overdue bill."""
    line = _one(ctx, s.lines, s.lines.c.line_id, args.line_id)
    if line["status"] != "suspended":
        raise ToolError(f"line {args.line_id} is not suspended")
    overdue = ctx.execute(select(s.bills.c.bill_id).where(s.bills.c.line_id == args.line_id,
                                                          s.bills.c.status == "overdue")).first()
    if overdue:
        raise ToolError(f"line {args.line_id} has overdue bill {overdue[0]}")
    ctx.execute(update(s.lines).where(s.lines.c.line_id == args.line_id).values(status="active"))
    return f"line {args.line_id} resumed"


@DOMAIN.tool("write")
def enable_roaming(ctx: ToolContext, args: LineArgs) -> str:
    """Allow the line to use partner networks abroad (a setting: a suspended line keeps it for when it resumes)."""
    _one(ctx, s.lines, s.lines.c.line_id, args.line_id)
    ctx.execute(update(s.lines).where(s.lines.c.line_id == args.line_id).values(roaming_enabled=1))
    return f"roaming enabled on line {args.line_id}"


@DOMAIN.tool("write")
def refuel_data(ctx: ToolContext, args: RefuelArgs) -> str:
    """Add GB of data to an active line for this month, charged at the plan's refuel price per GB."""
    line = _active(ctx, args.line_id)
    price = Decimal(_one(ctx, s.plans, s.plans.c.plan_id, line["plan_id"])["refuel_price_per_gb"])
    ctx.execute(update(s.lines).where(s.lines.c.line_id == args.line_id)
                .values(data_refuel_gb=line["data_refuel_gb"] + args.gb))
    return f"{args.gb} GB added to line {args.line_id}, charged {price * args.gb}"


@DOMAIN.tool("write")
def change_plan(ctx: ToolContext, args: ChangePlanArgs) -> str:
    """Move a line to another plan from today (a suspended line too: it resumes on the new plan)."""
    _one(ctx, s.lines, s.lines.c.line_id, args.line_id)
    _one(ctx, s.plans, s.plans.c.plan_id, args.plan_id)
    ctx.execute(update(s.lines).where(s.lines.c.line_id == args.line_id).values(plan_id=args.plan_id))
    return f"line {args.line_id} moved to plan {args.plan_id}"


def _active(ctx: ToolContext, line_id: str) -> dict:
    line = _one(ctx, s.lines, s.lines.c.line_id, line_id)
    if line["status"] != "active":
        raise ToolError(f"line {line_id} is {line['status']}")
    return line


@DOMAIN.check
def told_user(inp: CheckInput) -> Check:
    """The agent told the user `value` (an amount, a fact the policy requires it to communicate) in one of its
    messages of the conversation or in its final message."""
    # every message not the user's is the business side's: an agent's, or a person's at `evalsuite play`
    said = [str(e.arguments.get("text", "")) for e in inp.trace if e.kind == "message" and e.actor != "user"]
    value = str(inp.params["value"])
    ok = any(output_present(value, m) for m in [*said, inp.final_message])
    return Check.outcome(ok, "" if ok else f"{value!r} never said to the user")


READS = ["get_customer", "get_line", "get_plan", "list_plans", "get_bills"]
WRITES = ["pay_overdue_bill", "resume_line", "enable_roaming", "refuel_data", "change_plan"]
DOMAIN.roles["carrier_agent"] = Role(name="carrier_agent", read_tools=READS, write_tools=WRITES)
