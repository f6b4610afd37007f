"""A tiny shop domain for the grader's tests: three tables, a few tools, one role.

`orders` has a money column, `lines` a composite key, and `note` is a column of
both, so a mask naming a table can be told from one naming every table. Every
verdict is computed twice, row-level (`grade_trial`) and over whole tables
(`grade`), and the two must be equal.
"""
from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, String, Table, text

from evalsuite.core.records import Check, GoalState, Role
from evalsuite.grading.grader import Verdict, grade, grade_trial
from evalsuite.worlds import Domain, ToolError, World
from evalsuite.worlds.domain import CheckInput
from evalsuite.worlds.types import Money

md = MetaData()
Table("orders", md, Column("order_id", String, primary_key=True), Column("status", String, nullable=False),
      Column("total", Money(), nullable=False), Column("note", String))
Table("lines", md, Column("order_id", String, primary_key=True), Column("line_no", Integer, primary_key=True),
      Column("qty", Integer, nullable=False), Column("price", Money()), Column("note", String))
Table("tags", md, Column("tag", String, primary_key=True), Column("label", String))
SHOP = Domain(name="shop", version="1", metadata=md)

CLERK = Role(name="clerk", read_tools=["get_order"], write_tools=["set_status", "run_sql"],
             forbidden_tools=["refund"])


@SHOP.tool("read")
def get_order(ctx, /, order_id: str):
    """One order."""
    row = ctx.execute(text("SELECT * FROM orders WHERE order_id = :o"), {"o": order_id}).mappings().first()
    if row is None:
        raise ToolError(f"order {order_id} not found")
    return dict(row)


@SHOP.tool("read")
def list_tags(ctx, /):
    """Every tag (a read tool the clerk is not given)."""
    return [tuple(r) for r in ctx.execute(text("SELECT * FROM tags"))]


@SHOP.tool("write")
def set_status(ctx, /, order_id: str, status: str):
    """Set an order's status."""
    done = ctx.execute(text("UPDATE orders SET status = :s WHERE order_id = :o"), {"s": status, "o": order_id})
    if done.rowcount == 0:
        raise ToolError(f"order {order_id} not found")


@SHOP.tool("write")
def run_sql(ctx, /, sql: str, params: dict | None = None):
    """Run one statement: the tests' stand-in for any write a tool makes."""
    ctx.execute(text(sql), params or {})


@SHOP.tool("write")
def refund(ctx, /, order_id: str):
    """A write the clerk is forbidden."""
    ctx.execute(text("UPDATE orders SET total = '0.00' WHERE order_id = :o"), {"o": order_id})


@SHOP.tool("write")
def purge_tags(ctx, /):
    """A write outside the clerk's role that no one forbade."""
    ctx.execute(text("DELETE FROM tags"))


@SHOP.tool("generic")
def note(ctx, /, text: str):
    """A generic tool: any role may call it, and it is not a write."""
    return text



@SHOP.check
def closed_orders(inp: CheckInput) -> Check:
    """An obligation no row assertion states: exactly `n` orders closed at the end."""
    n = inp.end.execute("SELECT COUNT(*) FROM orders WHERE status = 'closed'").fetchone()[0]
    return Check.outcome(n == inp.params["n"], f"{n} closed")


@SHOP.check
def told_customer(inp: CheckInput) -> Check:
    """An obligation on what the agent said: its final message names the order."""
    return Check.outcome(inp.params["order_id"] in inp.final_message, "")


SEED = {
    "orders": [dict(order_id="O1", status="open", total="20.50", note=None),
               dict(order_id="O2", status="open", total="10.00", note="vip"),
               dict(order_id="O3", status="closed", total="0.00", note=None)],
    "lines": [dict(order_id="O1", line_no=1, qty=2, price="10.25", note=None),
              dict(order_id="O1", line_no=2, qty=1, price="0.00", note="gift"),
              dict(order_id="O2", line_no=1, qty=1, price="10.00", note=None)],
    "tags": [dict(tag="t1", label="red"), dict(tag="t2", label="blue")],
}


def build_world(path) -> World:
    return World.build(SHOP, SEED, path)


def play(world: World, calls, role: Role | None = CLERK):
    """A trial of `role` making `calls`: (tool, arguments) pairs, or SQL text for run_sql."""
    trial = world.reset(role)
    for call in calls:
        tool, args = ("run_sql", {"sql": call}) if isinstance(call, str) else call
        trial.call(tool, args)
    return trial


def verdict(world: World, trial, goal: GoalState, message: str = "", role: Role = CLERK,
            forbidden: set[str] | None = None) -> Verdict:
    """The row-level verdict, asserted equal to the whole-table one."""
    row_level = grade_trial(trial, message, goal, role, forbidden)
    whole = grade(world.schemas, world.initial_rows, trial.rows(), trial.trace, message, goal, role, forbidden)
    assert row_level == whole
    return row_level


def named(v: Verdict) -> dict[str, bool]:
    return {c.name: c.passed for c in v.checks}


def details(v: Verdict) -> dict[str, str]:
    return {c.name: c.detail for c in v.checks}
