"""Acceptance, answer by answer: every reason, flag and summary number pinned.

Most cases run real trials on the bundled AP world (the `ap` fixture), with
agents substituted through `in_process_runner(world, agents=...)` and a world
whose recorded seed hash is wrong (every reset then fails with a real
ResetError). Hand-built TrialResults are used only for what a real trial
cannot produce here: an injected fault in the reference's trace (the in-process
runner injects none), a crashed trial without an error text, and the gates
and the Markdown over audits of every shape.
"""
from __future__ import annotations

import pytest

from evalsuite.audit.acceptance import (
    TASK_GATES,
    AcceptanceReport,
    GoldError,
    TaskAudit,
    audit_markdown,
    audit_task,
    in_process_runner,
    requires_action,
    run_acceptance,
    silent_pass,
    strata,
)
from evalsuite.core.records import Adjudication, Check, DomainCheck, GoalState, Review, ToolCall, TraceEvent
from evalsuite.grading.grader import Verdict
from evalsuite.sourcing.spec import Acceptance
from evalsuite.trials.agents.baselines import AdversaryAgent, ReferenceAgent
from evalsuite.trials.trial import TrialResult
from evalsuite.worlds import World

CLEAN = dict(reference_stable=True, gold_replay_errors=[], noop_passes=False, requires_action=True,
             adversary_passes=False, resettable=True, fields_justified=True, assertions_cite_policy=True,
             adjudicated=True, quarantined=False, reasons=[], failing_checks=[])
NOOP_REASON = "trivially passable: the no-op agent passes the state check of a task that requires a write"
ADV_REASON = "trivially passable: the every-write adversary passes"
RESET_REASON = "not resettable: the world hash after reset did not match the seed"


def copy(task, task_id, **update):
    return task.model_copy(deep=True, update={"task_id": task_id, **update})


def audit_dict(audit, task_id, passes, trials, **fields):
    """The audit as a dict, and what it must equal: CLEAN with the given fields changed."""
    want = dict(task_id=task_id, reference_passes=passes, reference_trials=trials, **{**CLEAN, **fields})
    return audit.model_dump(), {**want, "gold_replay_errors": [g.model_dump() if isinstance(g, GoldError) else g
                                                               for g in want["gold_replay_errors"]]}


def already_true(ap, task_id):
    """A write task whose goal holds in the seed (the invoice is blocked already); the reference only reads."""
    t = copy(ap.tasks[0], task_id)
    t.goal_state.assertions[0].expect = {"status": "blocked"}
    t.reference_solution = [c for c in t.solution_calls() if c.tool.startswith("get_")]
    return t


def no_write(ap, task_id):
    """A task that requires no write: no assertion; the reference only reads."""
    t = already_true(ap, task_id)
    t.goal_state.assertions = []
    return t


class Named:
    """An agent under a baseline's name, acting as `act` for chosen task ids and as `rest` otherwise."""

    def __init__(self, name, act, only=None, rest=None):
        self.name, self.act, self.only, self.rest = name, act, only, rest

    def run(self, task, env):
        if self.only is None or task.task_id in self.only:
            return self.act.run(task, env)
        return self.rest.run(task, env)


class Crashing:
    """A reference that crashes on the trials whose number (counted per task) is in `crash`."""

    name = "reference"

    def __init__(self, crash):
        self.crash, self.seen = crash, {}

    def run(self, task, env):
        n = self.seen[task.task_id] = self.seen.get(task.task_id, -1) + 1
        if n in self.crash:
            env.call("get_invoice", {"invoice_id": "INV-55100"})
            raise RuntimeError(f"agent fell over\non trial {n}")
        return ReferenceAgent().run(task, env)


class ExtraCall(ReferenceAgent):
    """Replays the reference solution, then makes one more call that fails (no action id is left for it)."""

    def run(self, task, env):
        answer = super().run(task, env)
        env.call("get_vendor", {"vendor_id": "V-NOPE"})
        return answer


# ---------------------------------------------------------------- one task, real trials, every reason

