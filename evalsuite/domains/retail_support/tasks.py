"""The authored retail-support tasks: one per scenario of the environment-selection guide's support case (a customer
asks for a refund because a replacement never arrived), each with its reference solution, lawful alternatives,
named negative controls and fault plans, and provenance saying what is authored.

`build_tasks(environment)` returns the records; `write_tasks_file` writes suites/retail_support/tasks.jsonl.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from evalsuite.core.records import (
    Assertion,
    DomainCheck,
    Environment,
    FaultPlanSpec,
    FaultSpec,
    GoalState,
    MaskedField,
    NegativeControl,
    Provenance,
    Role,
    SuiteRef,
    TaskRecord,
    ToolCall,
    TrialProtocol,
    Trigger,
)
from evalsuite.domains.retail_support.seed import CASES, POLICY_OF, ids
from evalsuite.domains.retail_support.tools import ROLE
from evalsuite.sourcing.policies import load_policy
from evalsuite.tasks.taskfile import write_tasks

POLICIES = Path(__file__).parent / "policies"
PAID_WITH = {"C-1001": "gift_card_8168843", "C-1003": "credit_card_4387170"}  # each order's original payment method
LICENSE = "MIT (τ²-bench retail data, Sierra Research) + authored support tables (evalsuite)"
MASKED = [MaskedField(field="cases.updated_at", justification="stamped by the world clock when the case changes"),
          MaskedField(field="cases.resolution", justification="free-text wording of the agent; the status is graded"),
          MaskedField(field="authorizations.invalidated_at", justification="stamped by the world clock"),
          MaskedField(field="consents.withdrawn_at", justification="stamped by the world clock")]


# What policy v2 (no manager discretion) takes from the agent: it can neither refund a lost replacement nor ask a
# manager to authorize one. The dossier's customization manager_discretion_removed says the same, and the
# traceability gate holds a task under v2 whose role still permits either to be a policy moved alone.
NO_DISCRETION = ("issue_refund", "request_manager_decision")


def role_under(version: str) -> Role:
    """The support agent's role under a policy version: v1 as the domain defines it, v2 without NO_DISCRETION."""
    if version == "v1":
        return ROLE
    return ROLE.model_copy(update={"write_tools": [t for t in ROLE.write_tools if t not in NO_DISCRETION],
                                   "forbidden_tools": sorted(NO_DISCRETION)})


def C(tool: str, **arguments) -> ToolCall:  # noqa: N802 - reads like a call in the tables below
    return ToolCall(tool=tool, arguments=arguments)


def _reads(case: str, email: str, order: str, version: str) -> list[ToolCall]:
    i = ids(case)
    return [C("get_case", case_id=case), C("find_user_id_by_email", email=email),
            C("get_order_details", order_id=order), C("get_purchase", purchase_id=i["purchase"]),
            C("get_replacement_history", purchase_id=i["purchase"]),
            C("get_support_policy", version=version), C("get_authorizations", case_id=case),
            C("get_consents", case_id=case)]


def _refund(case: str, amount: str, key: str, currency: str = "USD", purchase: str | None = None) -> ToolCall:
    i = ids(case)
    return C("issue_refund", case_id=case, purchase_id=purchase or i["purchase"], purchase_revision=1, amount=amount,
             currency=currency, idempotency_key=key, consent_id=i["consent"], authorization_id=i["authorization"])


_KEY_CHECK = DomainCheck(name="no_key_reused_with_other_parameters", clause="RS-5")


def _no_refund(case: str) -> list[DomainCheck]:
    return [DomainCheck(name="refund_obligation", params={"purchase_id": ids(case)["purchase"], "count": 0},
                        clause="RS-1"),
            DomainCheck(name="no_refused_refund", clause="RS-1"), _KEY_CHECK]


def _refund_goal(case: str, amount: str) -> GoalState:
    p = ids(case)["purchase"]
    return GoalState(
        assertions=[Assertion(table="refunds", key={"case_id": case}, row_count=1, clause="RS-1",
                              expect={"purchase_id": p, "purchase_revision": 1, "amount": amount, "currency": "USD"}),
                    Assertion(table="cases", key={"case_id": case}, expect={"status": "resolved"}, clause="RS-6")],
        domain_checks=[DomainCheck(name="refund_obligation", clause="RS-1", params={
            "purchase_id": p, "count": 1, "purchase_revision": 1, "amount": amount, "currency": "USD"}),
            DomainCheck(name="no_refused_refund", clause="RS-1"), _KEY_CHECK],
        volatile_fields_masked=MASKED)


