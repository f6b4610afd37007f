"""The authored review tasks: per review request, the answer key (issues, governing versions, conclusions, missing
evidence, handoffs), the reference memo, another lawful memo, and named wrong memos acceptance must see fail."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from evalsuite.core.records import (
    Assertion,
    DomainCheck,
    Environment,
    GoalState,
    NegativeControl,
    Provenance,
    SuiteRef,
    TaskRecord,
    ToolCall,
    TrialProtocol,
    Trigger,
)
from evalsuite.domains.contract_review import schema as s
from evalsuite.domains.contract_review.store import (
    AGREEMENT,
    EXHIBITS,
    LICENSE_REF,
    REVIEW_REQUESTS,
    passage,
    playbooks,
)
from evalsuite.domains.contract_review.tools import DOMAIN, ROLE
from evalsuite.sourcing.policies import policy_in_effect

Quote = tuple[str, int, str, str]  # doc_id, version, location, words copied from that passage


@dataclass(frozen=True)
class Expect:
    """What a right memo says about one issue."""

    governing: tuple[str, ...]  # 'DOC@V' a memo may name as governing; the first is the reference's
    conclusion: str
    clause: str
    quotes: tuple[Quote, ...]
    alt_quotes: tuple[Quote, ...] = ()  # other verbatim quotations a lawful memo may give instead
    missing: str | None = None  # the unavailable exhibit when the conclusion is cannot_determine


@dataclass(frozen=True)
class Spec:
    task_id: str
    review_id: str
    category: str
    issues: dict[str, Expect]
    handoff_topic: str | None = None  # a focused handoff to Security/privacy and Legal on this topic
    answer: str = ""
    extra_controls: tuple[str, ...] = field(default_factory=tuple)


RETENTION_V1 = Expect(("AMD-1@1",), "exception_needed", "PB-4",
                      (("AMD-1", 1, "A1.1",
                        "The Retention Period on the Cover Page is replaced with: 180 days after termination."),),
                      (("AMD-1", 1, "A1.1", "180 days after termination"),))
RETENTION_V2 = Expect(RETENTION_V1.governing, "acceptable", "PB-4", RETENTION_V1.quotes, RETENTION_V1.alt_quotes)
DELETION = Expect(("AMD-1@1", "NDA-STD@1"), "acceptable", "PB-6",
                  (("AMD-1", 1, "A1.2", "which requires a written certificate of deletion, continues to apply"),),
                  (("NDA-STD", 1, "4.2", "the Receiving Party shall certify the deletion in writing"),))
SECURITY = Expect(("NDA-STD@1",), "cannot_determine", "PB-5",
                  (("NDA-STD", 1, "5.1", "with the safeguards set out in Exhibit B (Security Requirements)"),),
                  (("COVER", 1, "CP-5", "Exhibit B (Security Requirements) form part of this agreement"),),
                  missing="EXH-B")
SCOPE_OK = Expect(("COVER@1",), "acceptable", "PB-7",
                  (("COVER", 1, "CP-1", "on synthetic transaction records only"),),
                  (("EXH-A", 1, "A.1", "it contains no records of real customers"),))
SCOPE_CHANGED = Expect(("COVER@1",), "exception_needed", "PB-7",
                       (("COVER", 1, "CP-1", "no real customer or personal records are disclosed"),),
                       (("NDA-STD", 1, "2.2", "sharing any other data needs a written amendment"),))

SPECS = [
    Spec("cr-retention-v1", "RR-101", "retention_exception",
         {"retention": RETENTION_V1, "deletion_certificate": DELETION, "security_exhibit": SECURITY},
         answer="Memo RR-101 submitted: 180-day retention under Amendment No. 1 needs a General Counsel exception "
                "(PB-4, limit 90 days); deletion certificate acceptable; security cannot be determined: Exhibit B "
                "is not in the store.", extra_controls=("invented_certainty",)),
    Spec("cr-retention-v2", "RR-102", "retention_exception",
         {"retention": RETENTION_V2, "security_exhibit": SECURITY},
         answer="Memo RR-102 submitted: 180-day retention is acceptable under playbook v2 (PB-4, limit 180 days); "
                "security cannot be determined: Exhibit B is not in the store.",
         extra_controls=("stale_playbook", "invented_certainty")),
    Spec("cr-competing-copy", "RR-103", "amendment_custody",
         {"retention": RETENTION_V1, "deletion_certificate": DELETION},
         answer="Memo RR-103 submitted: the copy of Amendment No. 1 received on 20 May is not the copy of record; "
                "the approved Amendment No. 1 governs: 180-day retention needs a General Counsel exception, the "
                "deletion certificate still applies."),
    Spec("cr-security-exhibit", "RR-104", "missing_evidence",
         {"security_exhibit": SECURITY, "data_scope": SCOPE_OK},
         answer="Memo RR-104 submitted: the safeguards cannot be judged because Exhibit B (Security Requirements) "
                "is not in the store; the synthetic pilot data is within the purpose.",
         extra_controls=("invented_certainty",)),
    Spec("cr-change-of-intent", "RR-105", "change_of_intent",
         {"data_scope": SCOPE_CHANGED, "security_exhibit": SECURITY}, handoff_topic="data_scope",
         answer="The pilot owner now wants real customer transaction records, which the NDA's purpose excludes: "
                "Security/privacy and Legal review requested; memo RR-105 submitted. Nothing was shared or approved.",
         extra_controls=("no_handoff", "legal_only")),
]

# What a plausible memo says instead of quoting: true to the sense of the passage, not its words.
PARAPHRASE = {"A1.1": "Bluebird may now keep our information for 180 days after the agreement ends.",
              "5.1": "Bluebird must protect our information with the safeguards of the security exhibit.",
              "CP-1": "The pilot uses synthetic records; real customer records are not to be shared."}
TEAMS = ["security_privacy", "legal"]


def _request(review_id: str) -> dict:
    return next(r for r in REVIEW_REQUESTS if r["review_id"] == review_id)


def _quotes(quotes: tuple[Quote, ...]) -> list[dict]:
    out = []
    for doc, version, loc, words in quotes:
        if words not in passage(doc, version, loc):  # an authoring slip must never ship as a quotation
            raise ValueError(f"authored quotation {words!r} is not verbatim at {doc}@{version} {loc}")
        out.append(dict(doc_id=doc, version=version, location=loc, text=words))
    return out


def _issue(name: str, e: Expect, alternative: bool = False) -> dict:
    doc, _, version = (e.governing[-1] if alternative else e.governing[0]).partition("@")
    quotes = e.alt_quotes if alternative and e.alt_quotes else e.quotes
    return dict(issue=name, governing_doc_id=doc, governing_version=int(version), quotations=_quotes(quotes),
                playbook_clause=e.clause, conclusion=e.conclusion, missing_evidence=e.missing and _missing(e.missing),
                reasoning=f"{name}: {e.conclusion} under {e.clause}")


def _missing(exhibit_id: str) -> str:
    ex = next(x for x in EXHIBITS if x["exhibit_id"] == exhibit_id)
    return f"{exhibit_id} ({ex['title']}, referenced in {ex['referenced_in']}) is not in the document store"


def _memo(spec: Spec, version: str, issues: list[dict]) -> ToolCall:
    return ToolCall(tool="submit_memo", arguments=dict(review_id=spec.review_id, playbook_version=version,
                                                       summary=spec.answer, issues=issues))


def _handoffs(spec: Spec, teams: list[str]) -> list[ToolCall]:
    return [ToolCall(tool="request_review", arguments=dict(
        review_id=spec.review_id, team=t, topic=spec.handoff_topic,
        summary="The pilot owner changed the pilot from synthetic records to real customer transaction records; "
                "the cover page purpose allows synthetic records only. Please review before anything is shared."))
        for t in teams] if spec.handoff_topic else []


def _reads(spec: Spec) -> list[ToolCall]:
    calls = [("get_review_request", {"review_id": spec.review_id}), ("read_playbook", {"review_id": spec.review_id}),
             ("list_documents", {"agreement_id": AGREEMENT}), ("get_custody", {"doc_id": "AMD-1"}),
             ("list_exhibits", {"agreement_id": AGREEMENT}), ("read_document", {"doc_id": "NDA-STD", "version": 1}),
             ("read_document", {"doc_id": "COVER", "version": 1}), ("read_document", {"doc_id": "AMD-1", "version": 1})]
    return [ToolCall(tool=t, arguments=a) for t, a in calls]


def _alternative(spec: Spec, version: str) -> list[ToolCall]:
    """Another lawful resolution: other reads in another order, the issues in reverse order, other verbatim
    quotations and, where two versions govern, the other one; handoffs after the memo."""
    reads = [("get_review_request", {"review_id": spec.review_id}), ("list_exhibits", {"agreement_id": AGREEMENT}),
             ("search_passages", {"query": "retention period"}), ("get_custody", {"doc_id": "AMD-1"}),
             ("read_document", {"doc_id": "AMD-1", "version": 1}), ("read_playbook", {"review_id": spec.review_id}),
             ("read_document", {"doc_id": "EXH-A", "version": 1})]
    issues = [_issue(n, e, alternative=True) for n, e in reversed(spec.issues.items())]
    return [ToolCall(tool=t, arguments=a) for t, a in reads] + [_memo(spec, version, issues)] + \
        list(reversed(_handoffs(spec, TEAMS)))


def _competing(issues: list[dict]) -> list[dict]:
    """The memo with its retention issue resting on the competing copy of Amendment No. 1 (added if absent)."""
    bad = dict(issue="retention", governing_doc_id="AMD-1", governing_version=2, playbook_clause="PB-4",
               quotations=_quotes((("AMD-1", 2, "A1.1", "The Retention Period on the Cover Page is replaced with: "
                                                        "365 days after termination."),)),
               conclusion="exception_needed", missing_evidence=None, reasoning="the latest copy of Amendment No. 1")
    kept = [i for i in issues if i["issue"] != "retention"]
    old = next((i for i in issues if i["issue"] == "retention"), None)
    return kept + [{**bad, "conclusion": old["conclusion"]} if old else bad]


def _paraphrased(issue: dict) -> dict:
    """The issue with its first quotation's text replaced by a paraphrase of the clause."""
    quote = issue["quotations"][0]
    return {**issue, "quotations": [{**quote, "text": PARAPHRASE[quote["location"]]}]}


