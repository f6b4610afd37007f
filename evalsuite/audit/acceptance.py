"""Acceptance: every task proven solvable, stable, resettable and not trivially passable.

Each check runs in a freshly reset world and leaves a recorded result with its
evidence. A task failing any check is quarantined with its reasons; nothing is
scored on a task the suite cannot stand behind.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field, model_serializer

from evalsuite.audit.reviews import ReviewEntry, by_task, review_state
from evalsuite.core.markdown import md_table
from evalsuite.core.records import FaultPlanSpec, GoalState, TaskRecord, ToolCall
from evalsuite.sourcing.spec import Acceptance
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import TrialResult, run_trial
from evalsuite.worlds.faults import schedule
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
    # the goal requires work (requires_action), so a no-op pass is a reason; a read-only task's no-op pass is not,
    # and the not_trivially_passable gate counts it only here (True in audits written before it was recorded)
    requires_action: bool = True
    adversary_passes: bool
    resettable: bool
    fields_justified: bool
    assertions_cite_policy: bool
    adjudicated: bool
    quarantined: bool
    reasons: list[str]
    failing_checks: list[str] = []  # the reference's failed grader checks, as evidence
    # reference passes per fault plan the task's protocol names ("" = unfaulted), each of reference_trials
    fault_plans: dict[str, int] = {}
    alternatives_failing: list[str] = []  # "alternative N [under PLAN]: failed checks" of lawful alternatives
    controls_passing: list[str] = []  # named negative controls that passed: the checker missed a wrong resolution
    plans_not_fired: list[str] = []  # fault plans no reference trial hit: the task was never tested under them

    @model_serializer(mode="wrap")
    def _omit_unused(self, handler):
        """A task without fault plans, alternatives or controls keeps the audit form it had before they existed."""
        out = handler(self)
        return {k: v for k, v in out.items() if k not in _FAULT_FIELDS or v}


class AcceptanceReport(BaseModel):
    tasks: list[TaskAudit]
    summary: dict[str, int | float | bool]
    # tasks and accepted tasks per sampling stratum (Provenance.stratum), for composed suites; empty otherwise
    strata: list[dict[str, str | int]] = Field(default_factory=list, exclude_if=lambda v: not v)

    @property
    def accepted_ids(self) -> list[str]:
        return [t.task_id for t in self.tasks if not t.quarantined]

    def gate(self, name: str) -> list[TaskAudit]:
        """Tasks that fail one named gate (for the pipeline's asset checks)."""
        test = TASK_GATES[name]
        return [t for t in self.tasks if not test(t)]


_FAULT_FIELDS = ("fault_plans", "alternatives_failing", "controls_passing", "plans_not_fired")

# Each acceptance gate as a test of one task's audit (the pipeline's gates, pipeline.registry.GATES, judge a build).
TASK_GATES: dict[str, Callable[[TaskAudit], bool]] = {
    "reference_solvable": lambda t: (t.reference_passes > 0 and not t.gold_replay_errors and not t.alternatives_failing
                                     and all(t.fault_plans.values()) and not t.plans_not_fired),
    "reference_stable": lambda t: t.reference_stable,
    "not_trivially_passable": lambda t: (not (t.noop_passes and t.requires_action) and not t.adversary_passes
                                         and not t.controls_passing),
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
    """Reference calls that failed; a fault its trial's plan injected on purpose is the scenario, not an error
    (its trace event names the fault kind), but any other fault or error is."""
    ids = [c.action_id for c in task.solution_calls()]
    seen, out = set(), []
    for r in results:
        for ev in r.trace:
            planned = r.fault_plan is not None and ev.fault is not None
            if ev.outcome in ("error", "fault") and not planned and (ev.seq, ev.tool) not in seen:
                seen.add((ev.seq, ev.tool))
                out.append(GoldError(action_id=ids[ev.seq - 1] if ev.seq <= len(ids) else None, tool=ev.tool,
                                     error=ev.error or ""))
    return out


def _adjudicated(task: TaskRecord, required: bool, reviews: Sequence[ReviewEntry] = ()) -> tuple[bool, str | None]:
    """(adjudicated, why not) from the task's entries in the review ledger and any reviews an imported record
    carries (reviews.review_state); always adjudicated where the spec does not require it."""
    if not required:
        return True, None
    state = review_state(task, reviews)
    return state.adjudicated, state.reason()


def silent_pass(result: TrialResult) -> bool:
    """The trial passes every check but the final-message ones (what a silent agent can pass: the no-op says
    nothing, so judge the rest). Not recorded.regrade.state_passed, the end-state checks alone."""
    return result.verdict is not None and all(c.passed for c in result.verdict.checks if c.kind != "output")


def requires_action(goal: GoalState) -> bool:
    """A goal the no-op must fail: one with row assertions or domain checks (an obligation such as exactly one
    refund, or an evidence-backed handoff, is work the no-op does not do)."""
    return goal.requires_write or bool(goal.domain_checks)


def audit_task(task: TaskRecord, ref: Sequence[TrialResult], noop: TrialResult | Sequence[TrialResult],
               adv: TrialResult | Sequence[TrialResult], settings: Acceptance, reviews: Sequence[ReviewEntry] = (),
               extras: Sequence[tuple[str, TrialResult]] = ()) -> TaskAudit:
    """One task's audit from its trials: the reference under every condition of its schedule (unfaulted and each
    fault plan, `TrialResult.fault_plan` naming it), the no-op and adversary once per condition, and `extras`:
    (label, trial) of its alternative solutions ("alternative N…") and negative controls ("control NAME…")."""
    noops = [noop] if isinstance(noop, TrialResult) else list(noop)
    advs = [adv] if isinstance(adv, TrialResult) else list(adv)
    reasons = []
    noop_passes = any(silent_pass(r) for r in noops)
    passes = sum(r.passed for r in ref)
    gold = _gold_errors(ref, task)
    resettable = all(r.outcome != "infra_error" or "ResetError" not in (r.error or "") for r in [*ref, *noops, *advs])
    per_plan = _per_plan(ref)
    stable = all(p in (0, n) for p, n in per_plan.values())
    if passes == 0:
        reasons.append(f"unsolvable: the reference solution failed all {len(ref)} trials")
    elif not stable:
        reasons.append(f"flaky: the reference solution passed {passes} of {len(ref)} trials")
    reasons += [f"unsolvable under fault plan {plan}: the reference solution failed all {n} trials"
                for plan, (p, n) in per_plan.items() if plan and p == 0 and passes]
    not_fired = _plans_never_fired(ref)
    reasons += [f"fault plan {plan} never fired: no reference call reached the faulted tool call" for plan in not_fired]
    if gold:
        raised = "; ".join(f"{g.tool}: {g.error}" for g in gold[:3])
        reasons.append(f"{len(gold)} reference-solution call(s) raised: {raised}")
    action = requires_action(task.goal_state)
    if noop_passes and action:
        first = next(r for r in noops if silent_pass(r))
        reasons.append("trivially passable: the no-op agent passes the state check of a task that requires a write"
                       + _under(first.fault_plan))
    if any(r.passed for r in advs):
        reasons.append("trivially passable: the every-write adversary passes")
    if not resettable:
        reasons.append("not resettable: the world hash after reset did not match the seed")
    infra = [r for r in ref if r.outcome == "infra_error"]
    if infra and resettable:
        last_line = infra[0].error.splitlines()[-1] if infra[0].error else ""
        reasons.append(f"{len(infra)} reference trial(s) crashed: {last_line}")
    alternatives = [f"{label}: {_failed(r)}" for label, r in extras if label.startswith("alternative") and not r.passed]
    controls = [label for label, r in extras if label.startswith("control") and r.passed]
    reasons += [f"{a} (a lawful alternative must pass)" for a in alternatives]
    reasons += [f"{c} passed (a named wrong resolution must fail)" for c in controls]
    justified, cited = _goal_reasons(task, reasons)
    adjudicated, why = _adjudicated(task, settings.require_adjudication, reviews)
    if why:
        reasons.append(why)
    failing = sorted({c.name for r in ref if r.verdict for c in r.verdict.failures()})
    plans = {plan: p for plan, (p, _) in per_plan.items()} if any(per_plan) else {}
    return TaskAudit(task_id=task.task_id, reference_passes=passes, reference_trials=len(ref),
                     reference_stable=stable and not infra,
                     gold_replay_errors=gold, noop_passes=noop_passes, requires_action=action,
                     adversary_passes=any(r.passed for r in advs),
                     resettable=resettable, fields_justified=justified, assertions_cite_policy=cited,
                     adjudicated=adjudicated, quarantined=bool(reasons), reasons=reasons, failing_checks=failing,
                     fault_plans=plans, alternatives_failing=alternatives, controls_passing=controls,
                     plans_not_fired=not_fired)


def _goal_reasons(task: TaskRecord, reasons: list[str]) -> tuple[bool, bool]:
    """Whether every masked field is justified and every assertion cites a clause of the task's policy; the reason
    for each that is not is added to `reasons`."""
    justified = all(m.justification.strip() for m in task.goal_state.volatile_fields_masked)
    cited = all(a.clause in task.policy.clause_ids for a in task.goal_state.assertions)
    if not justified:
        reasons.append("a masked field has no justification")
    if not cited:
        reasons.append("an assertion cites no clause of the task's policy")
    return justified, cited


def _per_plan(ref: Sequence[TrialResult]) -> dict[str, tuple[int, int]]:
    """(passes, trials) of the reference per condition, "" being the unfaulted world."""
    out: dict[str, tuple[int, int]] = {}
    for r in ref:
        p, n = out.get(r.fault_plan or "", (0, 0))
        out[r.fault_plan or ""] = (p + r.passed, n + 1)
    return out


def _plans_never_fired(ref: Sequence[TrialResult]) -> list[str]:
    """The fault plans no reference trial's call was faulted under. A plan whose tool or call number the reference
    never reaches injects nothing: the task is not tested under it."""
    planned = {r.fault_plan for r in ref if r.fault_plan}
    fired = {r.fault_plan for r in ref if any(e.fault for e in r.trace)}
    return sorted(planned - fired)


def _under(plan: str | None) -> str:
    return f" under fault plan {plan}" if plan else ""


def _failed(result: TrialResult) -> str:
    if result.verdict is None:
        return result.outcome + (f" ({result.error.splitlines()[-1]})" if result.error else "")
    return ", ".join(c.name for c in result.verdict.failures()) or result.outcome


def _pinned(task: TaskRecord, plan: FaultPlanSpec | None, task_id: str, calls: list[ToolCall] | None = None,
            answer: str | None = None) -> TaskRecord:
    """A copy of `task` whose every trial runs under one condition (a fault plan, or none), optionally with other
    calls (an alternative, a control) in place of its reference solution; the harness runs it like any task."""
    protocol = task.trial_protocol.model_copy(update={"fault_plans": [plan] if plan else [],
                                                      "faulted_only": True if plan else None})
    update: dict = {"task_id": task_id, "trial_protocol": protocol}
    if calls is not None:
        update.update(reference_solution=calls, reference_answer=answer)
    return task.model_copy(update=update)


def expand(task: TaskRecord) -> tuple[list[TaskRecord], list[tuple[str, TaskRecord]]]:
    """The trials acceptance runs for one task: (one copy per condition of its schedule; (label, copy) of every
    alternative solution and negative control under each condition). A task with no fault plans, alternatives or
    controls is its one, unchanged condition."""
    conditions = schedule(task.trial_protocol)
    if conditions == [None] and not task.alternative_solutions and not task.negative_controls:
        return [task], []
    main, extras = [], []
    for plan in conditions:
        tag = f"@{plan.name}" if plan else ""
        main.append(_pinned(task, plan, task.task_id + tag))
        for i, calls in enumerate(task.alternative_solutions, 1):
            extras.append((f"alternative {i}{_under(plan and plan.name)}",
                           _pinned(task, plan, f"{task.task_id}{tag}#alt{i}", calls, task.reference_answer)))
        for c in task.negative_controls:
            control_id = f"{task.task_id}{tag}#control-{re.sub(r'[^A-Za-z0-9_.-]+', '_', c.name)}"
            extras.append((f"control {c.name}{_under(plan and plan.name)}",
                           _pinned(task, plan, control_id, c.calls, c.final_message)))
    return main, extras


def run_acceptance(tasks: list[TaskRecord], settings: Acceptance, runner: Runner,
                   reviews: Sequence[ReviewEntry] = ()) -> AcceptanceReport:
    """Reference N times, no-op and adversary once, per task and per condition of its fault-plan schedule; every
    alternative solution and negative control once per condition; quarantine whatever fails (`reviews`: the
    suite's review ledger, read where the spec requires adjudication)."""
    n = settings.reference_trials
    expanded = {t.task_id: expand(t) for t in tasks}
    main = [c for m, _ in expanded.values() for c in m]
    extra = [c for _, e in expanded.values() for _, c in e]
    results = runner(main, {"reference": n, "noop": 1, "adversary": 1})
    results += runner(extra, {"reference": 1}) if extra else []
    got = {(r.task_id, r.agent, r.trial): r for r in results}
    ledger = by_task(reviews)
    audits = []
    for t in tasks:
        copies, extras = expanded[t.task_id]
        pick = lambda agent, k: [got[(c.task_id, agent, i)] for c in copies for i in range(k)]  # noqa: E731
        audits.append(audit_task(t, pick("reference", n), pick("noop", 1), pick("adversary", 1), settings,
                                 ledger.get(t.task_id, ()), [(label, got[(c.task_id, "reference", 0)])
                                                             for label, c in extras]))
    q = sum(a.quarantined for a in audits)
    total = len(audits)
    summary = {
        "tasks": total, "accepted": total - q, "quarantined": q,
        "quarantined_fraction": round(q / total, 4) if total else 0.0,
        "max_quarantined_fraction": settings.max_quarantined_fraction,
        "releasable": total > q and q / total <= settings.max_quarantined_fraction,  # total > q: total > 0
        "reference_trials": n, "trials_run": len(main) * (n + 2) + len(extra),
        "gold_replay_errors": sum(len(a.gold_replay_errors) for a in audits),
        "noop_passes": sum(a.noop_passes for a in audits), "adversary_passes": sum(a.adversary_passes for a in audits),
    }
    if extra or len(main) > total:  # only suites that use them carry these counts
        summary.update({"fault_plan_conditions": len(main) - total, "alternatives_and_controls": len(extra),
                        "alternatives_failing": sum(len(a.alternatives_failing) for a in audits),
                        "controls_passing": sum(len(a.controls_passing) for a in audits)})
    return AcceptanceReport(tasks=audits, summary=summary, strata=strata(tasks, audits))


def strata(tasks: Sequence[TaskRecord], audits: Sequence[TaskAudit]) -> list[dict[str, str | int]]:
    """Per sampling stratum (the tasks' Provenance.stratum, in sorted order): its keys, tasks and accepted."""
    quarantined = {a.task_id for a in audits if a.quarantined}
    counts: dict[tuple, list[int]] = {}
    for t in tasks:
        if t.provenance.stratum is not None:
            n = counts.setdefault(tuple(t.provenance.stratum.items()), [0, 0])
            n[0] += 1
            n[1] += t.task_id not in quarantined
    return [{**dict(key), "tasks": n, "accepted": ok} for key, (n, ok) in sorted(counts.items(), key=repr)]


def strata_table(rows: Sequence[Mapping[str, str | int]]) -> str:
    """The strata as a Markdown table (columns: the stratum's keys, then tasks and accepted); no strata, no table."""
    if not rows:
        return ""
    head = list(rows[0])
    return md_table(head, [[r[h] for h in head] for r in rows])


def audit_markdown(report: AcceptanceReport, title: str) -> str:
    s = report.summary
    lines = [f"# Acceptance audit: {title}", "",
             f"{s['tasks']} tasks, {s['accepted']} accepted, {s['quarantined']} quarantined "
             f"({s['quarantined_fraction']:.1%}; allowed {s['max_quarantined_fraction']:.0%}). "
             f"Reference trials per task: {s['reference_trials']}. "
             f"Releasable: {'yes' if s['releasable'] else 'no'}.", "",
             md_table(["check", "tasks failing"], [[name, len(report.gate(name))] for name in TASK_GATES])]
    faulted = [t for t in report.tasks if t.fault_plans]  # alternatives and controls alone: no condition to list
    if faulted:
        lines += ["", "## Fault plans", "", "Reference passes per condition (unfaulted, then each fault plan of the "
                  f"task's trial protocol), out of {s['reference_trials']}.", "",
                  md_table(["task", "condition", "reference passes"],
                           [[t.task_id, plan or "unfaulted", n] for t in faulted for plan, n in t.fault_plans.items()])]
    if report.strata:
        lines += ["", "## Strata", "", "Tasks and accepted tasks per sampling stratum.", "",
                  strata_table(report.strata)]
    quarantined = [t for t in report.tasks if t.quarantined]
    if quarantined:
        lines += ["", "## Quarantined tasks", "",
                  md_table(["task", "reasons"], [[t.task_id, "; ".join(t.reasons)] for t in quarantined])]
    return "\n".join(lines) + "\n"