def test_a_sound_task_is_accepted_with_every_flag_clean(ap):
    report = run_acceptance([ap.tasks[0]], Acceptance(reference_trials=2), in_process_runner(ap.world))
    got, want = audit_dict(report.tasks[0], "ap-exc-9100", 2, 2)
    assert got == want
    assert report.accepted_ids == ["ap-exc-9100"]
    assert report.summary == {"tasks": 1, "accepted": 1, "quarantined": 0, "quarantined_fraction": 0.0,
                              "max_quarantined_fraction": 0.1, "releasable": True, "reference_trials": 2,
                              "trials_run": 4, "gold_replay_errors": 0, "noop_passes": 0, "adversary_passes": 0}


def test_a_world_that_never_resets_is_not_resettable_and_no_crash_is_reported(ap):
    broken = World(ap.world.domain, ap.world.path, seed_sha256="0" * 64)
    report = run_acceptance([ap.tasks[0]], Acceptance(reference_trials=2), in_process_runner(broken))
    got, want = audit_dict(report.tasks[0], "ap-exc-9100", 0, 2, reference_stable=False, resettable=False,
                           quarantined=True,
                           reasons=["unsolvable: the reference solution failed all 2 trials", RESET_REASON])
    assert got == want
    assert report.summary == {"tasks": 1, "accepted": 0, "quarantined": 1, "quarantined_fraction": 1.0,
                              "max_quarantined_fraction": 0.1, "releasable": False, "reference_trials": 2,
                              "trials_run": 4, "gold_replay_errors": 0, "noop_passes": 0, "adversary_passes": 0}


def test_a_reset_error_in_the_noop_or_adversary_trial_alone_makes_the_task_not_resettable(ap):
    task = ap.tasks[0]
    good = in_process_runner(ap.world)(
        [task], {"reference": 1, "noop": 1, "adversary": 1})
    broken = World(ap.world.domain, ap.world.path, seed_sha256="0" * 64)
    ref, noop, adv = good
    [bad_noop], [bad_adv] = (in_process_runner(broken)([task], {a: 1}) for a in ("noop", "adversary"))
    assert bad_noop.outcome == "infra_error" and "ResetError" in bad_noop.error
    for n, a in ((bad_noop, adv), (noop, bad_adv)):
        audit = audit_task(task, [ref], n, a, Acceptance())
        assert (audit.resettable, audit.reasons, audit.quarantined) == (False, [RESET_REASON], True)
    assert audit_task(task, [ref], noop, adv, Acceptance()).reasons == []


@pytest.mark.parametrize("crash, passes, reasons", [
    ({0}, 1, ["flaky: the reference solution passed 1 of 2 trials",
              "1 reference trial(s) crashed: on trial 0"]),
    ({1}, 1, ["flaky: the reference solution passed 1 of 2 trials",
              "1 reference trial(s) crashed: on trial 1"]),
    ({0, 1}, 0, ["unsolvable: the reference solution failed all 2 trials",
                 "2 reference trial(s) crashed: on trial 0"]),
], ids=["first crashed", "second crashed", "both crashed: the first is quoted"])
def test_a_crashed_reference_trial_is_reported_with_the_last_line_of_its_error(ap, crash, passes, reasons):
    runner = in_process_runner(ap.world, {"reference": Crashing(crash)})
    reversed_runner = lambda tasks, plan: runner(tasks, plan)[::-1]  # noqa: E731 (order must not matter)
    report = run_acceptance([ap.tasks[0]], Acceptance(reference_trials=2), reversed_runner)
    got, want = audit_dict(report.tasks[0], "ap-exc-9100", passes, 2, reference_stable=False, quarantined=True,
                           reasons=reasons)
    assert got == want


