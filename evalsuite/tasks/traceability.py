"""Traceability of a suite's tasks to its process dossier: each requirement stated by a policy clause, enforced
where it restricts an action, verified by a check and exercised by a released task; each clause a task cites
traced back to a requirement; each write permission backed by a requirement; nothing consequential left open;
every table, tool and policy the dossier names one the suite has; and every customization moved whole (policy,
tool authority and expected outcome together) or not at all.

`trace_problems` returns one line per problem (open matters and unknown names first); the gate
requirements_traced (evalsuite.pipeline.stages.process_dossier) blocks on the first and lists the rest.
"""
from __future__ import annotations

from collections.abc import Iterable

from evalsuite.core.records import TaskRecord
from evalsuite.sourcing.dossier import Customization, Dossier, OutcomeMove, PermissionLink, Requirement
from evalsuite.sourcing.policies import PolicyDoc
from evalsuite.worlds.domain import Domain

TABLE = "table:"  # a check link naming a goal-state assertion on a table, not a domain check
UNCHANGED = "unchanged:"  # a check link naming a table the goal state requires unchanged


def trace_problems(dossier: Dossier, tasks: list[TaskRecord], domain: Domain, policies: list[PolicyDoc]) -> list[str]:
    """Every break in the trace, one line each (empty: the suite is traceable). `dossier` as applied to this
    suite (Dossier.applied)."""
    clauses = {c.id for p in policies for c in p.clauses}
    return [*unresolved(dossier), *unknown_names(dossier, domain, policies),
            *(p for r in dossier.requirements for p in requirement_problems(r, tasks, domain, clauses)),
            *uncited_clauses(dossier, tasks), *unbacked_permissions(dossier, tasks, domain),
            *(p for c in dossier.customizations for p in partial_moves(c, tasks))]


def unresolved(dossier: Dossier) -> list[str]:
    """A consequential open question or unresolved contradiction, naming who must resolve it."""
    out = [f"open question {q.id} is consequential and unanswered; {q.owner} must answer it: {q.question}"
           for q in dossier.open_questions if q.consequential and q.status == "open"]
    out += [f"contradiction {c.id} between {' and '.join(c.between)} is consequential and unresolved; {c.resolver} "
            f"must resolve it" for c in dossier.contradictions if c.consequential and c.resolution is None]
    return out


def unknown_names(dossier: Dossier, domain: Domain, policies: list[PolicyDoc]) -> list[str]:
    """A table or tool a system or source names that the domain does not have, or a policy source naming no policy
    of the suite: the dossier describes another process than the one the suite builds."""
    has = {"table": set(domain.tables), "tool": set(domain.tools), "policy": {p.doc for p in policies}}
    named = [(f"system {y.id}", "table", t) for y in dossier.systems for t in y.tables]
    named += [(f"system {y.id}", "tool", t) for y in dossier.systems for t in y.tools]
    named += [(f"source {s.id}", s.kind, s.ref) for s in dossier.sources if s.kind in has]
    return [f"{who} names {kind} {name!r}, which {'the suite' if kind == 'policy' else f'domain {domain.name}'} "
            f"does not have" for who, kind, name in named if name not in has[kind]]


def requirement_problems(r: Requirement, tasks: list[TaskRecord], domain: Domain, clauses: set[str]) -> list[str]:
    links, out = r.links, []
    if not links.clauses:
        out.append(f"requirement {r.id} is stated by no policy clause")
    out += [f"requirement {r.id} cites clause {c}, which no policy of the suite has"
            for c in links.clauses if c not in clauses]
    if r.restricts_action and not (links.tools or any(_restricts(p, domain) for p in links.permissions)):
        lets = " (a role's leave to call a read tool restricts nothing)" if links.permissions else ""
        out.append(f"requirement {r.id} restricts an action, but no tool rule or role permission enforces it{lets}")
    out += [f"requirement {r.id} links tool {t}, which domain {domain.name} does not have"
            for t in links.tools if t not in domain.tools]
    out += [p for link in links.permissions if (p := _permission_problem(r.id, link, tasks))]
    out += _check_problems(r, tasks, domain)
    released = {t.task_id for t in tasks}
    if not links.tasks:
        out.append(f"requirement {r.id} is exercised by no task")
    out += [f"requirement {r.id} links task {t}, which is not in the release" for t in links.tasks
            if t not in released]
    return out


def _restricts(link: PermissionLink, domain: Domain) -> bool:
    """A permission link that can enforce a restriction: one that forbids a tool, or gives a role a write (the one
    way it may act, as a handoff); leave to call a read tool restricts nothing."""
    tool = domain.tools.get(link.tool)
    return not link.may or (tool is not None and tool.kind == "write")


