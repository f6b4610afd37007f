"""Tasks from the research desk's verified briefs: the request is the trigger, the brief the reference solution,
and what it states the answer key, each part checked first against the sources and the policy in effect on the day
the brief was resolved. A brief that fails a check is skipped and counted, never shipped as a task no careful
analyst could pass. The reference holds only what the task requires: the figures the decision rule needs, the
planted conflicts, the unsettleable questions."""
from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from decimal import Decimal, InvalidOperation

from evalsuite.core.records import (
    Assertion,
    DomainCheck,
    GoalState,
    MaskedField,
    NegativeControl,
    Provenance,
    TaskRecord,
    ToolCall,
    Trigger,
)
from evalsuite.domains.decision_brief import schema as s
from evalsuite.domains.decision_brief.checks import cited
from evalsuite.domains.decision_brief.tools import DOMAIN, ROLE
from evalsuite.grading.quotations import quotation_problem, words
from evalsuite.sourcing.policies import PolicyDoc, PolicyError, policy_in_effect
from evalsuite.tasks.derivation import Derivation, DeriveContext
from evalsuite.tasks.splits import assign_split

SUMMARY = MaskedField(field="briefs.summary", justification="free text the analyst writes; the brief's decision "
                      "and parts are what the checks grade")


class Unfit(Exception):
    """Why a recorded brief cannot become a task (the reason it is counted under)."""


def decide(rules: dict, figures: dict[str, str], unknown: set[str]) -> tuple[str, str]:
    """(decision, basis) under a question type's rule (research_policy RB-6): decline when a settled figure misses
    its limit, else defer when a needed figure is unknown, else proceed."""
    basis, missed, unsettled = [], False, False
    for q, rule in sorted(rules.items()):
        if q in unknown or q not in figures:
            unsettled = True
            basis.append(f"{q} ({rule['figure']}) cannot be settled")
            continue
        value = Decimal(figures[q])
        limit, ok = (rule["max"], value <= Decimal(str(rule["max"]))) if "max" in rule else \
            (rule["min"], value >= Decimal(str(rule["min"])))
        missed |= not ok
        op = ("≤" if ok else ">") if "max" in rule else ("≥" if ok else "<")
        basis.append(f"{q} {rule['figure']} {figures[q]} {op} {limit}")
    decision = "decline" if missed else "defer" if unsettled else "proceed"
    return decision, "; ".join(basis) + f" (RB-6: {decision})"


