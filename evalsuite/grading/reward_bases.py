"""Every τ²-bench reward basis of a trial, graded as the original grades it, and the reward they combine into.

A task imported with its evaluation criteria (TaskRecord.evaluation_criteria) is graded on each basis:

- DB: the end state is the one the reference leaves. This is the verdict's own end-state check (goal rows,
  unchanged tables, no collateral change, on the agent's world and the user's), not a second one; the trace and
  final-message checks of the verdict are evalsuite's own and do not count here.
- ENV_ASSERTION: each assertion function, a check the domain registers, run on the end state of the world it
  names; it holds when its result is the expected value.
- COMMUNICATE: each required string is in some message of the agent: lower-cased, in the message lower-cased
  with its commas removed (so "23553" is found in "$23,553", and a string holding a comma is never found).
- ACTION: each reference call is matched by some traced call, the agent's or the user's, in any order: same
  tool; arguments equal on the action's `compare_args` ([]: the name alone), else on the keys the call passed
  (so a call that leaves out an argument the reference gives still matches, as in the original).
- NL_ASSERTION: the pinned judge (evalsuite.grading.judge) decides each assertion; without an endpoint, or on a
  trial that ended without a stop, it is not graded.

Each basis is pass, fail or not graded; an empty list passes, as in the original. The reward is the product of
the bases in the task's reward_basis: fail when any fails (0 times anything is 0) or when the trial ended without
the agent or the user stopping (budget exhausted), pass when all pass, else not graded. Bases outside
reward_basis are graded too, except NL_ASSERTION (a judge call), and shown but not counted.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from evalsuite.core.records import (
    MESSAGE,
    REWARD_BASES,
    Check,
    EvaluationCriteria,
    GoldAction,
    RewardBasis,
    TaskRecord,
    TraceEvent,
)
from evalsuite.grading import judge
from evalsuite.grading.grader import Verdict, run_check, state_checks
from evalsuite.grading.judge import Judgement
from evalsuite.worlds.trial_world import TrialWorld

Status = Literal["pass", "fail", "not_graded"]
NO_STOP = "the trial ended without the agent or the user stopping (budget exhausted): the original's reward is 0"


class BasisResult(BaseModel):
    basis: RewardBasis
    status: Status
    counted: bool  # in the task's reward_basis: part of the reward
    checks: list[Check] = []  # one per item (action, string, assertion); for DB the failing end-state checks
    detail: str = ""


class Bases(BaseModel):
    """A trial's reward bases and the reward they combine into."""

    reward: Status
    bases: list[BasisResult]
    detail: str = ""
    judgement: Judgement | None = None  # the judge's answer, when NL_ASSERTION was judged

    def status(self, basis: RewardBasis) -> Status | None:
        return next((b.status for b in self.bases if b.basis == basis), None)


def bases_summary(bases: Bases) -> dict[str, Any]:
    """A trial's statuses for a run's summary table: the reward, the counted bases and the others."""
    return {"reward": bases.reward, "counted": {b.basis: b.status for b in bases.bases if b.counted},
            "other": {b.basis: b.status for b in bases.bases if not b.counted}}


def needs_judge(task: TaskRecord) -> bool:
    crit = task.evaluation_criteria
    return crit is not None and "NL_ASSERTION" in crit.reward_basis and bool(crit.nl_assertions)


def judge_trial(task: TaskRecord, trace: Sequence[TraceEvent], final_message: str) -> Judgement | None:
    """The judge's verdict on the task's assertions, or None: nothing to judge, or no endpoint configured."""
    where = judge.endpoint()
    if not needs_judge(task) or where is None:
        return None
    crit = task.evaluation_criteria
    return judge.judge(where, crit.judge, judge.transcript(trace, final_message), crit.nl_assertions)


async def ajudge_trial(task: TaskRecord, trace: Sequence[TraceEvent], final_message: str) -> Judgement | None:
    """judge_trial, awaited."""
    where = judge.endpoint()
    if not needs_judge(task) or where is None:
        return None
    crit = task.evaluation_criteria
    return await judge.ajudge(where, crit.judge, judge.transcript(trace, final_message), crit.nl_assertions)


def grade_bases(task: TaskRecord, verdict: Verdict, trial: TrialWorld, device: TrialWorld | None,
                final_message: str, exhausted: str | None = None,
                judged: Judgement | None = None) -> Bases | None:
    """Every basis of a task that carries evaluation criteria (None for one that does not)."""
    crit = task.evaluation_criteria
    if crit is None:
        return None
    calls = [e for e in [*trial.trace, *(device.trace if device else [])] if e.kind != MESSAGE]
    graded: dict[RewardBasis, tuple[Status, list[Check], str]] = {
        "DB": _db(verdict),
        "ENV_ASSERTION": _env(task, trial, device, final_message),
        "COMMUNICATE": _communicate(crit, agent_messages(trial.trace, final_message)),
        "ACTION": _actions(crit.actions, calls),
    }
    if "NL_ASSERTION" in crit.reward_basis:
        graded["NL_ASSERTION"] = _nl(crit, judged, exhausted)
    results = [BasisResult(basis=b, status=graded[b][0], counted=b in crit.reward_basis, checks=graded[b][1],
                           detail=graded[b][2]) for b in REWARD_BASES if b in graded]
    return Bases(reward=combine([r.status for r in results if r.counted], exhausted), bases=results,
                 detail=NO_STOP if exhausted else "", judgement=judged)