def test_a_crash_without_an_error_text_is_reported_with_an_empty_reason(ap):
    task = ap.tasks[0]
    good = in_process_runner(ap.world)([task], {"reference": 1, "noop": 1, "adversary": 1})
    crashed = TrialResult(task_id=task.task_id, agent="reference", trial=1, outcome="infra_error", passed=False)
    audit = audit_task(task, [good[0], crashed], good[1], good[2], Acceptance())
    assert audit.reasons == ["flaky: the reference solution passed 1 of 2 trials", "1 reference trial(s) crashed: "]
    assert (audit.resettable, audit.reference_stable) == (True, False)


def test_a_reference_that_fails_every_trial_is_unsolvable_and_names_the_failing_checks(ap):
    task = copy(ap.tasks[0], "wrong-goal")
    task.goal_state.assertions[0].expect["status"] = "on_hold"
    report = run_acceptance([task], Acceptance(reference_trials=3), in_process_runner(ap.world))
    got, want = audit_dict(report.tasks[0], "wrong-goal", 0, 3, quarantined=True,
                           reasons=["unsolvable: the reference solution failed all 3 trials"],
                           failing_checks=["assertion[0] invoices {'invoice_id': 'INV-55100'} (AP-2)"])
    assert got == want


def test_gold_replay_errors_name_their_action_ids(ap):
    task = copy(ap.tasks[1], "gold")
    calls = task.solution_calls()
    task.reference_solution = [
        ToolCall(tool="get_invoice", arguments={"invoice_id": "INV-NOPE"}, action_id="a1"),
        calls[0].model_copy(update={"action_id": "a2"}),
        ToolCall(tool="no_such_tool", arguments={}, action_id="a3"),
        ToolCall(tool="post_payment", arguments={"invoice_id": "INV-55101"}, action_id="a4"),  # denied: no error
        ToolCall(tool="get_purchase_order", arguments={"po_id": "PO-NOPE"}),  # no action id
        *calls[1:],
    ]
    runner = in_process_runner(ap.world, {"reference": ExtraCall()})
    report = run_acceptance([task], Acceptance(reference_trials=2), runner)
    gold = [GoldError(action_id="a1", tool="get_invoice", error="invoice INV-NOPE not found"),
            GoldError(action_id="a3", tool="no_such_tool", error="Tool 'no_such_tool' not found."),
            GoldError(action_id=None, tool="get_purchase_order", error="purchase order PO-NOPE not found"),
            GoldError(action_id=None, tool="get_vendor", error="vendor V-NOPE not found")]
    got, want = audit_dict(
        report.tasks[0], "gold", 0, 2, gold_replay_errors=gold, quarantined=True,
        reasons=["unsolvable: the reference solution failed all 2 trials",
                 "4 reference-solution call(s) raised: get_invoice: invoice INV-NOPE not found; "
                 "no_such_tool: Tool 'no_such_tool' not found.; get_purchase_order: purchase order PO-NOPE not found"],
        failing_checks=["no forbidden call"])
    assert got == want
    assert report.summary["gold_replay_errors"] == 4


def test_the_last_solution_call_is_named_by_its_action_id(ap):
    task = copy(ap.tasks[0], "gold-last")
    task.reference_solution[-1].action_id = "last"
    task.reference_solution[-1].arguments["invoice_id"] = "INV-NOPE"
    report = run_acceptance([task], Acceptance(reference_trials=1), in_process_runner(ap.world))
    assert report.tasks[0].gold_replay_errors == [
        GoldError(action_id="last", tool="release_invoice", error="invoice INV-NOPE not found")]


