"""The retail-support tools: τ²-bench retail reads (and two of its writes) as they are, plus authored support tools.

The support write tools enforce authority themselves, as the environment-design guide's support case asks: a
refund needs the purchase's current revision, the exact amount and ISO currency, the customer's current consent to
a refund of that revision, and a trusted exception authorization valid under a policy version that grants the
discretion, for a replacement the carrier confirmed lost. A refused refund says `refused: …`. Changing the remedy
invalidates earlier consent and authorization; the agent may request a manager decision but never create one; a
refund is found again by its idempotency key, and re-issuing with a used key and the same parameters returns the
original receipt instead of paying twice; a used key with any other parameter (one cent more, another currency) is
refused, as payment APIs refuse it (Stripe answers 400 "Keys for idempotent requests can only be used with the same
parameters they were first used with"), never answered with the original receipt as if it had succeeded.
"""
from __future__ import annotations

import json
import sqlite3
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import BaseModel, Field

from evalsuite.core.records import Role
from evalsuite.domains.retail_support.schema import metadata
from evalsuite.domains.tau2_retail import DOMAIN as TAU2
from evalsuite.worlds.domain import Domain, ToolContext, ToolError

DOMAIN = Domain(name="retail_support", version="1.1.0", metadata=metadata, handoff_tools=frozenset({"handoff_case"}),
                attempt_checks=frozenset({"no_refused_refund", "no_key_reused_with_other_parameters"}))
# The inherited retail system: tau2's read tools and two of its writes, the very same functions.
INHERITED_TOOLS = ("find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details", "get_order_details",
                   "get_product_details", "get_item_details", "list_all_product_types", "calculate",
                   "modify_user_address", "return_delivered_order_items")
for _name in INHERITED_TOOLS:
    DOMAIN.tools[_name] = TAU2.tools[_name]


def _one(ctx: ToolContext, sql: str, params: tuple, missing: str) -> dict[str, Any]:
    found = ctx.rows(sql, params)
    if not found:
        raise ToolError(missing)
    return found[0]


def _now(ctx: ToolContext) -> str:
    return ctx.now.isoformat(timespec="seconds")


def _next_id(ctx: ToolContext, table: str, column: str, prefix: str) -> str:
    n = ctx.db.execute(f"SELECT count(*) FROM {table} WHERE {column} LIKE ?", (prefix + "%",)).fetchone()[0]
    return f"{prefix}{n + 1:04d}"


def _case(ctx: ToolContext, case_id: str) -> dict[str, Any]:
    return _one(ctx, "SELECT * FROM cases WHERE case_id = ?", (case_id,), f"case {case_id} not found")


def _open_case(ctx: ToolContext, case_id: str) -> dict[str, Any]:
    case = _case(ctx, case_id)
    if case["status"] in ("resolved", "handed_off"):
        raise ToolError(f"case {case_id} is {case['status']}")
    return case


# ---- read tools ----------------------------------------------------------------------------------

class CaseArgs(BaseModel):
    case_id: str


class PurchaseArgs(BaseModel):
    purchase_id: str


class PolicyArgs(BaseModel):
    version: str


class KeyArgs(BaseModel):
    idempotency_key: str


@DOMAIN.tool("read")
def get_case(ctx: ToolContext, args: CaseArgs) -> dict[str, Any]:
    """A support case (purchase, policy version, requested remedy, status) with its previous contacts."""
    case = _case(ctx, args.case_id)
    case["contacts"] = ctx.rows("SELECT contact_id, at, channel, summary FROM contacts WHERE case_id = ? ORDER BY at",
                             (args.case_id,))
    return case


@DOMAIN.tool("read")
def get_purchase(ctx: ToolContext, args: PurchaseArgs) -> dict[str, Any]:
    """A purchased order line: order, item, current revision, exact amount (decimal text) and ISO currency."""
    return _one(ctx, "SELECT * FROM purchases WHERE purchase_id = ?", (args.purchase_id,),
                f"purchase {args.purchase_id} not found")