def _permission_problem(rid: str, link: PermissionLink, tasks: list[TaskRecord]) -> str | None:
    playing = [t for t in tasks if t.role.name == link.role]
    if not playing:
        return f"requirement {rid} links role {link.role}, which no released task plays"
    permitting = [t.task_id for t in playing if link.tool in t.role.permitted]
    if link.may and not permitting:
        return f"requirement {rid} says {link.role} may call {link.tool}, but no released task's role permits it"
    if not link.may and permitting:
        return (f"requirement {rid} says {link.role} may not call {link.tool}, but {len(permitting)} task(s) permit "
                f"it, first {permitting[0]}")
    return None


def _check_problems(r: Requirement, tasks: list[TaskRecord], domain: Domain) -> list[str]:
    checks = r.links.checks
    if not checks:
        return [f"requirement {r.id} has no check that verifies it"]
    unknown = [c for c in checks if not _known_check(c, domain)]
    if unknown:
        return [f"requirement {r.id} links check {c}, which domain {domain.name} does not have" for c in unknown]
    used = set().union(*(_checks_of(t) for t in tasks)) if tasks else set()
    if not used & set(checks):
        return [f"requirement {r.id}: none of its checks ({', '.join(checks)}) is in a released task's goal state"]
    return []


def _known_check(link: str, domain: Domain) -> bool:
    for prefix in (TABLE, UNCHANGED):
        if link.startswith(prefix):
            return link.removeprefix(prefix) in domain.tables
    return link in domain.checks


def _checks_of(task: TaskRecord) -> set[str]:
    g = task.goal_state
    return ({c.name for c in g.domain_checks} | {TABLE + a.table for a in [*g.assertions, *g.user_assertions]}
            | {UNCHANGED + t for t in g.unchanged_tables})


def cited_clauses(task: TaskRecord) -> set[str]:
    """Every clause the task's goal state cites."""
    g = task.goal_state
    return ({a.clause for a in [*g.assertions, *g.user_assertions]} | {c.clause for c in g.domain_checks}
            | {o.clause for o in g.required_outputs if o.clause})


def uncited_clauses(dossier: Dossier, tasks: list[TaskRecord]) -> list[str]:
    """A clause a task cites that no requirement states: one line per clause, naming the first task."""
    stated = {c for r in dossier.requirements for c in r.links.clauses}
    first: dict[str, list[str]] = {}
    for t in tasks:
        for c in sorted(cited_clauses(t) - stated):
            first.setdefault(c, []).append(t.task_id)
    return [f"clause {c} is cited by {len(ids)} task(s), first {ids[0]}, but no requirement states it"
            for c, ids in sorted(first.items())]


def unbacked_permissions(dossier: Dossier, tasks: list[TaskRecord], domain: Domain) -> list[str]:
    """A write tool a released task's role permits that no requirement covers (a tool rule it enforces, or a
    permission link saying the role may call it): a permission widened with no requirement behind it."""
    covered = {(p.role, p.tool) for r in dossier.requirements for p in r.links.permissions if p.may}
    enforcing = {t for r in dossier.requirements for t in r.links.tools}
    seen: dict[tuple[str, str], str] = {}
    for t in tasks:
        for tool in t.role.write_tools:
            if tool in domain.tools and (t.role.name, tool) not in covered and tool not in enforcing:
                seen.setdefault((t.role.name, tool), t.task_id)
    return [f"role {role} permits write tool {tool} (first in {tid}), but no requirement covers it"
            for (role, tool), tid in sorted(seen.items())]


def partial_moves(c: Customization, tasks: list[TaskRecord]) -> list[str]:
    """Tasks where the customization moved one or two of policy, tool authority and expected outcome, not all.

    A task is under the customization when it ships with its policy version; tasks of the categories an outcome
    names are judged on the outcome too. Each facet is read from the task record: the policy version, whether the
    role still permits a tool the customization forbids, and whether the goal expects the outcome it declares."""
    out = []
    for t in tasks:
        moves = [m for m in c.outcomes if t.category in m.categories]
        facets = {"policy": (t.policy.doc, t.policy.version) == (c.policy.doc, c.policy.version)}
        if t.role.name == c.tool_authority.role:
            facets["tool authority"] = not set(c.tool_authority.forbid) & t.role.permitted
        if moves:
            facets["expected outcome"] = all(_outcome_moved(t, m) for m in moves)
        if len(set(facets.values())) > 1:
            moved = [f for f, v in facets.items() if v]
            still = [f for f, v in facets.items() if not v]
            out.append(f"task {t.task_id}: customization {c.id} moved the {_join(moved, 'and')} without the "
                       f"{_join(still, 'or')}")
    return out


def _outcome_moved(task: TaskRecord, move: OutcomeMove) -> bool:
    g = task.goal_state
    verified = any(d.name == move.check and d.clause == move.clause for d in g.domain_checks)
    expects_rows = any(a.table in move.no_rows_in and a.row_count != 0 for a in g.assertions)
    return verified and not expects_rows


def _join(items: Iterable[str], word: str) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}"
