"""Tasks from resolved AP cases: trigger from the queue item, goal from the verified outcome.

The goal state is checked against the policy in effect on the day the case was
resolved: a case whose recorded outcome contradicts that policy is skipped and
counted, never shipped as a task the agent cannot pass by following the rules.
"""
from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from decimal import Decimal

from pydantic import BaseModel

from evalsuite.core.records import (
    Assertion,
    GoalState,
    MaskedField,
    Provenance,
    RequiredOutput,
    TaskRecord,
    ToolCall,
    Trigger,
)
from evalsuite.domains.ap_exceptions.tools import DOMAIN
from evalsuite.sourcing.policies import PolicyDoc, policy_in_effect
from evalsuite.tasks.derivation import Derivation, DeriveContext, truthy
from evalsuite.tasks.splits import assign_split

UNCHANGED = ["payments", "vendor_master", "purchase_orders", "po_lines", "goods_receipts", "invoice_lines",
             "exception_queue"]
MASKED = [
    MaskedField(field="invoices.updated_at", justification="set from the system clock when the invoice is written"),
    MaskedField(field="approval_requests.approval_request_id",
                justification="sequence-assigned; depends on call order"),
    MaskedField(field="approval_requests.created_at", justification="set from the system clock at insert"),
    MaskedField(field="approval_requests.reason",
                justification="free text written by the agent; graded by approver_role"),
    MaskedField(field="vendor_messages.message_id", justification="sequence-assigned; depends on call order"),
    MaskedField(field="vendor_messages.sent_at", justification="set from the system clock at insert"),
    MaskedField(field="vendor_messages.subject", justification="free text written by the agent"),
    MaskedField(field="vendor_messages.body", justification="free text written by the agent"),
]


class Outcome(BaseModel):
    status: str
    hold_reason: str | None
    approver_role: str | None
    vendor_messaged: bool
    clause: str
    variance: Decimal | None = None


class Incomplete(Exception):
    """A case whose records lack what its outcome is computed from (an export cut short, an empty table): it is
    skipped and counted under this reason, never derived from a guess."""


def expected_outcome(tables: dict[str, list[dict]], invoice_id: str, exception_type: str, params: dict) -> Outcome:
    """What the policy says must happen to a blocked invoice, computed from the records."""
    lines = [r for r in tables["invoice_lines"] if r["invoice_id"] == invoice_id]
    inv = next((r for r in tables["invoices"] if r["invoice_id"] == invoice_id), None)
    if inv is None or not lines:
        raise Incomplete("its invoice or invoice lines are not in the records")
    if exception_type == "price_variance":
        po = {r["line_no"]: r for r in tables["po_lines"] if r["po_id"] == inv["po_id"]}
        if any(r["po_line_no"] not in po for r in lines):
            raise Incomplete("its purchase-order lines are not in the records")
        def po_variance(r: dict) -> Decimal:
            return abs(Decimal(str(r["unit_price"])) - Decimal(str(po[r["po_line_no"]]["unit_price"])))
        line = max(lines, key=po_variance)
        unit = Decimal(str(po[line["po_line_no"]]["unit_price"]))
        var = Decimal(str(line["unit_price"])) - unit
        pct = var / unit * 100
        if pct <= params["price_tolerance_pct"]:
            return Outcome(status="released", hold_reason=None, approver_role=None, vendor_messaged=False,
                           clause="AP-2", variance=var)
        role, clause = ("ap_manager", "AP-4") if pct > params["escalation_pct"] else ("buyer", "AP-3")
        return Outcome(status="on_hold", hold_reason="price_variance", approver_role=role, vendor_messaged=False,
                       clause=clause, variance=var)
    table = {"quantity_mismatch": (None, True, "AP-5"), "missing_receipt": ("receiving", False, "AP-6"),
             "duplicate_invoice": (None, False, "AP-7")}
    role, messaged, clause = table[exception_type]
    return Outcome(status="on_hold", hold_reason=exception_type, approver_role=role, vendor_messaged=messaged,
                   clause=clause)


def _recorded(case: dict) -> tuple:
    return (case["outcome_status"], case["outcome_hold_reason"] or None, case["outcome_approver_role"] or None,
            truthy(case["outcome_vendor_messaged"]))


def _goal(inv: dict, out: Outcome) -> GoalState:
    a = [Assertion(table="invoices", key={"invoice_id": inv["invoice_id"]},
                   expect={"status": out.status, "hold_reason": out.hold_reason}, row_count=1, clause=out.clause)]
    a.append(Assertion(table="approval_requests", key={"invoice_id": inv["invoice_id"]},
                       expect={"approver_role": out.approver_role, "status": "open"} if out.approver_role else {},
                       row_count=1 if out.approver_role else 0, clause=out.clause))
    a.append(Assertion(table="vendor_messages", key={"invoice_id": inv["invoice_id"]},
                       expect={"vendor_id": inv["vendor_id"]} if out.vendor_messaged else {},
                       row_count=1 if out.vendor_messaged else 0, clause=out.clause))
    outputs = [RequiredOutput(name="decision", value=out.hold_reason or "released", clause="AP-9")]
    if out.variance is not None:
        outputs.append(RequiredOutput(name="variance amount per unit", value=str(out.variance), clause="AP-9"))
    return GoalState(assertions=a, unchanged_tables=UNCHANGED, volatile_fields_masked=MASKED,
                     required_outputs=outputs, forbidden_calls=[])


def derive_tasks(tables: dict[str, list[dict]], policies: list[PolicyDoc], ctx: DeriveContext) -> Derivation:
    """One task per resolved case with a verified outcome that agrees with the policy of its day."""
    invoices = {r["invoice_id"]: r for r in tables["invoices"]}
    queue = {r["queue_item_id"]: r for r in tables["exception_queue"]}
    tasks, skipped = [], Counter()
    for case in sorted(tables["resolved_cases"], key=lambda c: c["case_id"]):
        if not case.get("verified_by"):
            skipped["outcome not verified"] += 1
            continue
        resolved = dt.date.fromisoformat(str(case["resolved_on"])[:10])
        policy = policy_in_effect(policies, resolved)
        item = queue.get(case["queue_item_id"])
        try:
            if item is None:
                raise Incomplete("its exception-queue item is not in the records")
            out = expected_outcome(tables, case["invoice_id"], item["exception_type"], policy.params)
        except Incomplete as why:
            skipped[f"records incomplete: {why}"] += 1
            continue
        if _recorded(case) != (out.status, out.hold_reason, out.approver_role, out.vendor_messaged):
            skipped["recorded outcome contradicts the policy in effect"] += 1
            continue
        tasks.append(TaskRecord(
            task_id=f"ap-exc-{case['case_id'].split('-')[-1]}", domain=DOMAIN.name, suite=ctx.suite,
            split=assign_split(case["case_id"], ctx.seed, ctx.splits),
            category=item["exception_type"] if out.status != "released" else "release",
            environment=ctx.environment, role=DOMAIN.roles["ap_clerk_agent"], policy=policy.as_policy(),
            trigger=Trigger(type="queue_item", text=item["description"], item_id=item["queue_item_id"]),
            goal_state=_goal(invoices[case["invoice_id"]], out),
            reference_solution=[ToolCall(**c) for c in json.loads(case["resolution_actions"])],
            reference_answer=case.get("closing_note"), trial_protocol=ctx.protocol,
            provenance=Provenance(source_record=case["case_id"], outcome_verified_by=case["verified_by"],
                                  license_ref=ctx.license_ref, deidentification=ctx.deidentification,
                                  case_resolved_on=resolved),
        ))
    return Derivation(tasks=tasks, skipped=dict(skipped))
