"""Acceptance: every task proven solvable, stable, resettable and not trivially passable.

Each check runs in a freshly reset world and leaves a recorded result with its
evidence. A task failing any check is quarantined with its reasons; nothing is
scored on a task the suite cannot stand behind.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel

from evalsuite.trials.agents.baselines import make_agent
from evalsuite.core.records import TaskRecord
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.reviews import ReviewEntry, by_task, review_state
from evalsuite.trials.trial import TrialResult, run_trial
from evalsuite.worlds.world import World

# A runner takes tasks and {agent name: trials per task} and returns every trial's result.
Runner = Callable[[list[TaskRecord], Mapping[str, int]], list[TrialResult]]


class GoldError(BaseModel):
    action_id: str | None
    tool: str
    error: str


class TaskAudit(BaseModel):
    task_id: str
    reference_passes: int
    reference_trials: int
    reference_stable: bool
    gold_replay_errors: list[GoldError]
    noop_passes: bool
    adversary_passes: bool
    resettable: bool
    fields_justified: bool
    assertions_cite_policy: bool
    adjudicated: bool
    quarantined: bool
    reasons: list[str]
    failing_checks: list[str] = []  # the reference's failed grader checks, as evidence


class AcceptanceReport(BaseModel):
    tasks: list[TaskAudit]
    summary: dict[str, int | float | bool]

    @property
    def accepted_ids(self) -> list[str]:
        return [t.task_id for t in self.tasks if not t.quarantined]

    def gate(self, name: str) -> list[TaskAudit]:
        """Tasks that fail one named gate (for the pipeline's asset checks)."""
        test = GATES[name]
        return [t for t in self.tasks if not test(t)]


GATES: dict[str, Callable[[TaskAudit], bool]] = {
    "reference_solvable": lambda t: t.reference_passes > 0 and not t.gold_replay_errors,
    "reference_stable": lambda t: t.reference_stable,
    "not_trivially_passable": lambda t: not t.noop_passes and not t.adversary_passes,
    "resettable": lambda t: t.resettable,
    "masked_fields_justified": lambda t: t.fields_justified,
    "assertions_cite_policy": lambda t: t.assertions_cite_policy,
    "adjudicated": lambda t: t.adjudicated,
}


def in_process_runner(world: World, agents: Mapping[str, object] | None = None) -> Runner:
    """Run trials one after another in this process (the harness offers a parallel runner).

    `agents` replaces a baseline by name, e.g. a reference agent under test of the checks themselves.
    """

    def run(tasks: list[TaskRecord], plan: Mapping[str, int]) -> list[TrialResult]:
        out = []
        for agent, trials in plan.items():
            a = (agents or {}).get(agent) or make_agent(agent)
            out.extend(run_trial(world, t, a, i) for t in tasks for i in range(trials))
        return out

    return run


def _gold_errors(results: Sequence[TrialResult], task: TaskRecord) -> list[GoldError]:
    ids = [c.action_id for c in task.solution_calls()] if isinstance(task.reference_solution, list) else []
    seen, out = set(), []
    for r in results:
        for ev in r.trace:
            if ev.outcome in ("error", "fault") and (ev.seq, ev.tool) not in seen:
                seen.add((ev.seq, ev.tool))
                out.append(GoldError(action_id=ids[ev.seq - 1] if ev.seq <= len(ids) else None, tool=ev.tool, error=ev.error or ""))
    return out


def _adjudicated(task: TaskRecord, required: bool, reviews: Sequence[ReviewEntry] = ()) -> tuple[bool, str | None]:
    """(adjudicated, why not) from the task's entries in the review ledger and any reviews an imported record
    carries (tasks.reviews.review_state); always adjudicated where the spec does not require it."""
    if not required:
        return True, None
    state = review_state(task, reviews)
    return state.adjudicated, state.reason()


def state_passed(result: TrialResult) -> bool:
    """The trial passes every check but the final-message ones: the no-op says nothing, so judge its state."""
    return result.verdict is not None and all(c.passed for c in result.verdict.checks if not c.name.startswith("output "))


def audit_task(task: TaskRecord, ref: Sequence[TrialResult], noop: TrialResult, adv: TrialResult, settings: Acceptance,
               reviews: Sequence[ReviewEntry] = ()) -> TaskAudit:
    reasons = []
    noop_passes = state_passed(noop)
    passes = sum(r.passed for r in ref)
    gold = _gold_errors(ref, task)
    resettable = all(r.outcome != "infra_error" or "ResetError" not in (r.error or "") for r in [*ref, noop, adv])
    if passes == 0:
        reasons.append(f"unsolvable: the reference solution failed all {len(ref)} trials")
    elif passes < len(ref):
        reasons.append(f"flaky: the reference solution passed {passes} of {len(ref)} trials")
    if gold:
        reasons.append(f"{len(gold)} reference-solution call(s) raised: " + "; ".join(f"{g.tool}: {g.error}" for g in gold[:3]))
    if noop_passes and task.goal_state.requires_write:
        reasons.append("trivially passable: the no-op agent passes the state check of a task that requires a write")
    if adv.passed:
        reasons.append("trivially passable: the every-write adversary passes")
    if not resettable:
        reasons.append("not resettable: the world hash after reset did not match the seed")
    infra = [r for r in ref if r.outcome == "infra_error"]
    if infra and resettable:
        reasons.append(f"{len(infra)} reference trial(s) crashed: {infra[0].error.splitlines()[-1] if infra[0].error else ''}")
    justified = all(m.justification.strip() for m in task.goal_state.volatile_fields_masked)
    cited = all(a.clause in task.policy.clause_ids for a in task.goal_state.assertions)
    if not justified:
        reasons.append("a masked field has no justification")
    if not cited:
        reasons.append("an assertion cites no clause of the task's policy")
    adjudicated, why = _adjudicated(task, settings.require_adjudication, reviews)
    if why:
        reasons.append(why)
    failing = sorted({c.name for r in ref if r.verdict for c in r.verdict.failures()})
    return TaskAudit(task_id=task.task_id, reference_passes=passes, reference_trials=len(ref), reference_stable=passes in (0, len(ref)) and not infra,
                     gold_replay_errors=gold, noop_passes=noop_passes, adversary_passes=adv.passed, resettable=resettable,
                     fields_justified=justified, assertions_cite_policy=cited, adjudicated=adjudicated,
                     quarantined=bool(reasons), reasons=reasons, failing_checks=failing)


def run_acceptance(tasks: list[TaskRecord], settings: Acceptance, runner: Runner,
                   reviews: Sequence[ReviewEntry] = ()) -> AcceptanceReport:
    """Reference N times, no-op and adversary once, per task; quarantine whatever fails (`reviews`: the suite's
    review ledger, read where the spec requires adjudication)."""
    n = settings.reference_trials
    results = runner(tasks, {"reference": n, "noop": 1, "adversary": 1})
    ref, noop, adv = (_by_task([r for r in results if r.agent == a]) for a in ("reference", "noop", "adversary"))
    ledger = by_task(reviews)
    audits = [audit_task(t, ref[t.task_id], noop[t.task_id][0], adv[t.task_id][0], settings, ledger.get(t.task_id, ()))
              for t in tasks]
    q = sum(a.quarantined for a in audits)
    total = len(audits)
    summary = {
        "tasks": total, "accepted": total - q, "quarantined": q,
        "quarantined_fraction": round(q / total, 4) if total else 0.0,
        "max_quarantined_fraction": settings.max_quarantined_fraction,
        "releasable": total > q and (q / total if total else 0) <= settings.max_quarantined_fraction,
        "reference_trials": n, "trials_run": total * (n + 2),
        "gold_replay_errors": sum(len(a.gold_replay_errors) for a in audits),
        "noop_passes": sum(a.noop_passes for a in audits), "adversary_passes": sum(a.adversary_passes for a in audits),
    }
    return AcceptanceReport(tasks=audits, summary=summary)


def _by_task(results: list[TrialResult]) -> dict[str, list[TrialResult]]:
    out: dict[str, list[TrialResult]] = {}
    for r in sorted(results, key=lambda r: (r.task_id, r.trial)):
        out.setdefault(r.task_id, []).append(r)
    return out


def audit_markdown(report: AcceptanceReport, title: str) -> str:
    s = report.summary
    lines = [f"# Acceptance audit: {title}", "",
             f"{s['tasks']} tasks, {s['accepted']} accepted, {s['quarantined']} quarantined "
             f"({s['quarantined_fraction']:.1%}; allowed {s['max_quarantined_fraction']:.0%}). "
             f"Reference trials per task: {s['reference_trials']}. Releasable: {'yes' if s['releasable'] else 'no'}.", "",
             "| check | tasks failing |", "|---|---|"]
    lines += [f"| {name} | {len(report.gate(name))} |" for name in GATES]
    quarantined = [t for t in report.tasks if t.quarantined]
    if quarantined:
        lines += ["", "## Quarantined tasks", "", "| task | reasons |", "|---|---|"]
        lines += [f"| {t.task_id} | {'; '.join(r.replace('|', '/') for r in t.reasons)} |" for t in quarantined]
    return "\n".join(lines) + "\n"
