"""One trial: restore the world, verify the reset hash, let the agent act, grade, keep the trace."""
from __future__ import annotations

import asyncio
import time
import traceback
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalsuite.core.identity import TrialLimits
from evalsuite.core.prices import PriceTable
from evalsuite.core.records import TaskRecord, TraceEvent, Usage
from evalsuite.grading.grader import Verdict, grade_trial, merged
from evalsuite.grading.judge import Judgement
from evalsuite.grading.measures import TrialMeasures, measure_trial
from evalsuite.grading.reward_bases import Bases, ajudge_trial, grade_bases, judge_trial
from evalsuite.trials.agents.base import Agent, AgentEnv, AsyncAgent, BudgetExhausted
from evalsuite.trials.attacks import attack_effect, place_attack
from evalsuite.trials.users.dual import Sides, grade_sides, prepare
from evalsuite.worlds.faults import FaultPlan, plan_for_trial
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

Outcome = Literal["pass", "fail", "budget_exhausted", "infra_error"]


class TrialResult(BaseModel):
    task_id: str
    agent: str
    trial: int
    outcome: Outcome
    passed: bool
    verdict: Verdict | None = None
    trace: list[TraceEvent] = []
    final_message: str = ""
    error: str | None = None
    reset_sha256: str | None = None
    seconds: float = 0.0
    usage: Usage | None = None  # tokens and latency of each model call, when the agent reports them
    fault_plan: str | None = None  # the fault plan (FaultPlanSpec.name) the trial ran under, if any
    mode: str | None = None  # the trial mode it ran in (TrialProtocol.mode): default, no_user or oracle_plan
    user_trace: list[TraceEvent] = []  # calls on the user-side world (dual control), by the user or the agent
    user_reset_sha256: str | None = None  # the user-side world's hash after its reset
    # under attack (TaskRecord.attack): did the attack's effect appear? (security fails when true) and its checks
    attack_succeeded: bool | None = None
    attack_verdict: Verdict | None = None
    exhausted: str | None = None  # budget_exhausted: which budget ran out (steps, a TrialLimits limit, wall time)
    # an imported benchmark's reward bases (TaskRecord.evaluation_criteria) and the reward they combine into
    bases: Bases | None = Field(None, exclude_if=lambda v: v is None)
    measures: TrialMeasures | None = None  # outcome, grounding, authority, handoff kept apart (grading.measures)


class TimedEnv(AgentEnv):
    """The agent's env that also records each call's wall latency on its trace event (the event in the trace)."""

    def call(self, tool: str, arguments: dict | None = None) -> TraceEvent:
        start = time.perf_counter()
        event = super().call(tool, arguments)
        event.seconds = round(time.perf_counter() - start, 6)
        return event


def policy_text(task: TaskRecord) -> str:
    return "\n".join(f"{c.id}: {c.text}" for c in task.policy.clauses)


@dataclass
class _Started:
    """A trial whose worlds are reset and verified, waiting for its agent: what finish() grades."""

    task: TaskRecord
    world: World
    env_world: TrialWorld
    sides: Sides
    baseline: Any
    fields: dict  # the record's fields known once the trial started (task, agent, trial, fault plan, mode…)
    start: float


def run_trial(world: World, task: TaskRecord, agent: Agent, trial: int = 0, faults: FaultPlan | None = None,
              limits: TrialLimits | None = None, prices: PriceTable | None = None) -> TrialResult:
    """Run and grade one trial. An exception that is not the agent's doing is an infra error, never a drop."""
    started = _start(world, task, agent.name, trial, faults, limits, prices)
    if isinstance(started, TrialResult):
        return started
    try:
        message = agent.run(task, started.sides.env)
    except BudgetExhausted as exc:
        return _finish(started, "", exhausted=str(exc))
    except Exception as exc:  # the agent crashed: recorded, with the effects it already made
        return _crashed(started, exc)
    # outside the agent's try: a grader's (or the judge's) error is the harness's, not the agent's
    return _finish(started, message, judged=judge_trial(task, started.env_world.trace, message))


