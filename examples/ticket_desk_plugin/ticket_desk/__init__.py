"""The help desk's ticket process as an evalsuite plugin domain: tickets an agent closes with a resolution or hands
to the second line, derived from resolved tickets whose outcome a team lead verified. Written against the public
API only (`import evalsuite`); the package's entry point registers PACKAGE."""
from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Column, MetaData, String, Table

import evalsuite as es

metadata = MetaData()
Table("tickets", metadata, Column("ticket_id", String, primary_key=True), Column("customer", String),
      Column("subject", String), Column("status", String), Column("resolution", String), Column("line", String))

DOMAIN = es.Domain(name="ticket_desk", version="0.1.0", metadata=metadata, case_tables=frozenset({"resolved"}))


class TicketArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ticket_id: str


class CloseArgs(TicketArgs):
    resolution: Literal["answered", "duplicate", "no_fault_found"]


def _open(ctx: es.ToolContext, ticket_id: str) -> dict:
    rows = ctx.rows("SELECT * FROM tickets WHERE ticket_id = ?", (ticket_id,))
    if not rows or rows[0]["status"] != "open":
        raise es.ToolError(f"ticket {ticket_id} is not open")
    return rows[0]


@DOMAIN.tool("read")
def get_ticket(ctx: es.ToolContext, args: TicketArgs) -> dict:
    """Read one ticket by its id."""
    rows = ctx.rows("SELECT * FROM tickets WHERE ticket_id = ?", (args.ticket_id,))
    if not rows:
        raise es.ToolError(f"ticket {args.ticket_id} not found")
    return rows[0]


@DOMAIN.tool("write")
def close_ticket(ctx: es.ToolContext, args: CloseArgs) -> dict:
    """Close an open ticket with its resolution."""
    _open(ctx, args.ticket_id)
    ctx.run("UPDATE tickets SET status = 'closed', resolution = ? WHERE ticket_id = ?",
            (args.resolution, args.ticket_id))
    return {"ticket_id": args.ticket_id, "status": "closed"}


@DOMAIN.tool("write")
def hand_to_second_line(ctx: es.ToolContext, args: TicketArgs) -> dict:
    """Hand an open ticket to the second-line team."""
    _open(ctx, args.ticket_id)
    ctx.run("UPDATE tickets SET line = 'second' WHERE ticket_id = ?", (args.ticket_id,))
    return {"ticket_id": args.ticket_id, "line": "second"}


DOMAIN.roles["desk_agent"] = es.Role(name="desk_agent", read_tools=["get_ticket"],
                                     write_tools=["close_ticket", "hand_to_second_line"])


def derive(tables: dict[str, list[dict]], policies, ctx: es.DeriveContext) -> es.Derivation:
    """One task per resolved ticket a team lead verified: close it as recorded, or hand it on."""
    tasks, skipped = [], Counter()
    for case in sorted(tables["resolved"], key=lambda c: c["ticket_id"]):
        if not case["verified_by"]:
            skipped["outcome not verified"] += 1
            continue
        policy = es.policy_in_effect(policies, dt.date.fromisoformat(case["resolved_on"]))
        handed = case["outcome"] == "second_line"
        expect = {"line": "second"} if handed else {"status": "closed", "resolution": case["outcome"]}
        goal = es.GoalState(assertions=[es.Assertion(table="tickets", key={"ticket_id": case["ticket_id"]},
                                                     expect=expect, row_count=1, clause="TD-2" if handed else "TD-1")])
        tasks.append(es.TaskRecord(
            task_id=f"ticket-{case['ticket_id']}", domain=DOMAIN.name, suite=ctx.suite, environment=ctx.environment,
            role=DOMAIN.roles["desk_agent"], policy=policy.as_policy(), category=case["outcome"],
            trigger=es.Trigger(type="queue_item", text=f"Ticket {case['ticket_id']}: {case['summary']}",
                               item_id=case["ticket_id"]),
            goal_state=goal, reference_solution=[es.ToolCall(**c) for c in json.loads(case["actions"])],
            trial_protocol=ctx.protocol,
            provenance=es.Provenance(source_record=case["ticket_id"], outcome_verified_by=case["verified_by"],
                                     license_ref=ctx.license_ref, deidentification=ctx.deidentification)))
    return es.Derivation(tasks=tasks, skipped=dict(skipped))


PACKAGE = es.DomainPackage(domain=DOMAIN, derive=derive)