def test_injected_faults_count_as_gold_errors_and_each_call_is_reported_once(ap):
    task = copy(ap.tasks[0], "faulty")
    task.reference_solution[0].action_id = "first"
    task.reference_solution[2].action_id = "third"  # the last call: seq 3 of 3
    [ok, noop, adv] = in_process_runner(ap.world)([task], {"reference": 1, "noop": 1, "adversary": 1})

    def event(seq, outcome, error=None, tool="release_invoice"):
        return TraceEvent(seq=seq, tool=tool, arguments={}, permitted=True, outcome=outcome, error=error)
    # the in-process runner injects no faults: these traces are hand-built around two real passing trials
    trials = [ok.model_copy(update={"trial": 0, "trace": [event(1, "fault", "backend error", "get_invoice"),
                                                          event(2, "ok"), event(3, "denied", "no")]}),
              ok.model_copy(update={"trial": 1, "trace": [event(1, "fault", "other text", "get_invoice"),
                                                          event(3, "error"), event(4, "error", "x")]})]
    audit = audit_task(task, trials, noop, adv, Acceptance())
    assert audit.gold_replay_errors == [GoldError(action_id="first", tool="get_invoice", error="backend error"),
                                        GoldError(action_id="third", tool="release_invoice", error=""),
                                        GoldError(action_id=None, tool="release_invoice", error="x")]
    assert audit.reasons == ["3 reference-solution call(s) raised: get_invoice: backend error; release_invoice: ; "
                             "release_invoice: x"]
    assert (audit.reference_passes, audit.quarantined) == (2, True)


def test_the_adversary_passing_is_a_reason(ap):
    adversary = Named("adversary", ReferenceAgent())
    report = run_acceptance([ap.tasks[0]], Acceptance(reference_trials=1),
                            in_process_runner(ap.world, {"adversary": adversary}))
    got, want = audit_dict(report.tasks[0], "ap-exc-9100", 1, 1, adversary_passes=True, quarantined=True,
                           reasons=[ADV_REASON])
    assert got == want and report.summary["adversary_passes"] == 1


def test_the_noop_is_judged_on_state_only_and_passing_a_write_task_is_a_reason(ap):
    task = already_true(ap, "already-true")
    [noop] = in_process_runner(ap.world)([task], {"noop": 1})
    assert not noop.passed and [c.name for c in noop.verdict.failures()] == ["output decision",
                                                                            "output variance amount per unit"]
    assert silent_pass(noop)
    report = run_acceptance([task], Acceptance(reference_trials=1), in_process_runner(ap.world))
    got, want = audit_dict(report.tasks[0], "already-true", 1, 1, noop_passes=True, quarantined=True,
                           reasons=[NOOP_REASON])
    assert got == want and report.summary["noop_passes"] == 1


def test_the_noop_passing_a_task_that_requires_no_write_is_no_reason(ap):
    task = no_write(ap, "no-write")
    assert not task.goal_state.requires_write
    report = run_acceptance([task], Acceptance(reference_trials=1), in_process_runner(ap.world))
    got, want = audit_dict(report.tasks[0], "no-write", 1, 1, noop_passes=True, requires_action=False)
    assert got == want and report.accepted_ids == ["no-write"] and report.summary["noop_passes"] == 1
    # the gate counts what acceptance quarantines: an accepted task fails no gate (a build's count is the audit's)
    assert [name for name in TASK_GATES if report.gate(name)] == []


def test_an_unjustified_mask_and_an_uncited_assertion_are_reasons(ap):
    blank = copy(ap.tasks[0], "blank-mask")
    blank.goal_state.volatile_fields_masked[1].justification = " \t"
    uncited = copy(ap.tasks[0], "uncited")
    uncited.goal_state.assertions[2].clause = "AP-99"  # set after validation: only acceptance catches it
    report = run_acceptance([blank, uncited], Acceptance(reference_trials=1), in_process_runner(ap.world))
    got, want = audit_dict(report.tasks[0], "blank-mask", 1, 1, fields_justified=False, quarantined=True,
                           reasons=["a masked field has no justification"])
    assert got == want
    got, want = audit_dict(report.tasks[1], "uncited", 1, 1, assertions_cite_policy=False, quarantined=True,
                           reasons=["an assertion cites no clause of the task's policy"])
    assert got == want


def _review(who, decision="agree"):
    return Review(reviewer=who, date="2026-10-01", decision=decision)