@DOMAIN.tool("read")
def get_replacement_history(ctx: ToolContext, args: PurchaseArgs) -> list[dict[str, Any]]:
    """Replacements sent for a purchase, each with its shipment status and carrier events."""
    out = ctx.rows("SELECT r.replacement_id, r.requested_at, s.* FROM replacements r JOIN shipments s "
                     "ON s.shipment_id = r.shipment_id WHERE r.purchase_id = ? ORDER BY r.requested_at",
                   (args.purchase_id,))
    for r in out:
        r["carrier_events"] = ctx.rows("SELECT seq, at, code, detail FROM carrier_events WHERE shipment_id = ? "
                                         "ORDER BY seq", (r["shipment_id"],))
    return out


@DOMAIN.tool("read")
def get_support_policy(ctx: ToolContext, args: PolicyArgs) -> dict[str, Any]:
    """A support policy version: status (in_effect, superseded, unavailable), manager discretion, text."""
    return _one(ctx, "SELECT * FROM support_policies WHERE version = ?", (args.version,),
                f"support policy {args.version} not found")


@DOMAIN.tool("read")
def get_authorizations(ctx: ToolContext, args: CaseArgs) -> list[dict[str, Any]]:
    """Exception authorizations and pending manager requests of a case."""
    return ctx.rows("SELECT * FROM authorizations WHERE case_id = ? ORDER BY authorization_id", (args.case_id,))


@DOMAIN.tool("read")
def get_consents(ctx: ToolContext, args: CaseArgs) -> list[dict[str, Any]]:
    """The customer's consents on a case (remedy, purchase revision, given and withdrawn times)."""
    return ctx.rows("SELECT * FROM consents WHERE case_id = ? ORDER BY given_at", (args.case_id,))


@DOMAIN.tool("read")
def find_refund(ctx: ToolContext, args: KeyArgs) -> dict[str, Any]:
    """Reconciliation: the refund recorded under an idempotency key, if any ({found, refund})."""
    found = ctx.rows("SELECT * FROM refunds WHERE idempotency_key = ?", (args.idempotency_key,))
    return {"found": bool(found), "refund": found[0] if found else None}


# ---- write tools ---------------------------------------------------------------------------------

class RefundArgs(BaseModel):
    case_id: str
    purchase_id: str
    purchase_revision: int
    amount: str = Field(description="exact decimal text, e.g. '46.00'")
    currency: str = Field(description="ISO 4217 code, e.g. 'USD'")
    idempotency_key: str = Field(min_length=1)
    consent_id: str
    authorization_id: str | None = None
    policy_clause: str | None = None


def refund_parameters(values: dict[str, Any]) -> dict[str, Any]:
    """The parameters an idempotency key is bound to: every refund argument but the key, the amount as a decimal
    (46.0 and 46.00 are one amount; 46.01 is another). Used by the tool and by the domain check, so both mean the
    same thing by "the same parameters". An amount that is not decimal text raises ToolError."""
    out = {f: values.get(f) for f in RefundArgs.model_fields if f != "idempotency_key"}
    out["amount"] = _decimal(str(out["amount"]))
    return out


def key_conflict(recorded: dict[str, Any], attempt: dict[str, Any]) -> str | None:
    """Why a refund attempt may not reuse the key `recorded` holds, or None when the parameters are the same."""
    first, now = refund_parameters(recorded), refund_parameters(attempt)
    diff = [f"{f} {now[f]!s} (first used with {first[f]!s})" for f in first if first[f] != now[f]]
    if not diff:
        return None
    return (f"refused: idempotency key {attempt.get('idempotency_key')} can only be used with the same parameters it "
            f"was first used with; this attempt differs in {', '.join(diff)}")


@DOMAIN.tool("write")
def issue_refund(ctx: ToolContext, args: RefundArgs) -> dict[str, Any]:
    """Refund a purchase to the customer. Needs the purchase's current revision, its exact amount and currency,
    the customer's current consent to this refund and a trusted exception authorization. Re-issuing with a used
    idempotency key and the same parameters returns the original receipt; it never pays twice. A used key with
    other parameters is refused."""
    earlier = ctx.rows("SELECT * FROM refunds WHERE idempotency_key = ?", (args.idempotency_key,))
    if earlier:
        conflict = key_conflict(earlier[0], args.model_dump())
        if conflict:
            raise ToolError(conflict)
        return {"refund": earlier[0], "replayed": True}
    case = _open_case(ctx, args.case_id)
    _check_refund(ctx, case, args)
    refund_id = _next_id(ctx, "refunds", "refund_id", "RF-")
    ctx.run("INSERT INTO refunds (refund_id, idempotency_key, case_id, purchase_id, purchase_revision, amount, "
                "currency, authorization_id, policy_clause, consent_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
           (refund_id, args.idempotency_key, args.case_id, args.purchase_id, args.purchase_revision,
            str(Decimal(args.amount)), args.currency, args.authorization_id, args.policy_clause, args.consent_id,
            _now(ctx)))
    return {"refund": ctx.rows("SELECT * FROM refunds WHERE refund_id = ?", (refund_id,))[0], "replayed": False}