def _by_request(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        out[r["request_id"]].append(r)
    return out


def _checked(sources: dict[str, dict], claims: list[dict], conflicts: list[dict], unknowns: list[dict]) -> None:
    """Raise Unfit unless every recorded part stands on the sources: quotations verbatim in available sources and
    holding their figure, the newer of two conflicting sources claimed, no unknown answered."""
    for c in claims:
        try:
            Decimal(c["figure"])
        except (InvalidOperation, TypeError):
            raise Unfit("a recorded figure is not a number") from None
        src = sources.get(c["source_id"])
        if src is None or not int(src["available"]):
            raise Unfit("a recorded claim cites no available source")
        if quotation_problem(c["quotation"], src["text"], c["source_id"]) or c["figure"] not in words(c["quotation"]):
            raise Unfit("a recorded quotation is not verbatim in its source")
    claimed = {c["question"]: c["source_id"] for c in claims}
    for k in conflicts:
        if k["source_a"] not in sources or k["source_b"] not in sources:
            raise Unfit("a recorded conflict names a source not in the catalogue")
        pair = sorted((k["source_a"], k["source_b"]), key=lambda x: sources[x]["published_on"])
        if claimed.get(k["question"]) != pair[-1]:
            raise Unfit("a recorded claim rests on the older of two conflicting sources")
    if {u["question"] for u in unknowns} & set(claimed):
        raise Unfit("a recorded brief answers a question it lists as unknown")


def _brief(rid: str, case: dict, claims: list[dict], conflicts: list[dict], unknowns: list[dict]) -> dict:
    return dict(request_id=rid, decision=case["decision"], summary=case["summary"],
                claims=[{k: c[k] for k in ("question", "statement", "source_id", "quotation")} for c in claims],
                conflicts=[dict(question=k["question"], sources=[k["source_a"], k["source_b"]], about=k["about"])
                           for k in conflicts],
                unknowns=[{k: u[k] for k in ("question", "why")} for u in unknowns])


def _reads(request: dict, opens: list[str]) -> list[ToolCall]:
    calls = [ToolCall(tool="get_request", arguments={"request_id": request["request_id"]}),
             ToolCall(tool="search_sources", arguments={"query": request["subject"]})]
    return calls + [ToolCall(tool="open_source", arguments={"source_id": x}) for x in opens]


def _submit(brief: dict) -> ToolCall:
    return ToolCall(tool="submit_brief", arguments=brief)


def _other_sentence(quote: str, text: str, figure: str) -> str:
    """Another sentence of the source holding the figure, for a lawful brief quoting elsewhere; else the quote."""
    for sentence in text.split(". "):
        if figure in sentence and words(quote) not in words(sentence) and len(sentence.split()) >= 3:
            return sentence.rstrip(".")
    return quote


def _alternative(request: dict, brief: dict, sources: dict[str, dict], figures: dict[str, str]) -> list[ToolCall]:
    """Another lawful brief: other searches, the sources opened in reverse order, the claims reversed and quoting
    another sentence where the source states the figure twice, each conflict's sources the other way round."""
    claims = [{**c, "quotation": _other_sentence(c["quotation"], sources[c["source_id"]]["text"],
                                                 figures[c["question"]])} for c in reversed(brief["claims"])]
    conflicts = [{**k, "sources": list(reversed(k["sources"]))} for k in brief["conflicts"]]
    calls = [ToolCall(tool="search_sources", arguments={"query": w}) for w in (request["subject"], "percent")]
    calls += [ToolCall(tool="open_source", arguments={"source_id": x}) for x in reversed(cited(brief))]
    return calls + [_submit({**brief, "claims": claims, "conflicts": conflicts})]


def _one_word_off(quote: str) -> str:
    """The quotation with one word (one without a digit, so the figure stays) replaced."""
    ws = quote.split(" ")
    i = next(i for i in [len(ws) // 2, *range(len(ws))] if not any(ch.isdigit() for ch in ws[i]))
    ws[i] = "nearly" if ws[i] != "nearly" else "about"
    return " ".join(ws)


def _rumour(request: dict, sources: list[dict], cites: list[str]) -> dict | None:
    """The newest available source on the request's subject that the brief does not cite (the unconfirmed account
    of the unsettleable question), if there is one."""
    found = [x for x in sources if int(x["available"]) and x["source_id"] not in cites
             and request["subject"] in (x["text"] or "")]
    return max(found, key=lambda x: x["published_on"]) if found else None


def _controls(request: dict, brief: dict, reads: list[ToolCall], unknowns: list[str], answer: str,
              rumour: dict | None) -> list[NegativeControl]:
    """The near misses acceptance must see fail, each for the reason its name gives."""
    first, *rest = brief["claims"]
    flipped = {"proceed": "decline", "decline": "proceed", "defer": "proceed"}[brief["decision"]]
    off = {**first, "quotation": _one_word_off(first["quotation"])}
    wrong = {
        "quotation_one_word_off": (reads, {**brief, "claims": [off, *rest]}),
        "dropped_claim": (reads, {**brief, "claims": brief["claims"][:-1]}),
        "snippet_only": ([c for c in reads if c.arguments.get("source_id") != first["source_id"]], brief),
        "flipped_decision": (reads, {**brief, "decision": flipped}),
    }
    if brief["conflicts"]:
        wrong["dropped_conflict"] = (reads, {**brief, "conflicts": []})
    if rumour is not None and unknowns:  # the last unknown (the one no figure hangs on) answered from the rumour
        q, sentence = unknowns[-1], rumour["text"].split(". ")[0]
        answered = {"question": q, "statement": sentence, "source_id": rumour["source_id"], "quotation": sentence}
        wrong["unknown_answered"] = (reads + [ToolCall(tool="open_source",
                                                       arguments={"source_id": rumour["source_id"]})],
                                     {**brief, "claims": [*brief["claims"], answered],
                                      "unknowns": [u for u in brief["unknowns"] if u["question"] != q]})
    return [NegativeControl(name=n, calls=calls + [_submit(b)], final_message=answer)
            for n, (calls, b) in wrong.items()]


def _goal(rid: str, brief: dict, facts: list[dict], decision: str, basis: str) -> GoalState:
    key = {"request_id": rid}
    conflicts = [{"question": k["question"], "sources": k["sources"]} for k in brief["conflicts"]]
    checks = [DomainCheck(name="brief_quotations", params=key, clause="RB-2"),
              DomainCheck(name="brief_sources_opened", params=key, clause="RB-2"),
              DomainCheck(name="brief_coverage", params={**key, "facts": facts}, clause="RB-3"),
              DomainCheck(name="brief_conflicts", params={**key, "conflicts": conflicts}, clause="RB-4"),
              DomainCheck(name="brief_unknowns", params={**key, "unknowns": [u["question"] for u in brief["unknowns"]]},
                          clause="RB-5"),
              DomainCheck(name="brief_decision", params={**key, "decision": decision, "basis": basis}, clause="RB-6")]
    return GoalState(assertions=[Assertion(table="briefs", key=key, row_count=1, clause="RB-1")], domain_checks=checks,
                     unchanged_tables=[*s.STORE, "purchases"], volatile_fields_masked=[SUMMARY],
                     annotations=[basis] + [f"conflict on {k['question']}: {k['about']}" for k in brief["conflicts"]])


def _trigger(request: dict) -> Trigger:
    return Trigger(type="queue_item", item_id=request["request_id"],
                   text=f"Research request {request['request_id']} ({request['requested_on']}): "
                        f"{request['decision_question']}\n{request['questions']}\n"
                        "Answer with one decision brief under the research policy.")


def derive_tasks(tables: dict[str, list[dict]], policies: list[PolicyDoc], ctx: DeriveContext) -> Derivation:
    """One task per verified brief whose every part stands on the sources and whose decision the policy in effect
    on its day gives."""
    sources = {r["source_id"]: r for r in tables["sources"]}
    requests = {r["request_id"]: r for r in tables["research_requests"]}
    parts = {t: _by_request(tables[t]) for t in ("recorded_claims", "recorded_conflicts", "recorded_unknowns")}
    tasks, skipped = [], Counter()
    for case in sorted(tables["recorded_briefs"], key=lambda c: c["request_id"]):
        rid = case["request_id"]
        if not case.get("verified_by"):
            skipped["brief not verified"] += 1
            continue
        try:
            tasks.append(_task(case, requests.get(rid), sources, [sorted(parts[t].get(rid, []), key=_order)
                                                                  for t in parts], policies, ctx))
        except Unfit as why:
            skipped[str(why)] += 1
    return Derivation(tasks=tasks, skipped=dict(skipped))


def _rules(policy: PolicyDoc, qtype: str) -> dict:
    """The policy's decision rule of a question type: each question's figure with a `max` or a `min` limit."""
    rule = policy.params.get("rules", {}).get(qtype)
    where = f"policy {policy.doc} {policy.version}: params.rules.{qtype}"
    if not isinstance(rule, dict) or not rule:
        raise PolicyError(f"{where}: no decision rule for this question type")
    for q, limit in rule.items():
        if not isinstance(limit, dict) or len({"max", "min"} & set(limit)) != 1 or "figure" not in limit:
            raise PolicyError(f"{where}.{q}: give the figure and one of max or min")
    return rule


def _order(row: dict):
    return (row.get("claim_no") or 0, row["question"])


def _task(case: dict, request: dict | None, sources: dict[str, dict], parts: list[list[dict]],
          policies: list[PolicyDoc], ctx: DeriveContext) -> TaskRecord:
    claims, conflicts, unknowns = parts
    if request is None:
        raise Unfit("its research request is not in the records")
    _checked(sources, claims, conflicts, unknowns)
    resolved = dt.date.fromisoformat(str(case["resolved_on"])[:10])
    policy = policy_in_effect(policies, resolved)
    figures = {c["question"]: c["figure"] for c in claims}
    decision, basis = decide(_rules(policy, request["question_type"]), figures, {u["question"] for u in unknowns})
    if decision != case["decision"]:
        raise Unfit("recorded decision contradicts the policy in effect")
    rid = request["request_id"]
    brief = _brief(rid, case, claims, conflicts, unknowns)
    reads = _reads(request, cited(brief))
    answer = f"Brief {rid} submitted: {decision}. {case['summary']}"
    facts = [{"question": c["question"], "figure": c["figure"], "sources": [c["source_id"]]} for c in claims]
    rumour = _rumour(request, list(sources.values()), cited(brief))
    return TaskRecord(
        task_id=f"brief-{rid.split('-')[-1]}", domain=DOMAIN.name, suite=ctx.suite,
        split=assign_split(rid, ctx.seed, ctx.splits), category=request["question_type"],
        environment=ctx.environment, role=ROLE, policy=policy.as_policy(), trigger=_trigger(request),
        goal_state=_goal(rid, brief, facts, decision, basis), reference_solution=[*reads, _submit(brief)],
        reference_answer=answer, alternative_solutions=[_alternative(request, brief, sources, figures)],
        negative_controls=_controls(request, brief, reads, [u["question"] for u in unknowns], answer, rumour),
        trial_protocol=ctx.protocol,
        provenance=Provenance(source_record=f"recorded_briefs:{rid}", outcome_verified_by=case["verified_by"],
                              license_ref=ctx.license_ref, deidentification=ctx.deidentification,
                              case_resolved_on=resolved))