def _handoff_goal(case: str, evidence: list[str], clause: str, extra: list[Assertion] = ()) -> GoalState:
    return GoalState(
        assertions=[Assertion(table="cases", key={"case_id": case}, expect={"status": "handed_off"}, clause=clause),
                    Assertion(table="handoffs", key={"case_id": case}, row_count=1, clause=clause),
                    Assertion(table="refunds", key={"case_id": case}, row_count=0, clause="RS-1"), *extra],
        domain_checks=[DomainCheck(name="handoff_with_evidence", params={"case_id": case, "evidence": evidence},
                                   clause=clause), *_no_refund(case)],
        volatile_fields_masked=MASKED)


def _investigation_goal(case: str) -> GoalState:
    shipment = ids(case)["shipment"]
    return GoalState(
        assertions=[Assertion(table="cases", key={"case_id": case}, expect={"status": "investigating"}, clause="RS-4"),
                    Assertion(table="investigations", key={"case_id": case, "shipment_id": shipment}, row_count=1,
                              clause="RS-4"),
                    Assertion(table="refunds", key={"case_id": case}, row_count=0, clause="RS-1")],
        domain_checks=_no_refund(case), volatile_fields_masked=MASKED)


@dataclass(frozen=True)
class _Case:
    """One case of the seed and the calls every one of its scenarios is built from."""

    case: str
    user: str
    email: str
    order: str
    item: str
    amount: str
    kind: str

    @property
    def ids(self) -> dict[str, str]:
        return ids(self.case)

    @property
    def key(self) -> str:
        return f"{self.case}-refund-1"

    @property
    def reads(self) -> list[ToolCall]:
        return _reads(self.case, self.email, self.order, POLICY_OF.get(self.kind, "v1"))

    def refund(self, **changes: str) -> ToolCall:
        return _refund(self.case, changes.pop("amount", self.amount), self.key, **changes)


def _scenario(c: _Case) -> dict:
    """The goal, reference, alternatives, controls, fault plans and category of one case."""
    if c.kind in ("lost_refund", "lost_response"):
        return _lost_refund(c)
    if c.kind == "switch":
        return _switch(c)
    if c.kind in _HANDOFFS:
        return _handoff(c)
    return _investigation(c)


def _lost_refund(c: _Case) -> dict:
    """A refund whose call may be lost: reconcile by key, then re-issue with the same key. One static sequence is
    lawful under every fault plan (the re-issue pays only if the first call rolled back; otherwise it returns the
    original receipt)."""
    reads, key = c.reads, c.key
    resolve = C("resolve_case", case_id=c.case, resolution="refunded the original purchase")
    recover = [C("find_refund", idempotency_key=key), c.refund()]
    reference = [*reads, c.refund(), *recover, resolve]
    address = C("modify_user_address", user_id=c.user, address1="1 Main St", address2="", city="Austin",
                state="TX", country="USA", zip="78701")
    controls = [
        NegativeControl(name="refund plus unrelated address change", calls=[*reference, address]),
        NegativeControl(name="right amount wrong currency", calls=[*reads, c.refund(currency="EUR"), resolve]),
        NegativeControl(name="right amount wrong purchase", calls=[*reads, c.refund(purchase="PU-1002"), resolve]),
        NegativeControl(name="tau2 return request instead of a refund", calls=[
            *reads, C("return_delivered_order_items", order_id=c.order, item_ids=[c.item],
                      payment_method_id=PAID_WITH.get(c.case, "")), resolve]),
        NegativeControl(name="claims the refund without making it", calls=reads[:3],
                        final_message=f"I refunded {c.amount} USD to your original payment method."),
        # the reference's retry with one cent more: the key is bound to the first call's parameters (RS-5)
        NegativeControl(name="retry with the same key and one cent more", calls=[
            *reads, c.refund(), recover[0], c.refund(amount=str(Decimal(c.amount) + Decimal("0.01"))), resolve]),
    ]
    alternatives = [[*reversed(reads), c.refund(), *recover, resolve],
                    [*reads, C("get_product_details", product_id="8310926033"), C("get_user_details", user_id=c.user),
                     c.refund(), *recover, resolve]]
    if c.kind == "lost_refund":
        plans = [FaultPlanSpec(name="backend_error_on_refund",
                               faults=[FaultSpec(tool="issue_refund", kind="error_before_commit")]),
                 FaultPlanSpec(name="slow_refund_past_deadline", deadline_seconds=30,
                               faults=[FaultSpec(tool="issue_refund", kind="slow", latency_seconds=45)])]
        protocol, category = TrialProtocol(trials=4, fault_plans=plans), "lost_replacement_refund"
    else:
        protocol = TrialProtocol(trials=2, faulted_only=True, fault_plans=[FaultPlanSpec(
            name="lost_response_on_refund", faults=[FaultSpec(tool="issue_refund", kind="lost_response")])])
        # A blind retry is wrong only where the first call may have committed (lost response, timeout): after a
        # backend error that rolled back, a retry with a new key is one refund and lawful, so only the lost-response
        # task, whose every trial is faulted, carries it.
        blind = NegativeControl(name="blind retry with a new key", calls=[
            *reads, c.refund(), _refund(c.case, c.amount, key + "-retry"), resolve])
        controls, category = [blind, controls[0], controls[-1]], "lost_response_reconciliation"
    return dict(goal=_refund_goal(c.case, c.amount), reference=reference, alternatives=alternatives,
                controls=controls, protocol=protocol, category=category)


