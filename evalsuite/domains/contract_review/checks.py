"""Grading a review from the memo and the store alone: coverage, source identity, quotation identity, the right
conclusion under the playbook in effect, a qualified cannot_determine where evidence is missing, and a focused
handoff. Each is a domain check a goal state names; the grader reports each as `check <name>`."""
from __future__ import annotations

import sqlite3
from typing import Any

from evalsuite.core.records import Check
from evalsuite.domains.contract_review.tools import DOMAIN
from evalsuite.grading.quotations import quotation_problem
from evalsuite.worlds.domain import CheckInput, dict_rows


def _rows(db: sqlite3.Connection, sql: str, *params: Any) -> list[dict]:
    return dict_rows(db.execute(sql, params))


def _issues(db: sqlite3.Connection, review_id: str) -> list[dict] | None:
    """The memo's issues, each with its quotations; None when no memo was submitted."""
    if not _rows(db, "SELECT review_id FROM memos WHERE review_id = ?", review_id):
        return None
    issues = _rows(db, "SELECT * FROM memo_issues WHERE review_id = ? ORDER BY issue_no", review_id)
    quotes = _rows(db, "SELECT * FROM memo_quotations WHERE review_id = ? ORDER BY issue_no, quote_no", review_id)
    for i in issues:
        i["quotations"] = [q for q in quotes if q["issue_no"] == i["issue_no"]]
    return issues


def _outcome(problems: list[str], ok: str) -> Check:
    return Check.outcome(not problems, "; ".join(problems) if problems else ok)


def _no_memo(review_id: str) -> Check:
    return Check.outcome(False, f"no memo submitted for {review_id}")


@DOMAIN.check
def memo_coverage(inp: CheckInput) -> Check:
    """Every issue the task requires is raised in the memo (params: review_id, issues)."""
    issues = _issues(inp.end, inp.params["review_id"])
    if issues is None:
        return _no_memo(inp.params["review_id"])
    missing = [i for i in inp.params["issues"] if i not in {row["issue"] for row in issues}]
    return _outcome([f"missing issue(s): {', '.join(missing)}"] if missing else [],
                    f"all {len(inp.params['issues'])} required issues raised")


def _authoritative(seed: sqlite3.Connection) -> set[str]:
    """'DOC@VERSION' of every copy the custody records mark authoritative."""
    rows = _rows(seed, "SELECT doc_id, version FROM custody WHERE authoritative = 1")
    return {f"{r['doc_id']}@{r['version']}" for r in rows}


@DOMAIN.check
def memo_sources(inp: CheckInput) -> Check:
    """Each issue names its governing version (params: review_id, governing {issue: ['DOC@V', ...]}), and every
    document the memo cites is an authoritative copy in the custody records, never a competing copy."""
    issues = _issues(inp.end, inp.params["review_id"])
    if issues is None:
        return _no_memo(inp.params["review_id"])
    record, governing, problems = _authoritative(inp.seed), inp.params["governing"], []
    for i in issues:
        cited = f"{i['governing_doc_id']}@{i['governing_version']}"
        if i["issue"] in governing and cited not in governing[i["issue"]]:
            problems.append(f"{i['issue']} cites {cited} as governing; governing: {', '.join(governing[i['issue']])}")
        for doc in sorted(({cited} | {f"{q['doc_id']}@{q['version']}" for q in i["quotations"]}) - record):
            problems.append(f"{i['issue']} cites {doc}, which no custody record marks authoritative")
    return _outcome(problems, "every citation names an authoritative governing version")


@DOMAIN.check
def memo_quotations(inp: CheckInput) -> Check:
    """Every quotation appears verbatim (up to spacing) in the passage at the location it cites (params: review_id)."""
    issues = _issues(inp.end, inp.params["review_id"])
    if issues is None:
        return _no_memo(inp.params["review_id"])
    problems, n = [], 0
    for i in issues:
        for q in i["quotations"]:
            n += 1
            where = f"{q['doc_id']}@{q['version']} {q['location']}"
            found = _rows(inp.seed, "SELECT text FROM passages WHERE doc_id = ? AND version = ? AND location = ?",
                          q["doc_id"], q["version"], q["location"])
            if not found:
                problems.append(f"{i['issue']} quotes {where}, which is no passage in the store")
            elif problem := quotation_problem(q["text"], found[0]["text"], where):
                problems.append(f"{i['issue']} {problem}")
    return _outcome(problems, f"{n} quotation(s) verbatim at their locations")