ADJUDICATIONS = [
    # (id, adjudication, required, adjudicated, reason)
    ("none recorded", None, True, False, "goal state has 0 reviewer sign-off(s), 2 required"),
    ("no reviews", Adjudication(), True, False, "goal state has 0 reviewer sign-off(s), 2 required"),
    ("one reviewer twice", Adjudication(reviews=[_review("a"), _review("a")]), True, False,
     "goal state has 1 reviewer sign-off(s), 2 required"),
    ("two agree", Adjudication(reviews=[_review("a"), _review("b")]), True, True, None),
    ("three, one disagrees, unresolved", Adjudication(reviews=[_review("a"), _review("b"), _review("c", "disagree")]),
     True, False, "reviewers disagree and no resolution against the policy text is recorded"),
    ("disagree, empty resolution", Adjudication(reviews=[_review("a", "disagree"), _review("b")], resolution=""),
     True, False, "reviewers disagree and no resolution against the policy text is recorded"),
    ("disagree, resolved", Adjudication(reviews=[_review("a", "disagree"), _review("b", "disagree")],
                                        resolution="AP-2 text decides"), True, True, None),
    ("not required: none recorded", None, False, True, None),
    ("not required: disagree unresolved", Adjudication(reviews=[_review("a", "disagree")]), False, True, None),
]


@pytest.mark.parametrize("settings_required", [True, False], ids=["required", "not required"])
def test_adjudication_decisions(ap, settings_required):
    cases = [c for c in ADJUDICATIONS if c[2] is settings_required]
    tasks = [copy(ap.tasks[0], name, adjudication=adj) for name, adj, *_ in cases]
    report = run_acceptance(tasks, Acceptance(reference_trials=1, require_adjudication=settings_required),
                            in_process_runner(ap.world))
    got = [(a.task_id, a.adjudicated, a.quarantined, a.reasons) for a in report.tasks]
    assert got == [(name, ok, not ok, [why] if why else []) for name, _, _, ok, why in cases]
    assert [len(report.gate("adjudicated")), report.summary["quarantined"]] == [sum(not c[3] for c in cases)] * 2
    if settings_required:  # 5 of 7 quarantined
        assert report.summary["quarantined_fraction"] == 0.7143 and report.summary["accepted"] == 2


# ---------------------------------------------------------------- a suite: summary numbers and the release boundary

@pytest.fixture(scope="module")
def mixed_suite(ap):
    """Five tasks, real trials: two sound, one with gold errors, one the no-op passes, one the adversary passes."""
    gold = copy(ap.tasks[1], "gold-two")
    gold.reference_solution = [ToolCall(tool="get_invoice", arguments={"invoice_id": "INV-NOPE"}, action_id="g1"),
                               ToolCall(tool="get_vendor", arguments={"vendor_id": "V-NOPE"}, action_id="g2"),
                               *gold.solution_calls()]
    tasks = [ap.tasks[0], gold, already_true(ap, "noop-passes"), copy(ap.tasks[3], "adversary-passes"), ap.tasks[5]]
    adversary = Named("adversary", ReferenceAgent(), only={"adversary-passes"}, rest=AdversaryAgent())
    plans = []
    real = in_process_runner(ap.world, {"adversary": adversary})

    def recording(ts, plan):
        plans.append(dict(plan))
        return real(ts, plan)
    results = recording(tasks, {"reference": 2, "noop": 1, "adversary": 1})
    return tasks, results, plans


def replay(results):
    return lambda tasks, plan: [r for r in results if r.task_id in {t.task_id for t in tasks}]