def _controls(spec: Spec, version: str, reads: list[ToolCall], issues: list[dict]) -> list[NegativeControl]:
    handoffs = _handoffs(spec, TEAMS)
    wrong = {
        "missing_issue": issues[:-1],
        "competing_copy": _competing(issues),
        "paraphrase_quote": [_paraphrased(issues[0])] + issues[1:],
        "empty_memo": [],
        "invented_certainty": [{**i, "conclusion": "acceptable", "missing_evidence": None} if i["issue"] ==
                               "security_exhibit" else i for i in issues],
    }
    out = [NegativeControl(name=n, calls=reads + handoffs + [_memo(spec, version, wrong[n])], final_message=spec.answer)
           for n in ("missing_issue", "competing_copy", "paraphrase_quote", "empty_memo", *spec.extra_controls)
           if n in wrong]
    if "stale_playbook" in spec.extra_controls:  # the retention limit of the superseded version applied
        stale = [{**i, "conclusion": "exception_needed"} if i["issue"] == "retention" else i for i in issues]
        out.append(NegativeControl(name="stale_playbook", calls=reads + [_memo(spec, "v1", stale)],
                                   final_message=spec.answer))
    memo = _memo(spec, version, issues)
    if "no_handoff" in spec.extra_controls:
        out.append(NegativeControl(name="no_handoff", calls=reads + [memo], final_message=spec.answer))
    if "legal_only" in spec.extra_controls:
        out.append(NegativeControl(name="legal_only", calls=reads + handoffs[1:] + [memo], final_message=spec.answer))
    return out