def playbook_version_in_effect(seed: sqlite3.Connection, review_id: str) -> tuple[str, str]:
    """(playbook version, review date): the version in effect on the request's review date, from the store."""
    date = _rows(seed, "SELECT review_date FROM review_requests WHERE review_id = ?", review_id)[0]["review_date"]
    live = _rows(seed, "SELECT version FROM playbook_versions WHERE effective_from <= ? "
                       "ORDER BY effective_from DESC LIMIT 1", date)
    return live[0]["version"], date


@DOMAIN.check
def memo_conclusions(inp: CheckInput) -> Check:
    """The memo applies the playbook in effect on the review date, and each issue whose evidence is in the store
    reaches the expected conclusion under the expected clause (params: review_id, expected {issue: {conclusion,
    clause}}). An issue the memo leaves out is coverage's failure, not this one's."""
    review_id = inp.params["review_id"]
    issues = _issues(inp.end, review_id)
    if issues is None:
        return _no_memo(review_id)
    problems = []
    version, date = playbook_version_in_effect(inp.seed, review_id)
    applied = _rows(inp.end, "SELECT playbook_version FROM memos WHERE review_id = ?", review_id)[0]["playbook_version"]
    if applied != version:
        problems.append(f"memo applies playbook {applied}; {version} is in effect on {date}")
    for i in issues:
        want = inp.params["expected"].get(i["issue"])
        if want and (i["conclusion"], i["playbook_clause"]) != (want["conclusion"], want["clause"]):
            problems.append(f"{i['issue']}: concluded {i['conclusion']} under {i['playbook_clause']}; "
                            f"{version} requires {want['conclusion']} under {want['clause']}")
    return _outcome(problems, f"conclusions right under playbook {version}")


def _names(exhibit: dict) -> list[str]:
    letter = exhibit["exhibit_id"].rsplit("-", 1)[-1]
    return [exhibit["exhibit_id"].lower(), f"exhibit {letter}".lower(), exhibit["title"].lower()]


@DOMAIN.check
def memo_missing_evidence(inp: CheckInput) -> Check:
    """Where the task's evidence is missing from the store (params: review_id, missing {issue: exhibit_id}), the
    memo concludes cannot_determine and names what is missing; a certain conclusion there is invented."""
    issues = _issues(inp.end, inp.params["review_id"])
    if issues is None:
        return _no_memo(inp.params["review_id"])
    problems = []
    for issue, exhibit_id in inp.params["missing"].items():
        ex = _rows(inp.seed, "SELECT * FROM exhibits WHERE exhibit_id = ?", exhibit_id)
        if not ex or ex[0]["status"] != "unavailable":
            raise ValueError(f"memo_missing_evidence: params.missing.{issue}: {exhibit_id} is not an unavailable "
                             "exhibit of the store")
        for i in (row for row in issues if row["issue"] == issue):
            named = (i["missing_evidence"] or "").lower()
            if i["conclusion"] != "cannot_determine":
                problems.append(f"{issue}: invented certainty: concluded {i['conclusion']} although {exhibit_id} "
                                "is unavailable")
            elif not any(n in named for n in _names(ex[0])):
                problems.append(f"{issue}: cannot_determine without naming the missing {exhibit_id}")
    return _outcome(problems, "missing evidence named, no certainty invented")


@DOMAIN.check
def handoff_focus(inp: CheckInput) -> Check:
    """One handoff to each required team, each on the task's topic, and none elsewhere (params: review_id, teams,
    topic)."""
    rows = _rows(inp.end, "SELECT team, topic FROM handoffs WHERE review_id = ?", inp.params["review_id"])
    teams, topic, problems = inp.params["teams"], inp.params["topic"], []
    for team in teams:
        if not any(r["team"] == team for r in rows):
            problems.append(f"no handoff to {team}")
    for r in rows:
        if r["team"] not in teams:
            problems.append(f"handoff to {r['team']} was not needed")
        elif r["topic"] != topic:
            problems.append(f"handoff to {r['team']} is about {r['topic']}, not {topic}")
    return _outcome(problems, f"focused handoff on {topic} to {' and '.join(teams)}")