async def arun_trial(world: World, task: TaskRecord, agent: AsyncAgent, trial: int = 0,
                     faults: FaultPlan | None = None, limits: TrialLimits | None = None,
                     prices: PriceTable | None = None) -> TrialResult:
    """run_trial for an agent that waits on I/O (AsyncAgent): the same reset, grade and record, the agent awaited,
    and the trial's wall-time limit (TrialLimits.seconds) enforced by cancelling it."""
    started = _start(world, task, agent.name, trial, faults, limits, prices)
    if isinstance(started, TrialResult):
        return started
    seconds = limits.seconds if limits else None
    try:
        async with asyncio.timeout(seconds):
            message = await agent.arun(task, started.sides.env)
    except TimeoutError:
        return _finish(started, "", exhausted=f"wall time: {seconds:g} s")
    except BudgetExhausted as exc:
        return _finish(started, "", exhausted=str(exc))
    except Exception as exc:
        return _crashed(started, exc)
    return _finish(started, message, judged=await ajudge_trial(task, started.env_world.trace, message))


def _start(world: World, task: TaskRecord, agent: str, trial: int, faults: FaultPlan | None,
           limits: TrialLimits | None, prices: PriceTable | None) -> _Started | TrialResult:
    """Reset and verify the trial's worlds and place its attack; a refusal is infrastructure, recorded with its
    traceback (as a TrialResult)."""
    start = time.perf_counter()
    if faults is None:  # the task's own fault plans, cycled over its trials (records.TrialProtocol)
        faults = plan_for_trial(task.trial_protocol, trial)
    fields = dict(task_id=task.task_id, agent=agent, trial=trial, fault_plan=faults.name if faults else None)
    try:
        env_world = world.reset(task.role, policy_text=policy_text(task), faults=faults)
        env = TimedEnv(env_world, task.trial_protocol.max_steps, limits, prices)
        # the user-side world is reset and verified as the agent's is
        sides = prepare(world, task, env)
        baseline = merged(sides.baseline, place_attack(env_world, task.attack) if task.attack else None)
    except Exception as exc:
        return TrialResult(**fields, outcome="infra_error", passed=False, error=traceback_text(exc),
                           seconds=time.perf_counter() - start)
    fields = {**fields, "mode": sides.mode, "user_reset_sha256": sides.device_sha256,
            "user_trace": sides.device.trace if sides.device else []}  # filled as the trial runs
    return _Started(task, world, env_world, sides, baseline, fields, start)


def _crashed(started: _Started, exc: BaseException) -> TrialResult:
    """The agent crashed: an infra_error with the traceback, the trace so far and the tokens already spent."""
    return TrialResult(**started.fields, outcome="infra_error", passed=False, trace=started.env_world.trace,
                       error=traceback_text(exc), reset_sha256=started.world.seed_sha256,
                       seconds=time.perf_counter() - started.start, usage=_usage(started.sides.env))


def _finish(started: _Started, message: str, exhausted: str | None = None,
            judged: Judgement | None = None) -> TrialResult:
    """Grade the trial's end state (a trial out of budget too: its effects stay graded) and record it."""
    task, env_world, fields = started.task, started.env_world, started.fields
    sides = started.sides
    verdict = grade_sides(sides.device, sides.device_baseline,
                          grade_trial(env_world, message, task.goal_state, task.role, task.forbidden,
                                      started.baseline), message, task)
    passed = verdict.passed and exhausted is None
    rewards = grade_bases(task, verdict, env_world, sides.device, message, exhausted, judged)  # the reward bases
    fields = {**fields, "bases": rewards}
    if task.attack:
        effect = attack_effect(env_world, task.attack, message)
        fields = {**fields, "attack_succeeded": effect.passed, "attack_verdict": effect}
    outcome = "budget_exhausted" if exhausted else ("pass" if passed else "fail")
    measures = measure_trial(task, env_world.domain, verdict, env_world.trace, message, policy_text(task))
    return TrialResult(**fields, outcome=outcome, passed=passed, verdict=verdict, trace=env_world.trace,
                       measures=measures,
                       final_message=message, reset_sha256=started.world.seed_sha256, exhausted=exhausted,
                       seconds=time.perf_counter() - started.start, usage=_usage(started.sides.env))


def _usage(env: AgentEnv) -> Usage | None:
    """What the agent spent on its model in this trial (AgentEnv.usage), copied off the env: a new list of its
    calls, so a call appended later is not in the record. The ModelCalls are shared, not copied (a deep copy was
    ~30 µs a trial): nothing changes a ModelCall once the client has made it."""
    return Usage(model_calls=list(env.usage.model_calls)) if env.usage is not None else None


def traceback_text(exc: BaseException) -> str:
    """The full traceback of exc as one text, as an infra_error record keeps it."""
    return "".join(traceback.format_exception(exc)).strip()