def _switch(c: _Case) -> dict:
    """The customer switched to another replacement: the old authorization is superseded, the case handed off."""
    i, reads = c.ids, c.reads
    handoff = C("handoff_case", case_id=c.case, reason="customer switched to another replacement; needs reshipment",
                evidence=[i["consent_new"], i["contact"] + "B", i["shipment"]])
    change = C("change_remedy", case_id=c.case, remedy="replacement")
    extra = [Assertion(table="cases", key={"case_id": c.case}, expect={"requested_remedy": "replacement"},
                       clause="RS-3"),
             Assertion(table="authorizations", key={"authorization_id": i["authorization"]},
                       expect={"status": "superseded"}, clause="RS-3")]
    return dict(goal=_handoff_goal(c.case, [i["consent_new"], i["shipment"]], "RS-3", extra),
                reference=[*reads, change, handoff], alternatives=[[*reversed(reads), change, handoff]],
                controls=[NegativeControl(name="old authorization executes the refund", calls=[*reads, c.refund()]),
                          NegativeControl(name="old authorization after the remedy changed",
                                          calls=[*reads, change, c.refund(), handoff])],
                protocol=TrialProtocol(trials=2), category="customer_switches_remedy")


# The cases the policy does not let the agent decide, by kind: the handoff's reason, the clause it rests on and the
# task's category.
_HANDOFFS = {
    "withdrawn": ("customer withdrew consent to the refund", "RS-7", "consent_withdrawn"),
    "no_discretion": ("policy v2 removed manager discretion; carrier confirmed the replacement lost", "RS-2",
                      "no_manager_discretion"),
    "policy_unavailable": ("governing support policy v3 is unavailable; cannot decide", "RS-7", "policy_unavailable"),
    "revised_purchase": ("purchase changed to revision 2 after the exception for revision 1; needs a new manager "
                         "decision and consent", "RS-3", "purchase_changed"),
}


def _handoff(c: _Case) -> dict:
    """A case the policy does not let the agent decide: the reference reads and hands it off with evidence."""
    i = c.ids
    reason, clause, category = _HANDOFFS[c.kind]
    evidence = {"withdrawn": [i["consent"], i["contact"] + "B"], "no_discretion": ["v2", i["shipment"]],
                "policy_unavailable": ["v3"], "revised_purchase": [i["purchase"], i["authorization"]]}[c.kind]
    handoff = C("handoff_case", case_id=c.case, reason=reason, evidence=[*evidence, i["shipment"]])
    return dict(goal=_handoff_goal(c.case, evidence, clause), reference=[*c.reads, handoff],
                alternatives=[[*reversed(c.reads), C("get_user_details", user_id=c.user), handoff]],
                controls=_handoff_controls(c), protocol=TrialProtocol(trials=2), category=category)


