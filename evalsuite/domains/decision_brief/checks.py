"""Grading a brief from the brief, the seed and the trace alone, each part its own domain check (reported as
`check <name>`): quotations verbatim in their sources, every cited source opened in the trial, required facts
covered, planted conflicts named, unsettleable questions left unknown, and the decision the policy's rule gives."""
from __future__ import annotations

import json
import sqlite3

from evalsuite.core.records import Check
from evalsuite.domains.decision_brief.tools import DOMAIN
from evalsuite.grading.quotations import quotation_problem, words
from evalsuite.worlds.domain import CheckInput, dict_rows


def submitted(db: sqlite3.Connection, request_id: str) -> dict | None:
    """The brief of a request with its parts as lists; None when none was submitted."""
    rows = dict_rows(db.execute("SELECT * FROM briefs WHERE request_id = ?", (request_id,)))
    if not rows:
        return None
    return {**rows[0], **{k: json.loads(rows[0][k]) for k in ("claims", "conflicts", "unknowns")}}


def _judged(inp: CheckInput, judge, grounding: bool = False) -> Check:
    """Run `judge(brief) -> (problems, ok)` on the task's brief. No brief fails every check but the grounding
    ones: with nothing quoted there is nothing ungrounded (the other checks fail the trial)."""
    brief = submitted(inp.end, inp.params["request_id"])
    if brief is None:
        rid = inp.params["request_id"]
        return Check.outcome(grounding, f"no brief submitted for {rid}" + (": nothing quoted" if grounding else ""))
    problems, ok = judge(brief)
    return Check.outcome(not problems, "; ".join(problems) if problems else ok)


def opened(inp: CheckInput) -> set[str]:
    """The sources this trial's agent opened and read (a search snippet is not an opening)."""
    return {e.arguments.get("source_id") for e in inp.trace
            if e.tool == "open_source" and e.outcome == "ok" and e.actor == "agent"}


def cited(brief: dict) -> list[str]:
    """Every source a brief cites, a claim's or a conflict's, once each in order."""
    ids = [c["source_id"] for c in brief["claims"]] + [x for c in brief["conflicts"] for x in c["sources"]]
    return list(dict.fromkeys(ids))


@DOMAIN.check
def brief_quotations(inp: CheckInput) -> Check:
    """Every claim's quotation stands verbatim (up to spacing) in the text of the source it cites (params:
    request_id)."""
    def judge(brief):
        problems = []
        for c in brief["claims"]:
            rows = dict_rows(inp.seed.execute("SELECT text, available FROM sources WHERE source_id = ?",
                                              (c["source_id"],)))
            if not rows or not rows[0]["available"]:
                problems.append(f"{c['question']} cites {c['source_id']}, which is no available source")
            elif problem := quotation_problem(c["quotation"], rows[0]["text"], c["source_id"]):
                problems.append(f"{c['question']} {problem}")
        return problems, f"{len(brief['claims'])} quotation(s) verbatim in their sources"
    return _judged(inp, judge, grounding=True)


@DOMAIN.check
def brief_sources_opened(inp: CheckInput) -> Check:
    """Every source the brief cites (a claim's, a conflict's) was opened in this trial (params: request_id)."""
    def judge(brief):
        seen = opened(inp)
        return ([f"cites {x}, which was not opened in this trial (a search snippet is not an inspection)"
                 for x in cited(brief) if x not in seen], "every cited source was opened")
    return _judged(inp, judge, grounding=True)


@DOMAIN.check
def brief_coverage(inp: CheckInput) -> Check:
    """Every required fact is claimed: a claim on its question citing a source that states it, whose quotation
    holds the figure (params: request_id, facts [{question, figure, sources}])."""
    def judge(brief):
        problems = []
        for f in inp.params["facts"]:
            if not any(c["question"] == f["question"] and c["source_id"] in f["sources"]
                       and f["figure"] in words(c["quotation"]) for c in brief["claims"]):
                problems.append(f"required fact not covered: {f['question']} ({f['figure']}, stated in "
                                f"{' or '.join(f['sources'])})")
        return problems, f"all {len(inp.params['facts'])} required fact(s) claimed"
    return _judged(inp, judge)


@DOMAIN.check
def brief_conflicts(inp: CheckInput) -> Check:
    """Every planted conflict is named on its question with both sources (params: request_id, conflicts
    [{question, sources}])."""
    def judge(brief):
        problems = [f"conflict on {want['question']} between {' and '.join(want['sources'])} not named"
                    for want in inp.params["conflicts"]
                    if not any(c["question"] == want["question"] and set(want["sources"]) <= set(c["sources"])
                               for c in brief["conflicts"])]
        return problems, f"{len(inp.params['conflicts'])} conflict(s) named with both sources"
    return _judged(inp, judge)


@DOMAIN.check
def brief_unknowns(inp: CheckInput) -> Check:
    """Every question the available sources cannot settle is listed as unknown with why, and no claim answers it:
    an answer there is invented certainty (params: request_id, unknowns [question])."""
    def judge(brief):
        problems = []
        listed = {u["question"] for u in brief["unknowns"] if u["why"].strip()}
        for q in inp.params["unknowns"]:
            answers = [c["source_id"] for c in brief["claims"] if c["question"] == q]
            if answers:
                problems.append(f"{q} answered with certainty (a claim citing {', '.join(answers)}), though no "
                                "available source settles it")
            if q not in listed:
                problems.append(f"{q} not listed as unknown")
        return problems, f"{len(inp.params['unknowns'])} unsettleable question(s) left unknown"
    return _judged(inp, judge)


@DOMAIN.check
def brief_decision(inp: CheckInput) -> Check:
    """The decision is the one the policy's decision rule gives (params: request_id, decision, basis)."""
    def judge(brief):
        want = inp.params["decision"]
        if brief["decision"] != want:
            return [f"decision {brief['decision']}; the policy's rule gives {want}: {inp.params['basis']}"], ""
        return [], f"decision {want}: {inp.params['basis']}"
    return _judged(inp, judge)
