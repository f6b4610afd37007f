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
Table("ticket_events", metadata, Column("event_id", String, primary_key=True), Column("ticket_id", String),
      Column("action", String))  # the ticket's history: every write leaves one row (starts empty)

DOMAIN = es.Domain(name="ticket_desk", version="0.1.0", metadata=metadata, case_tables=frozenset({"resolved"}))


class TicketArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ticket_id: str


class CloseArgs(TicketArgs):
    resolution: Literal["answered", "duplicate", "no_fault_found"]


def _ticket(ctx: es.ToolContext, ticket_id: str) -> dict:
    rows = ctx.rows("SELECT * FROM tickets WHERE ticket_id = ?", (ticket_id,))
    if not rows:
        raise es.ToolError(f"ticket {ticket_id} not found")
    return rows[0]


def _event(ctx: es.ToolContext, ticket_id: str, action: str) -> None:
    n = ctx.rows("SELECT COUNT(*) AS n FROM ticket_events")[0]["n"] + 1
    ctx.run("INSERT INTO ticket_events (event_id, ticket_id, action) VALUES (?, ?, ?)", (f"EV-{n}", ticket_id, action))


@DOMAIN.tool("read")
def get_ticket(ctx: es.ToolContext, args: TicketArgs) -> dict:
    """Read one ticket by its id."""
    return _ticket(ctx, args.ticket_id)


@DOMAIN.tool("write")
def close_ticket(ctx: es.ToolContext, args: CloseArgs) -> dict:
    """Close an open ticket with its resolution."""
    if _ticket(ctx, args.ticket_id)["status"] != "open":
        raise es.ToolError(f"ticket {args.ticket_id} is not open")
    ctx.run("UPDATE tickets SET status = 'closed', resolution = ? WHERE ticket_id = ?",
            (args.resolution, args.ticket_id))
    _event(ctx, args.ticket_id, "close")
    return {"ticket_id": args.ticket_id, "status": "closed"}


@DOMAIN.tool("write")
def hand_to_second_line(ctx: es.ToolContext, args: TicketArgs) -> dict:
    """Hand a first-line ticket to the second-line team (a closed one is reopened)."""
    if _ticket(ctx, args.ticket_id)["line"] != "first":
        raise es.ToolError(f"ticket {args.ticket_id} is not with the first line")
    ctx.run("UPDATE tickets SET line = 'second', status = 'open', resolution = NULL WHERE ticket_id = ?",
            (args.ticket_id,))
    _event(ctx, args.ticket_id, "hand_on")
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
        # the history row makes a second write visible: without it the acceptance audit's every-write adversary
        # passed (close, then a hand-on the closed ticket refused, left the reference's end state)
        expect = {"line": "second", "status": "open"} if handed else \
            {"status": "closed", "resolution": case["outcome"], "line": "first"}
        clause, tid = ("TD-2" if handed else "TD-1"), case["ticket_id"]
        goal = es.GoalState(
            assertions=[es.Assertion(table="tickets", key={"ticket_id": tid}, expect=expect, row_count=1,
                                     clause=clause),
                        es.Assertion(table="ticket_events", key={"ticket_id": tid,
                                                                 "action": "hand_on" if handed else "close"},
                                     row_count=1, clause=clause)],
            volatile_fields_masked=[es.MaskedField(field="ticket_events.event_id",
                                                   justification="numbered by the world in call order")])
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