@pytest.mark.parametrize("allowed, releasable", [(0.6, True), (0.59, False), (1.0, True)])
def test_the_summary_of_a_suite_and_the_allowed_fraction_boundary(mixed_suite, allowed, releasable):
    tasks, results, plans = mixed_suite
    report = run_acceptance(tasks, Acceptance(reference_trials=2, max_quarantined_fraction=allowed), replay(results))
    assert [(a.task_id, a.quarantined) for a in report.tasks] == [
        ("ap-exc-9100", False), ("gold-two", True), ("noop-passes", True), ("adversary-passes", True),
        ("ap-exc-9106", False)]
    assert report.tasks[1].reasons == ["2 reference-solution call(s) raised: get_invoice: invoice INV-NOPE not found; "
                                       "get_vendor: vendor V-NOPE not found"]
    assert report.accepted_ids == ["ap-exc-9100", "ap-exc-9106"]
    assert report.summary == {"tasks": 5, "accepted": 2, "quarantined": 3, "quarantined_fraction": 0.6,
                              "max_quarantined_fraction": allowed, "releasable": releasable, "reference_trials": 2,
                              "trials_run": 20, "gold_replay_errors": 2, "noop_passes": 1, "adversary_passes": 1}
    assert {name: [t.task_id for t in report.gate(name)] for name in TASK_GATES} == {
        "reference_solvable": ["gold-two"], "reference_stable": [], "not_trivially_passable": ["noop-passes",
                                                                                               "adversary-passes"],
        "resettable": [], "masked_fields_justified": [], "assertions_cite_policy": [], "adjudicated": []}


def test_run_acceptance_asks_for_n_reference_trials_and_one_noop_and_one_adversary(mixed_suite):
    tasks, results, plans = mixed_suite
    assert plans == [{"reference": 2, "noop": 1, "adversary": 1}]
    seen = []

    def runner(ts, plan):
        seen.append((len(ts), dict(plan)))
        return replay(results)(ts, plan)
    run_acceptance(tasks[:2], Acceptance(reference_trials=2), runner)
    assert seen == [(2, {"reference": 2, "noop": 1, "adversary": 1})]


def test_every_task_quarantined_is_never_releasable(ap):
    broken = World(ap.world.domain, ap.world.path, seed_sha256="0" * 64)
    report = run_acceptance(ap.tasks[:2], Acceptance(reference_trials=1, max_quarantined_fraction=1.0),
                            in_process_runner(broken))
    assert report.summary["quarantined_fraction"] == 1.0 and report.summary["releasable"] is False
    assert report.summary["trials_run"] == 6 and report.accepted_ids == []


def test_an_empty_suite(ap):
    report = run_acceptance([], Acceptance(reference_trials=3, max_quarantined_fraction=0.5),
                            in_process_runner(ap.world))
    assert report.tasks == [] and report.accepted_ids == []
    assert report.summary == {"tasks": 0, "accepted": 0, "quarantined": 0, "quarantined_fraction": 0.0,
                              "max_quarantined_fraction": 0.5, "releasable": False, "reference_trials": 3,
                              "trials_run": 0, "gold_replay_errors": 0, "noop_passes": 0, "adversary_passes": 0}
    assert isinstance(report.summary["quarantined_fraction"], float)


def test_one_in_three_quarantined_is_rounded_to_four_places(mixed_suite):
    tasks, results, _ = mixed_suite
    report = run_acceptance([tasks[0], tasks[1], tasks[4]], Acceptance(reference_trials=2), replay(results))
    assert report.summary["quarantined_fraction"] == 0.3333 and report.summary["quarantined"] == 1


# ---------------------------------------------------------------- the runner

def test_the_in_process_runner_runs_the_plan_in_order_with_substitutes(ap):
    t0, t1 = ap.tasks[0], ap.tasks[1]
    quiet = Named("noop", ReferenceAgent())
    results = in_process_runner(ap.world, {"noop": quiet, "unused": ReferenceAgent()})(
        [t0, t1], {"reference": 2, "noop": 1, "adversary": 1})
    assert [(r.task_id, r.agent, r.trial) for r in results] == [
        (t0.task_id, "reference", 0), (t0.task_id, "reference", 1), (t1.task_id, "reference", 0),
        (t1.task_id, "reference", 1), (t0.task_id, "noop", 0), (t1.task_id, "noop", 0),
        (t0.task_id, "adversary", 0), (t1.task_id, "adversary", 0)]
    assert [r.passed for r in results] == [True] * 6 + [False] * 2  # the substitute replayed the reference
    default = in_process_runner(ap.world)([t0], {"noop": 1, "reference": 1})
    assert [(r.agent, r.passed, len(r.trace)) for r in default] == [("noop", False, 0),
                                                                     ("reference", True, len(t0.solution_calls()))]
    assert in_process_runner(ap.world)([t0], {"noop": 0}) == []