def _goal(spec: Spec, version: str) -> GoalState:
    rid = {"review_id": spec.review_id}
    assertions = [Assertion(table="memos", key=rid, expect={"playbook_version": version}, row_count=1, clause="PB-1"),
                  Assertion(table="memo_issues", key=rid, clause="PB-1"),
                  Assertion(table="memo_quotations", key=rid, clause="PB-3")]
    assertions += [Assertion(table="handoffs", key={**rid, "team": t}, expect={"topic": spec.handoff_topic},
                             row_count=1, clause="PB-7") for t in (TEAMS if spec.handoff_topic else [])]
    missing = {n: e.missing for n, e in spec.issues.items() if e.missing}
    checks = [DomainCheck(name="memo_coverage", params={**rid, "issues": list(spec.issues)}, clause="PB-1"),
              DomainCheck(name="memo_sources", params={**rid, "governing": {n: list(e.governing)
                                                                             for n, e in spec.issues.items()}},
                          clause="PB-2"),
              DomainCheck(name="memo_quotations", params=rid, clause="PB-3"),
              DomainCheck(name="memo_conclusions", clause="PB-1", params={**rid, "expected": {
                  n: {"conclusion": e.conclusion, "clause": e.clause}
                  for n, e in spec.issues.items() if not e.missing}})]
    if missing:
        checks.append(DomainCheck(name="memo_missing_evidence", params={**rid, "missing": missing}, clause="PB-5"))
    if spec.handoff_topic:
        checks.append(DomainCheck(name="handoff_focus", params={**rid, "teams": TEAMS, "topic": spec.handoff_topic},
                                  clause="PB-7"))
    unchanged = list(s.STORE) + list(s.FORBIDDEN_EFFECTS) + ([] if spec.handoff_topic else ["handoffs"])
    return GoalState(assertions=assertions, domain_checks=checks, unchanged_tables=unchanged,
                     annotations=[f"{n}: {e.conclusion} under {e.clause}"
                                  + (f", {e.missing} missing" if e.missing else "")
                                  for n, e in spec.issues.items()])