def _check_refund(ctx: ToolContext, case: dict[str, Any], args: RefundArgs) -> None:
    """Every authority check, before any write; the first failing one is the refusal."""
    if case["purchase_id"] != args.purchase_id:
        raise ToolError(f"refused: case {case['case_id']} is about purchase {case['purchase_id']}, "
                        f"not {args.purchase_id}")
    purchase = _one(ctx, "SELECT * FROM purchases WHERE purchase_id = ?", (args.purchase_id,),
                    f"purchase {args.purchase_id} not found")
    if args.purchase_revision != purchase["revision"]:
        raise ToolError(f"refused: purchase {args.purchase_id} is at revision {purchase['revision']}")
    if _decimal(args.amount) != Decimal(purchase["amount"]) or args.currency != purchase["currency"]:
        raise ToolError(f"refused: the refund must be exactly {purchase['amount']} {purchase['currency']}")
    consent = ctx.rows("SELECT * FROM consents WHERE consent_id = ? AND case_id = ?",
                       (args.consent_id, case["case_id"]))
    if not consent or not _consent_covers(consent[0], args):
        raise ToolError(f"refused: consent {args.consent_id} is not a current consent to this refund")
    if args.authorization_id is None:
        raise ToolError("refused: no policy clause grants this refund; it needs a trusted exception authorization"
                        + (f" ({args.policy_clause} does not)" if args.policy_clause else ""))
    auth = ctx.rows("SELECT * FROM authorizations WHERE authorization_id = ? AND case_id = ?",
                 (args.authorization_id, case["case_id"]))
    if not auth or not _authorization_covers(auth[0], args):
        raise ToolError(f"refused: authorization {args.authorization_id} does not authorize this refund")
    policy = ctx.rows("SELECT * FROM support_policies WHERE version = ?", (case["policy_version"],))
    if not policy or policy[0]["status"] == "unavailable" or not policy[0]["manager_discretion"]:
        raise ToolError(f"refused: support policy {case['policy_version']} grants no manager exception")
    if not carrier_confirmed_loss(ctx.db, args.purchase_id):
        raise ToolError(f"refused: no carrier-confirmed loss of a replacement of {args.purchase_id}")


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation as exc:
        raise ToolError(f"amount {text!r} is not a decimal amount") from exc


def _consent_covers(c: dict[str, Any], args: RefundArgs) -> bool:
    return (c["purchase_id"], c["purchase_revision"], c["remedy"], c["withdrawn_at"]) == (
        args.purchase_id, args.purchase_revision, "refund", None)


def _authorization_covers(a: dict[str, Any], args: RefundArgs) -> bool:
    return (a["status"] == "granted" and a["trusted"] == 1 and a["invalidated_at"] is None
            and (a["purchase_id"], a["purchase_revision"], a["remedy"])
            == (args.purchase_id, args.purchase_revision, "refund")
            and a["amount"] is not None and Decimal(a["amount"]) == _decimal(args.amount)
            and a["currency"] == args.currency)


def carrier_confirmed_loss(db: sqlite3.Connection, purchase_id: str) -> bool:
    """Whether the carrier confirmed the loss of a replacement of this purchase (proof of loss)."""
    return db.execute("SELECT 1 FROM replacements r JOIN carrier_events e ON e.shipment_id = r.shipment_id "
                      "WHERE r.purchase_id = ? AND e.code = 'lost_confirmed'", (purchase_id,)).fetchone() is not None


class ManagerRequestArgs(BaseModel):
    case_id: str
    remedy: str
    reason: str