# ---------------------------------------------------------------- silent_pass, the gates and the Markdown

def _result(checks, verdict=True):
    v = Verdict(passed=all(checks.values()), checks=[Check(name=n, passed=p) for n, p in checks.items()])
    return TrialResult(task_id="t", agent="noop", trial=0, outcome="fail", passed=False, verdict=v if verdict else None)


@pytest.mark.parametrize("checks, verdict, passed", [
    ({"output decision": False, "output amount": False, "assertion[0] x": True}, True, True),
    ({"output decision": True, "assertion[0] x": False}, True, False),
    ({"no collateral change": False}, True, False),
    ({"outputs": False}, True, False),  # only "output " (with the space) names a final-message check
    ({"an output decision": False}, True, False),
    ({}, True, True),
    ({}, False, False),  # no verdict (a crashed trial): not passed
])
def test_silent_pass(checks, verdict, passed):
    assert silent_pass(_result(checks, verdict)) is passed


def _audit(task_id, **fields):
    base = dict(task_id=task_id, reference_passes=2, reference_trials=2, **CLEAN)
    return TaskAudit(**{**base, **fields})


def test_strata_mixing_numbers_and_words_under_one_key_are_counted_in_a_stable_order(ap):
    # A stratum's values are str | int: a hand-made suite may count subtasks as 2 in one stratum and "3+" in
    # another, which Python cannot order directly; the report still counts both.
    first, second, third = (t.model_copy(deep=True) for t in ap.tasks[:3])
    first.provenance.stratum, second.provenance.stratum = {"subtasks": "3+"}, {"subtasks": 2}
    third.provenance.stratum = {"subtasks": 2}
    audits = [_audit(first.task_id, quarantined=True), _audit(second.task_id), _audit(third.task_id)]
    assert strata([first, second, third], audits) == [{"subtasks": "3+", "tasks": 1, "accepted": 0},
                                                      {"subtasks": 2, "tasks": 2, "accepted": 2}]


GATE_CASES = [
    # (audit, the gates it fails)
    (_audit("clean"), []),
    (_audit("one-pass", reference_passes=1, reference_stable=False, quarantined=True), ["reference_stable"]),
    (_audit("none-pass", reference_passes=0, quarantined=True), ["reference_solvable"]),
    (_audit("gold", gold_replay_errors=[GoldError(action_id=None, tool="t", error="e")], quarantined=True),
     ["reference_solvable"]),
    (_audit("noop", noop_passes=True, quarantined=True), ["not_trivially_passable"]),
    (_audit("read-only", noop_passes=True, requires_action=False), []),
    (_audit("adv", adversary_passes=True, quarantined=True), ["not_trivially_passable"]),
    (_audit("reset", resettable=False, quarantined=True), ["resettable"]),
    (_audit("mask", fields_justified=False, quarantined=True), ["masked_fields_justified"]),
    (_audit("cite", assertions_cite_policy=False, quarantined=True), ["assertions_cite_policy"]),
    (_audit("adj", adjudicated=False, quarantined=True), ["adjudicated"]),
]


@pytest.mark.parametrize("audit, failing", GATE_CASES, ids=[c[0].task_id for c in GATE_CASES])
def test_each_gate_fails_exactly_its_tasks(audit, failing):
    report = AcceptanceReport(tasks=[audit], summary={})
    assert [name for name in TASK_GATES if report.gate(name)] == failing
    assert [name for name, test in TASK_GATES.items() if not test(audit)] == failing


def test_the_gates_in_order():
    assert list(TASK_GATES) == ["reference_solvable", "reference_stable", "not_trivially_passable", "resettable",
                           "masked_fields_justified", "assertions_cite_policy", "adjudicated"]