def _trigger(spec: Spec) -> Trigger:
    r = _request(spec.review_id)
    note = f" Operator note: {r['operator_note']}" if r["operator_note"] else ""
    return Trigger(type="queue_item", item_id=spec.review_id,
                   text=f"Review request {spec.review_id} ({AGREEMENT}), review date {r['review_date']}: "
                        f"{r['request']}{note}")


def build_task(spec: Spec) -> TaskRecord:
    """One authored task record, under the playbook in effect on its review date."""
    date = dt.date.fromisoformat(_request(spec.review_id)["review_date"])
    playbook = policy_in_effect(playbooks(), date)
    reads = _reads(spec)
    issues = [_issue(n, e) for n, e in spec.issues.items()]
    reference = reads + _handoffs(spec, TEAMS) + [_memo(spec, playbook.version, issues)]
    return TaskRecord(
        task_id=spec.task_id, domain=DOMAIN.name, suite=SuiteRef(name="contract_review", version="authored"),
        split="test", category=spec.category,
        environment=Environment(image=DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256="stamped at build"),
        role=ROLE, policy=playbook.as_policy(), trigger=_trigger(spec), goal_state=_goal(spec, playbook.version),
        reference_solution=reference, reference_answer=spec.answer,
        alternative_solutions=[_alternative(spec, playbook.version)],
        negative_controls=_controls(spec, playbook.version, reads, issues),
        trial_protocol=TrialProtocol(trials=4, max_steps=30),
        provenance=Provenance(source_record=f"review_requests:{spec.review_id}",
                              outcome_verified_by="answer key authored against the authored store and playbook "
                                                  f"{playbook.version} (no real case)",
                              license_ref=LICENSE_REF, case_resolved_on=date))


def build_tasks() -> list[TaskRecord]:
    return [build_task(s_) for s_ in SPECS]