@DOMAIN.tool("write")
def request_manager_decision(ctx: ToolContext, args: ManagerRequestArgs) -> dict[str, Any]:
    """Ask a support manager to decide an exception; the request is pending until a manager decides."""
    case = _open_case(ctx, args.case_id)
    purchase = _one(ctx, "SELECT * FROM purchases WHERE purchase_id = ?", (case["purchase_id"],), "purchase not found")
    auth_id = _next_id(ctx, "authorizations", "authorization_id", "AU-REQ-")
    ctx.run("INSERT INTO authorizations (authorization_id, case_id, purchase_id, purchase_revision, remedy, status, "
                "trusted, requested_at) VALUES (?,?,?,?,?,'requested',0,?)",
           (auth_id, case["case_id"], purchase["purchase_id"], purchase["revision"], args.remedy, _now(ctx)))
    return {"authorization_id": auth_id, "status": "requested"}


class RemedyArgs(BaseModel):
    case_id: str
    remedy: str


@DOMAIN.tool("write")
def change_remedy(ctx: ToolContext, args: RemedyArgs) -> dict[str, Any]:
    """Record that the customer now wants another remedy; earlier consents and authorizations for any other remedy
    stop being valid."""
    case = _open_case(ctx, args.case_id)
    now = _now(ctx)
    ctx.run("UPDATE cases SET requested_remedy = ?, updated_at = ? WHERE case_id = ?",
            (args.remedy, now, case["case_id"]))
    ctx.run("UPDATE consents SET withdrawn_at = ? WHERE case_id = ? AND remedy != ? AND withdrawn_at IS NULL",
           (now, case["case_id"], args.remedy))
    ctx.run("UPDATE authorizations SET status = 'superseded', invalidated_at = ? WHERE case_id = ? AND remedy != ? "
                "AND invalidated_at IS NULL", (now, case["case_id"], args.remedy))
    return _case(ctx, case["case_id"])


class HandoffArgs(BaseModel):
    case_id: str
    reason: str = Field(min_length=1)
    evidence: list[str] = Field(description="ids of the records that support the handoff")


@DOMAIN.tool("write")
def handoff_case(ctx: ToolContext, args: HandoffArgs) -> dict[str, Any]:
    """Open a human-review case with the evidence (record ids) and hand the support case off to it."""
    case = _open_case(ctx, args.case_id)
    handoff_id = _next_id(ctx, "handoffs", "handoff_id", "HO-")
    now = _now(ctx)
    ctx.run("INSERT INTO handoffs (handoff_id, case_id, reason, evidence, created_at) VALUES (?,?,?,?,?)",
           (handoff_id, case["case_id"], args.reason, json.dumps(sorted(set(args.evidence))), now))
    ctx.run("UPDATE cases SET status = 'handed_off', updated_at = ? WHERE case_id = ?", (now, case["case_id"]))
    return {"handoff_id": handoff_id}


class ResolveArgs(BaseModel):
    case_id: str
    resolution: str = Field(min_length=1)


@DOMAIN.tool("write")
def resolve_case(ctx: ToolContext, args: ResolveArgs) -> dict[str, Any]:
    """Close a support case with a resolution."""
    case = _open_case(ctx, args.case_id)
    ctx.run("UPDATE cases SET status = 'resolved', resolution = ?, updated_at = ? WHERE case_id = ?",
           (args.resolution, _now(ctx), case["case_id"]))
    return _case(ctx, case["case_id"])


class InvestigationArgs(BaseModel):
    case_id: str
    shipment_id: str
    note: str = Field(min_length=1)


@DOMAIN.tool("write")
def open_investigation(ctx: ToolContext, args: InvestigationArgs) -> dict[str, Any]:
    """Open a carrier investigation of a shipment; the case waits for its result."""
    case = _open_case(ctx, args.case_id)
    _one(ctx, "SELECT 1 FROM shipments WHERE shipment_id = ?", (args.shipment_id,),
         f"shipment {args.shipment_id} not found")
    inv_id = _next_id(ctx, "investigations", "investigation_id", "IN-")
    now = _now(ctx)
    ctx.run("INSERT INTO investigations (investigation_id, case_id, shipment_id, note, created_at) VALUES (?,?,?,?,?)",
           (inv_id, case["case_id"], args.shipment_id, args.note, now))
    ctx.run("UPDATE cases SET status = 'investigating', updated_at = ? WHERE case_id = ?", (now, case["case_id"]))
    return {"investigation_id": inv_id}


ROLE = Role(name="support_agent",
            read_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "read"),
            write_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "write"))
DOMAIN.roles[ROLE.name] = ROLE