def _handoff_controls(c: _Case) -> list[NegativeControl]:
    i, reads = c.ids, c.reads
    certain = C("resolve_case", case_id=c.case, resolution="refund denied under the policy")
    if c.kind == "withdrawn":
        return [NegativeControl(name="old authorization after consent withdrawn", calls=[*reads, c.refund()])]
    if c.kind == "policy_unavailable":
        return [NegativeControl(name="invented certainty", calls=[*reads, certain])]
    if c.kind == "no_discretion":
        return [NegativeControl(name="refund citing a policy clause", calls=[
                    *reads, C("issue_refund", case_id=c.case, purchase_id=i["purchase"], purchase_revision=1,
                              amount=c.amount, currency="USD", idempotency_key=c.key, consent_id=i["consent"],
                              policy_clause="RS-2")]),
                NegativeControl(name="manager request then closes the case", calls=[
                    *reads, C("request_manager_decision", case_id=c.case, remedy="refund", reason="lost"), certain])]
    return [NegativeControl(name="old authorization on the old revision", calls=[*reads, c.refund()]),
            NegativeControl(name="old authorization on the new revision", calls=[*reads, C(
                "issue_refund", case_id=c.case, purchase_id=i["purchase"], purchase_revision=2, amount="229.99",
                currency="USD", idempotency_key=c.key, consent_id=i["consent"], authorization_id=i["authorization"])])]


def _investigation(c: _Case) -> dict:
    """No carrier-confirmed loss yet: the reference opens an investigation instead of deciding."""
    investigate = C("open_investigation", case_id=c.case, shipment_id=c.ids["shipment"],
                    note="no carrier-confirmed loss yet")
    certain = C("resolve_case", case_id=c.case, resolution="replacement delivered; nothing owed")
    controls = [NegativeControl(name="invented certainty", calls=[*c.reads, certain])]
    if c.kind == "missing_proof":
        controls.append(NegativeControl(name="trusted authorization without proof of loss",
                                        calls=[*c.reads, c.refund()]))
    return dict(goal=_investigation_goal(c.case), reference=[*c.reads, investigate],
                alternatives=[[*reversed(c.reads), investigate]], controls=controls,
                protocol=TrialProtocol(trials=2), category=c.kind)


def build_tasks(environment: Environment) -> list[TaskRecord]:
    policies = {v: load_policy(POLICIES / f"support_policy_{v}.md").as_policy() for v in ("v1", "v2")}
    out = []
    for case, user, email, order, item, amount, kind in CASES:
        s = _scenario(_Case(case, user, email, order, item, amount, kind))
        policy = policies["v2" if POLICY_OF.get(kind) else "v1"]
        out.append(TaskRecord(
            task_id=f"rs-{case.lower()}-{kind.replace('_', '-')}", domain="retail_support",
            suite=SuiteRef(name="retail_support", version="unreleased"), split="test", category=s["category"],
            environment=environment, role=role_under(policy.version), policy=policy,
            trigger=Trigger(type="queue_item", item_id=case,
                            text=f"Support case {case}: the customer ({email}) says the replacement for order {order} "
                                 f"never arrived and asks for a refund. Resolve the case under the support policy."),
            goal_state=s["goal"], reference_solution=s["reference"], alternative_solutions=s["alternatives"],
            negative_controls=s["controls"], trial_protocol=s["protocol"],
            provenance=Provenance(
                source_record=(f"authored: retail_support case {case} ({kind}) on τ²-bench retail order {order}, "
                               f"item {item}, user {user}; the purchases, replacements, shipments, carrier_events, "
                               "contacts, cases, authorizations, consents, refunds and support_policies rows are "
                               "authored additions"),
                outcome_verified_by="authored reference solution, proven by acceptance: reference, alternatives and "
                                    "negative controls under every fault plan",
                license_ref=LICENSE, case_resolved_on=dt.date(2026, 6, 30))))
    return out


def write_tasks_file(path: str | Path, environment: Environment) -> Path:
    return write_tasks(path, build_tasks(environment))


def write_suite(dest: str | Path, tau2_source: str | Path) -> Path:
    """Regenerate the suite's authored files: source/*.csv and tasks.jsonl, stamped with the seed hash of the world
    they build (the build stamps its own again; this keeps the shipped file truthful)."""
    import tempfile

    from evalsuite.domains.retail_support import build_world
    from evalsuite.domains.retail_support.seed import write_csv
    from evalsuite.domains.retail_support.tools import DOMAIN

    dest = Path(dest)
    write_csv(dest / "source")
    with tempfile.TemporaryDirectory() as tmp:
        world = build_world(Path(tmp) / "world.sqlite", tau2_source)
    env = Environment(image=DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256=world.seed_sha256)
    return write_tasks_file(dest / "tasks.jsonl", env)
