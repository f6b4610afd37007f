"""One trial: restore the world, verify the reset hash, let the agent act, grade, keep the trace."""
from __future__ import annotations

import time
import traceback
from typing import Literal

from pydantic import BaseModel

from evalsuite.trials.agents.base import Agent, AgentEnv, BudgetExhausted
from evalsuite.grading.grader import grade_trial, Verdict
from evalsuite.core.records import TaskRecord, TraceEvent
from evalsuite.worlds.faults import FaultPlan
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


def policy_text(task: TaskRecord) -> str:
    return "\n".join(f"{c.id}: {c.text}" for c in task.policy.clauses)


def run_trial(world: World, task: TaskRecord, agent: Agent, trial: int = 0, faults: FaultPlan | None = None) -> TrialResult:
    """Run and grade one trial. An exception that is not the agent's doing is an infra error, never a drop."""
    start = time.perf_counter()
    base = dict(task_id=task.task_id, agent=agent.name, trial=trial)
    try:
        env_world = world.reset(task.role, policy_text=policy_text(task), faults=faults)
    except Exception as exc:  # a refused reset is infrastructure, recorded with its traceback
        return TrialResult(**base, outcome="infra_error", passed=False, error=traceback_text(exc),
                           seconds=time.perf_counter() - start)
    env = AgentEnv(env_world, task.trial_protocol.max_steps)
    outcome: Outcome | None = None
    try:
        message = agent.run(task, env)
    except BudgetExhausted:
        message, outcome = "", "budget_exhausted"
    except Exception as exc:  # the agent crashed: recorded, with the effects it already made graded below
        return TrialResult(**base, outcome="infra_error", passed=False, trace=env_world.trace,
                           error=traceback_text(exc), reset_sha256=world.seed_sha256, seconds=time.perf_counter() - start)
    verdict = grade_trial(env_world, message, task.goal_state, task.role, task.forbidden)
    passed = verdict.passed and outcome is None
    return TrialResult(**base, outcome=outcome or ("pass" if passed else "fail"), passed=passed, verdict=verdict,
                       trace=env_world.trace, final_message=message, reset_sha256=world.seed_sha256,
                       seconds=time.perf_counter() - start)


def traceback_text(exc: BaseException) -> str:
    """The full traceback of exc as one text, as an infra_error record keeps it."""
    return "".join(traceback.format_exception(exc)).strip()
