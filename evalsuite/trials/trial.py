"""One trial: restore the world, verify the reset hash, let the agent act, grade, keep the trace."""
from __future__ import annotations

import time
import traceback
from typing import Literal

from pydantic import BaseModel

from evalsuite.core.records import TaskRecord, TraceEvent, Usage
from evalsuite.grading.grader import Verdict, grade_trial
from evalsuite.trials.agents.base import Agent, AgentEnv, BudgetExhausted
from evalsuite.trials.attacks import attack_effect, place_attack
from evalsuite.trials.users.dual import grade_sides, prepare
from evalsuite.worlds.faults import FaultPlan, plan_for_trial
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


class TimedEnv(AgentEnv):
    """The agent's env that also records each call's wall latency on its trace event (the event in the trace)."""

    def call(self, tool: str, arguments: dict | None = None) -> TraceEvent:
        start = time.perf_counter()
        event = super().call(tool, arguments)
        event.seconds = round(time.perf_counter() - start, 6)
        return event


def _usage(agent: Agent) -> Usage | None:
    """What the agent spent on its model in the trial just run: an agent that calls a model keeps a `usage`
    attribute (a Usage, reset at the start of each run); others have none."""
    usage = getattr(agent, "usage", None)
    return usage.model_copy(deep=True) if isinstance(usage, Usage) else None


def policy_text(task: TaskRecord) -> str:
    return "\n".join(f"{c.id}: {c.text}" for c in task.policy.clauses)


def run_trial(world: World, task: TaskRecord, agent: Agent, trial: int = 0,
              faults: FaultPlan | None = None) -> TrialResult:
    """Run and grade one trial. An exception that is not the agent's doing is an infra error, never a drop."""
    start = time.perf_counter()
    if faults is None:  # the task's own fault plans, cycled over its trials (records.TrialProtocol)
        faults = plan_for_trial(task.trial_protocol, trial)
    base = dict(task_id=task.task_id, agent=agent.name, trial=trial, fault_plan=faults.name if faults else None)
    try:
        env_world = world.reset(task.role, policy_text=policy_text(task), faults=faults)
    except Exception as exc:  # a refused reset is infrastructure, recorded with its traceback
        return TrialResult(**base, outcome="infra_error", passed=False, error=traceback_text(exc),
                           seconds=time.perf_counter() - start)
    env = TimedEnv(env_world, task.trial_protocol.max_steps)
    try:  # the user-side world is reset and verified as the agent's is; a refusal is infrastructure too
        sides = prepare(world, task, env)
        baseline = place_attack(env_world, task.attack) if task.attack else None
    except Exception as exc:
        return TrialResult(**base, outcome="infra_error", passed=False, error=traceback_text(exc),
                           seconds=time.perf_counter() - start)
    env, base = sides.env, {**base, "mode": sides.mode, "user_reset_sha256": sides.device_sha256,
                            "user_trace": sides.device.trace if sides.device else []}  # filled as the trial runs
    outcome: Outcome | None = None
    try:
        message = agent.run(task, env)
    except BudgetExhausted:
        message, outcome = "", "budget_exhausted"
    except Exception as exc:  # the agent crashed: recorded, with the effects it already made graded below
        # usage: an endpoint that failed mid-trial still counts the tokens spent
        return TrialResult(**base, outcome="infra_error", passed=False, trace=env_world.trace,
                           error=traceback_text(exc), reset_sha256=world.seed_sha256,
                           seconds=time.perf_counter() - start, usage=_usage(agent))
    verdict = grade_sides(sides, grade_trial(env_world, message, task.goal_state, task.role, task.forbidden,
                                             baseline), message, task)
    passed = verdict.passed and outcome is None
    if task.attack:
        effect = attack_effect(env_world, task.attack, message)
        base = {**base, "attack_succeeded": effect.passed, "attack_verdict": effect}
    return TrialResult(**base, outcome=outcome or ("pass" if passed else "fail"), passed=passed, verdict=verdict,
                       trace=env_world.trace, final_message=message, reset_sha256=world.seed_sha256,
                       seconds=time.perf_counter() - start, usage=_usage(agent))


def traceback_text(exc: BaseException) -> str:
    """The full traceback of exc as one text, as an infra_error record keeps it."""
    return "".join(traceback.format_exception(exc)).strip()