def test_audit_markdown_counts_every_gate_and_lists_quarantined_tasks():
    tasks = [c[0] for c in GATE_CASES] + [_audit("pipe", quarantined=True, reasons=["a|b", "c"])]
    tasks[1] = tasks[1].model_copy(update={"reasons": ["flaky: the reference solution passed 1 of 2 trials"]})
    summary = {"tasks": 11, "accepted": 1, "quarantined": 10, "quarantined_fraction": 0.9091,
               "max_quarantined_fraction": 0.125, "releasable": False, "reference_trials": 2}
    assert audit_markdown(AcceptanceReport(tasks=tasks, summary=summary), "AP r3") == (
        "# Acceptance audit: AP r3\n"
        "\n"
        "11 tasks, 1 accepted, 10 quarantined (90.9%; allowed 12%). Reference trials per task: 2. Releasable: no.\n"
        "\n"
        "| check | tasks failing |\n"
        "|---|---|\n"
        "| reference_solvable | 2 |\n"
        "| reference_stable | 1 |\n"
        "| not_trivially_passable | 2 |\n"
        "| resettable | 1 |\n"
        "| masked_fields_justified | 1 |\n"
        "| assertions_cite_policy | 1 |\n"
        "| adjudicated | 1 |\n"
        "\n"
        "## Quarantined tasks\n"
        "\n"
        "| task | reasons |\n"
        "|---|---|\n"
        "| one-pass | flaky: the reference solution passed 1 of 2 trials |\n"
        "| none-pass |  |\n"
        "| gold |  |\n"
        "| noop |  |\n"
        "| adv |  |\n"
        "| reset |  |\n"
        "| mask |  |\n"
        "| cite |  |\n"
        "| adj |  |\n"
        "| pipe | a/b; c |\n")


def test_a_goal_of_domain_checks_alone_requires_action_and_an_empty_goal_does_not():
    # "exactly one refund" is work a no-op does not do, though no row assertion names it
    assert requires_action(GoalState(domain_checks=[DomainCheck(name="one_refund", clause="R1")]))
    assert not requires_action(GoalState())


def test_audit_markdown_lists_each_faulted_task_s_reference_passes_per_condition():
    faulted = _audit("late", fault_plans={"": 2, "ledger_timeout": 1})
    tasks = [faulted, _audit("plain"), _audit("alt", alternatives_failing=["read-first"])]
    summary = {"tasks": 3, "accepted": 3, "quarantined": 0, "quarantined_fraction": 0.0,
               "max_quarantined_fraction": 0.1, "releasable": True, "reference_trials": 2}
    page = audit_markdown(AcceptanceReport(tasks=tasks, summary=summary), "faults")
    assert page.endswith(
        "| adjudicated | 0 |\n"
        "\n"
        "## Fault plans\n"
        "\n"
        "Reference passes per condition (unfaulted, then each fault plan of the task's trial protocol), out of 2.\n"
        "\n"
        "| task | condition | reference passes |\n"
        "|---|---|---|\n"
        "| late | unfaulted | 2 |\n"
        "| late | ledger_timeout | 1 |\n"), page


def test_audit_markdown_lists_no_fault_plans_where_only_alternatives_or_controls_went_wrong():
    tasks = [_audit("alt", alternatives_failing=["alternative 1: assertion[0]"]),
             _audit("control", controls_passing=["control blind retry"])]
    summary = {"tasks": 2, "accepted": 2, "quarantined": 0, "quarantined_fraction": 0.0,
               "max_quarantined_fraction": 0.1, "releasable": True, "reference_trials": 2}
    assert "Fault plans" not in audit_markdown(AcceptanceReport(tasks=tasks, summary=summary), "alternatives")


def test_audit_markdown_of_a_clean_real_run(ap):
    report = run_acceptance(ap.tasks[:2], Acceptance(reference_trials=1), in_process_runner(ap.world))
    assert audit_markdown(report, "two") == (
        "# Acceptance audit: two\n\n"
        "2 tasks, 2 accepted, 0 quarantined (0.0%; allowed 10%). Reference trials per task: 1. Releasable: yes.\n\n"
        "| check | tasks failing |\n|---|---|\n"
        + "".join(f"| {name} | 0 |\n" for name in TASK_GATES))