def combine(counted: Sequence[Status], exhausted: str | None = None) -> Status:
    """The product of the counted bases: 0 times anything is 0, so one failure decides it without the rest."""
    if exhausted or "fail" in counted:
        return "fail"
    return "not_graded" if "not_graded" in counted else "pass"


def agent_messages(trace: Sequence[TraceEvent], final_message: str) -> list[str]:
    """What the agent said: its conversation turns, and its final message when the trace does not end with it."""
    said = [str(e.arguments.get("text", "")) for e in trace if e.kind == MESSAGE and e.actor in ("agent", "human")]
    if final_message and (not said or said[-1] != final_message):
        said.append(final_message)
    return said


def _status(checks: list[Check]) -> Status:
    return "pass" if all(c.passed for c in checks) else "fail"


def _db(verdict: Verdict) -> tuple[Status, list[Check], str]:
    state = state_checks(verdict)
    failed = [c for c in state if not c.passed]
    return _status(failed), failed, f"{len(state) - len(failed)} of {len(state)} end-state checks pass"


def _env(task: TaskRecord, trial: TrialWorld, device: TrialWorld | None,
         final_message: str) -> tuple[Status, list[Check], str]:
    checks = []
    for i, a in enumerate(task.evaluation_criteria.env_assertions):
        where = trial if a.env_type == "assistant" else device
        if where is None:
            raise ValueError(f"task {task.task_id}: evaluation_criteria.env_assertions.{i}: env_type user, but the "
                             f"domain {task.domain} has no user-side world")
        outcome = run_check(where, final_message, a.func_name, a.arguments, f"evaluation_criteria.env_assertions.{i}")
        held = outcome.passed == a.assert_value
        checks.append(Check(name=f"{a.env_type} {a.func_name} is {a.assert_value}", passed=held, kind="basis",
                            detail="" if held else (a.message or outcome.detail or f"it is {outcome.passed}")))
    return _status(checks), checks, ""


def _communicate(crit: EvaluationCriteria, said: list[str]) -> tuple[Status, list[Check], str]:
    searched = [m.lower().replace(",", "") for m in said]
    checks = [Check(name=f"says {info!r}", kind="basis", passed=any(info.lower() in m for m in searched),
                    detail="" if any(info.lower() in m for m in searched) else f"in none of {len(said)} agent messages")
              for info in crit.communicate_info]
    return _status(checks), checks, ""


def action_matches(gold: GoldAction, call: TraceEvent) -> bool:
    """The original's comparison of one reference action with one call."""
    if gold.name != call.tool:
        return False
    keys = gold.compare_args if gold.compare_args is not None else list(call.arguments)
    return _picked(call.arguments, keys) == _picked(gold.arguments, keys)


def _picked(arguments: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    return {k: arguments[k] for k in keys if k in arguments}


def _actions(actions: list[GoldAction], calls: list[TraceEvent]) -> tuple[Status, list[Check], str]:
    checks = []
    for gold in actions:
        hit = next((c for c in calls if action_matches(gold, c)), None)
        same_tool = [c for c in calls if c.tool == gold.name]
        detail = f"call #{hit.seq}" if hit else (
            f"no call of {gold.name}" if not same_tool else
            f"{len(same_tool)} call(s) of {gold.name}, arguments differ on "
            f"{sorted(_differing(gold, same_tool[0]))} (first: #{same_tool[0].seq})")
        checks.append(Check(name=f"action {gold.action_id} {gold.name}", kind="basis", passed=hit is not None,
                            detail=detail))
    return _status(checks), checks, ""


def _differing(gold: GoldAction, call: TraceEvent) -> set[str]:
    keys = gold.compare_args if gold.compare_args is not None else list(call.arguments)
    got, want = _picked(call.arguments, keys), _picked(gold.arguments, keys)
    return {k for k in set(got) | set(want) if got.get(k, ...) != want.get(k, ...)}


def _nl(crit: EvaluationCriteria, judged: Judgement | None,
        exhausted: str | None) -> tuple[Status, list[Check], str]:
    if not crit.nl_assertions:
        return "pass", [], "no assertions"
    if exhausted:
        return "not_graded", [], "not judged: the trial ended without a stop"
    if judged is None:
        return "not_graded", [], f"not judged: no judge endpoint ({judge.BASE_URL_VAR} is not set)"
    checks = [Check(name=f"asserts {r.assertion!r}", kind="basis", passed=r.met, detail=r.reasoning)
              for r in judged.results]
    return _status(checks), checks, f"judged by {judged.settings.model} (endpoint reported {judged.response_model})"
