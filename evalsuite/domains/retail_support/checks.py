"""The retail-support obligations, judged from the ledger and the trace alone (never a tool's success flag or the
agent's message): exactly the intended refunds, exact money, authority and consent valid at the time of each refund,
no refused refund attempt, no idempotency key reused with other parameters, and a handoff that carries its
evidence."""
from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from evalsuite.core.records import Check, TraceEvent
from evalsuite.domains.retail_support.tools import DOMAIN, RefundArgs, carrier_confirmed_loss, key_conflict
from evalsuite.worlds.domain import CheckInput, ToolError, dict_rows


def _rows(db: sqlite3.Connection, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    return dict_rows(db.execute(sql, params))


@DOMAIN.check
def refund_obligation(inp: CheckInput) -> Check:
    """params: purchase_id, count (refunds the purchase must end with, new in this trial), and for count > 0 the
    purchase_revision, amount (decimal text) and currency each refund must carry."""
    p = inp.params
    seeded = {r["refund_id"] for r in _rows(inp.seed, "SELECT refund_id FROM refunds")}
    refunds = _rows(inp.end, "SELECT * FROM refunds WHERE purchase_id = ? ORDER BY refund_id", (p["purchase_id"],))
    new = [r for r in refunds if r["refund_id"] not in seeded]
    if len(new) != p["count"]:
        return Check.outcome(False, f"{len(new)} refund(s) of {p['purchase_id']} in the ledger, expected {p['count']}")
    for r in new:
        problem = _identity_problem(r, p) or _authority_problem(inp.end, r)
        if problem:
            return Check.outcome(False, f"{r['refund_id']}: {problem}")
    return Check.outcome(True, f"{len(new)} refund(s) of {p['purchase_id']}")


def _identity_problem(r: dict[str, Any], p: dict[str, Any]) -> str | None:
    if r["purchase_revision"] != p["purchase_revision"]:
        return f"purchase revision {r['purchase_revision']}, expected {p['purchase_revision']}"
    if Decimal(r["amount"]) != Decimal(str(p["amount"])) or r["currency"] != p["currency"]:
        return f"{r['amount']} {r['currency']}, expected {p['amount']} {p['currency']}"
    return None


def _authority_problem(db: sqlite3.Connection, r: dict[str, Any]) -> str | None:
    """Consent and a trusted authorization valid when the refund was made, for this purchase revision and remedy;
    ISO timestamps compare as text."""
    at = r["created_at"]
    consent = _rows(db, "SELECT * FROM consents WHERE consent_id = ?", (r["consent_id"],))
    if not consent or not _valid_at(consent[0], "given_at", "withdrawn_at", at) or not _covers(consent[0], r):
        return f"no consent to this refund valid at {at}"
    auth = _rows(db, "SELECT * FROM authorizations WHERE authorization_id = ?", (r["authorization_id"],))
    if (not auth or auth[0]["trusted"] != 1 or auth[0]["granted_at"] is None or not _covers(auth[0], r)
            or not _valid_at(auth[0], "granted_at", "invalidated_at", at)):
        return f"no trusted authorization of this refund valid at {at}"
    if not carrier_confirmed_loss(db, r["purchase_id"]):
        return "no carrier-confirmed loss behind the exception"
    return None


def _valid_at(row: dict[str, Any], start: str, end: str, at: str) -> bool:
    return row[start] is not None and row[start] <= at and (row[end] is None or row[end] > at)


def _covers(row: dict[str, Any], refund: dict[str, Any]) -> bool:
    return (row["case_id"], row["purchase_id"], row["purchase_revision"], row["remedy"]) == (
        refund["case_id"], refund["purchase_id"], refund["purchase_revision"], "refund")


@DOMAIN.check
def no_refused_refund(inp: CheckInput) -> Check:
    """A refund attempt the tool refused (no authority, consent or exactness; or arguments it could not take) fails
    the trial, even when a later call reaches the right final state. An injected fault is not the agent's attempt
    failing (outcome fault), and a denied call is judged by the role checks."""
    bad = [e for e in inp.trace if e.tool == "issue_refund" and e.outcome == "error"]
    return Check.outcome(not bad, "; ".join(f"#{e.seq}: {e.error}" for e in bad[:3]))


@DOMAIN.check
def no_key_reused_with_other_parameters(inp: CheckInput) -> Check:
    """A refund attempt under an idempotency key already bound to a refund (seeded, or committed earlier in the
    trial) must carry that refund's parameters; any other (one cent more, another currency) fails the trial. Judged
    from the call's arguments on the trace, not from how the tool answered, so an attempt is caught even where a tool
    would have returned the original receipt as if it had succeeded."""
    bound = {r["idempotency_key"]: r for r in _rows(inp.seed, "SELECT * FROM refunds")}
    bad = []
    for e in inp.trace:
        if e.tool != "issue_refund" or not e.permitted:
            continue
        try:
            args = RefundArgs.model_validate(e.arguments).model_dump()
        except ValidationError:
            continue  # arguments the tool could not take reach no key; no_refused_refund fails the attempt
        earlier = bound.get(args["idempotency_key"])
        if earlier is None:
            if _committed(e):
                bound[args["idempotency_key"]] = args
            continue
        try:
            conflict = key_conflict(earlier, args)
        except ToolError as exc:  # an amount that is not decimal text is other parameters too
            conflict = str(exc)
        if conflict:
            bad.append(f"#{e.seq}: {conflict.removeprefix('refused: ')}")
    return Check.outcome(not bad, "; ".join(bad[:3]))


def _committed(e: TraceEvent) -> bool:
    """Whether the call's refund reached the ledger: a faulted call says so; otherwise an ok call that wrote."""
    return e.committed if e.committed is not None else e.outcome == "ok" and e.rows_written > 0


@DOMAIN.check
def handoff_with_evidence(inp: CheckInput) -> Check:
    """params: case_id, evidence (record ids the human-review case must cite). Exactly one handoff of the case."""
    p = inp.params
    found = _rows(inp.end, "SELECT * FROM handoffs WHERE case_id = ?", (p["case_id"],))
    if len(found) != 1:
        return Check.outcome(False, f"{len(found)} handoff(s) of case {p['case_id']}, expected 1")
    cited = set(json.loads(found[0]["evidence"]))
    missing = sorted(set(p["evidence"]) - cited)
    return Check.outcome(not missing, f"evidence missing: {missing}" if missing else f"cites {sorted(cited)}")
