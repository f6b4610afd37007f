"""The simpler alternative for retail support: a fixed workflow over the tools, no model, no choice of tools.

`gather` makes the same reads in the same order on every case, from the trigger alone; `decide` applies the
policy's rules to what they returned; `act` carries a decision out with arguments taken from the reads and ends
with a closing message stating only what was read. The workflow baseline agent runs gather, decide and act; the
non-adaptive model workflow runs gather, asks its model for the decision (one of DECISIONS) and acts on it
(evalsuite.trials.agents.workflow). Decisions are named by the write tool they lead to.
"""
from __future__ import annotations

from typing import Any

from evalsuite.core.records import Trigger

DECISIONS = {
    "issue_refund": "refund the original purchase exactly once (reconcile by key if a call's outcome is unknown), "
                    "then resolve the case",
    "change_remedy": "record the remedy the customer now consents to, then hand the case off with its evidence",
    "handoff_case": "hand the case off to human review with its evidence, deciding nothing",
    "open_investigation": "open a carrier investigation of the replacement's shipment",
}


def _result(env, tool: str, **arguments) -> Any:
    event = env.call(tool, arguments)
    return event.result if event.outcome == "ok" else None


def gather(trigger: Trigger, env) -> dict[str, Any]:
    """The fixed reads of a case, by what each returned (None where a read failed)."""
    case_id = trigger.item_id or ""
    case = _result(env, "get_case", case_id=case_id) or {}
    purchase_id = case.get("purchase_id", "")
    return {"case": case, "purchase": _result(env, "get_purchase", purchase_id=purchase_id) or {},
            "history": _result(env, "get_replacement_history", purchase_id=purchase_id) or [],
            "policy": _result(env, "get_support_policy", version=case.get("policy_version", "")),
            "authorizations": _result(env, "get_authorizations", case_id=case_id) or [],
            "consents": _result(env, "get_consents", case_id=case_id) or []}


def _current(consents: list[dict], refund: bool) -> list[dict]:
    return [c for c in consents if c["withdrawn_at"] is None and (c["remedy"] == "refund") == refund]


def _granted(facts: dict[str, Any]) -> dict | None:
    rev = facts["purchase"].get("revision")
    return next((a for a in facts["authorizations"] if a["status"] == "granted" and a["trusted"] == 1
                 and a["invalidated_at"] is None and a["purchase_revision"] == rev and a["remedy"] == "refund"), None)


def decide(facts: dict[str, Any]) -> str:
    """The policy's rules, in order: no policy text, no proof of loss, a changed or withdrawn consent, no manager
    discretion, no authority for the purchase's current revision; otherwise a refund."""
    policy = facts["policy"]
    if not policy or policy["status"] == "unavailable":
        return "handoff_case"  # RS-7
    if not any(e["code"] == "lost_confirmed" for r in facts["history"] for e in r["carrier_events"]):
        return "open_investigation"  # RS-4
    if _current(facts["consents"], refund=False):
        return "change_remedy"  # RS-3
    if not _current(facts["consents"], refund=True) or not policy["manager_discretion"]:
        return "handoff_case"  # RS-7, RS-2
    if _granted(facts) is None:
        return "handoff_case"  # RS-3: the authority is for another revision
    return "issue_refund"


def evidence(facts: dict[str, Any]) -> list[str]:
    """Every record id the reads returned that bears on the case."""
    case, purchase = facts["case"], facts["purchase"]
    ids = [case.get("policy_version"), purchase.get("purchase_id"),
           *(a["authorization_id"] for a in facts["authorizations"]),
           *(c["consent_id"] for c in facts["consents"]), *(c["contact_id"] for c in case.get("contacts", [])),
           *(r["shipment_id"] for r in facts["history"])]
    return [i for i in dict.fromkeys(ids) if i]


def act(decision: str, facts: dict[str, Any], env) -> str:
    """Carry the decision out; the closing message states the decision and only figures that were read."""
    case_id = facts["case"].get("case_id", "")
    if decision == "issue_refund":
        return _refund(facts, env)
    if decision == "open_investigation":
        shipment = next((r["shipment_id"] for r in facts["history"]), "")
        env.call("open_investigation", {"case_id": case_id, "shipment_id": shipment,
                                        "note": "no carrier-confirmed loss of the replacement"})
        return f"Opened a carrier investigation of shipment {shipment} for case {case_id}."
    if decision == "change_remedy":
        remedy = next((c["remedy"] for c in _current(facts["consents"], refund=False)), "replacement")
        env.call("change_remedy", {"case_id": case_id, "remedy": remedy})
    cited = evidence(facts)
    env.call("handoff_case", {"case_id": case_id, "evidence": cited,
                              "reason": f"the support policy does not let the agent decide case {case_id}"})
    return f"Handed case {case_id} off to human review citing {', '.join(cited)}."


def _refund(facts: dict[str, Any], env) -> str:
    """One refund under its idempotency key: reconcile before a retry, retry with the same key."""
    case, p = facts["case"], facts["purchase"]
    consent = next(iter(_current(facts["consents"], refund=True)), {})
    auth = _granted(facts) or {}
    key = f"{case.get('case_id')}-refund-1"
    args = {"case_id": case.get("case_id"), "purchase_id": p.get("purchase_id"),
            "purchase_revision": p.get("revision"), "amount": p.get("amount"), "currency": p.get("currency"),
            "idempotency_key": key, "consent_id": consent.get("consent_id"),
            "authorization_id": auth.get("authorization_id")}
    if not (_result(env, "find_refund", idempotency_key=key) or {}).get("found"):
        unknown = env.call("issue_refund", args).outcome == "fault"  # an error or a denial is an answer
        if unknown and not (_result(env, "find_refund", idempotency_key=key) or {}).get("found"):
            env.call("issue_refund", args)
    env.call("resolve_case", {"case_id": case.get("case_id"), "resolution": "refunded the original purchase"})
    return f"Refunded {p.get('amount')} {p.get('currency')} of purchase {p.get('purchase_id')} (case " \
           f"{case.get('case_id')})."
