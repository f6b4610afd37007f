"""One job, (task_id, agent, trial index), run into one stamped TrialRecord.

Shared by the in-process path and the worker processes so both produce the
same record for the same job.
"""
from __future__ import annotations

import importlib
import random
import time
from collections.abc import Callable
from typing import NamedTuple

from pydantic import BaseModel

from evalsuite.core.identity import AgentConfig, TrialLimits, trial_seed
from evalsuite.core.prices import PriceTable
from evalsuite.core.records import TaskRecord
from evalsuite.trials.agents.base import Agent, AsyncAgent
from evalsuite.trials.tracelog import TrialRecord
from evalsuite.trials.trial import TrialResult, arun_trial, run_trial, traceback_text
from evalsuite.worlds.world import World


class Job(NamedTuple):
    task_id: str
    agent: str
    trial: int


class Stamp(BaseModel):
    """What every record of one agent carries: its identity fields, their hash and the run seed."""

    fields: dict
    run_seed: int
    identity_sha256: str


def run_job(world: World, task: TaskRecord, agent: Agent, trial: int, stamp: Stamp,
            prices: PriceTable | None = None) -> TrialRecord:
    """Run one trial; an exception escaping run_trial is an infra_error record, never a lost trial.

    Python's global `random` is seeded with the trial seed for the trial's
    duration (and restored after), so an agent that draws from it behaves the
    same whichever worker runs the job and in whatever order.
    """
    seed = trial_seed(stamp.run_seed, task.task_id, agent.name, trial)
    state = random.getstate()
    random.seed(seed)
    start = time.perf_counter()
    try:
        result = run_trial(world, task, agent, trial, limits=_limits(stamp), prices=prices)
    except Exception as exc:  # a harness-side crash: recorded with its traceback, counted as a failed trial
        result = _harness_crash(task, agent.name, trial, exc, start)
    finally:
        random.setstate(state)
    return stamp_result(result, stamp, seed)


async def arun_job(world: World, task: TaskRecord, agent: AsyncAgent, trial: int, stamp: Stamp,
                   prices: PriceTable | None = None) -> TrialRecord:
    """run_job for an agent on the trial engine. Trials in flight share the thread, so the global `random` is
    not seeded per trial here: an async agent that needs randomness draws from the trial seed it is stamped with."""
    seed = trial_seed(stamp.run_seed, task.task_id, agent.name, trial)
    start = time.perf_counter()
    try:
        result = await arun_trial(world, task, agent, trial, limits=_limits(stamp), prices=prices)
    except Exception as exc:
        result = _harness_crash(task, agent.name, trial, exc, start)
    return stamp_result(result, stamp, seed)


def _limits(stamp: Stamp) -> TrialLimits | None:
    """The agent's per-trial limits, as its config (stamped on every record) gives them."""
    limits = stamp.fields.get("agent_config", {}).get("limits")
    return TrialLimits.model_validate(limits) if limits else None


def _harness_crash(task: TaskRecord, agent: str, trial: int, exc: Exception, start: float) -> TrialResult:
    return TrialResult(task_id=task.task_id, agent=agent, trial=trial, outcome="infra_error", passed=False,
                       error=traceback_text(exc), seconds=time.perf_counter() - start)


def crash_record(job: Job, stamp: Stamp, error: str) -> TrialRecord:
    """The record of a job whose worker process died: it was attempted, so it is scored as a failure."""
    result = TrialResult(task_id=job.task_id, agent=job.agent, trial=job.trial, outcome="infra_error", passed=False,
                         error=error)
    return stamp_result(result, stamp, trial_seed(stamp.run_seed, job.task_id, job.agent, job.trial))


def stamp_result(result: TrialResult, stamp: Stamp, seed: int) -> TrialRecord:
    # dict(result), not a dump: its verdict and trace are already validated models, taken over as they are
    return TrialRecord.model_validate({**dict(result), **stamp.fields, "run_seed": stamp.run_seed,
                                       "trial_seed": seed, "identity_sha256": stamp.identity_sha256})


AgentFactory = Callable[[AgentConfig], Agent]


def load_factory(spec: str | None) -> AgentFactory:
    """The agent factory, called with an AgentConfig: built-in make_agent, or "module:callable" for agents
    a worker must import."""
    if spec is None:
        from evalsuite.trials.agents.factory import make_agent

        return make_agent
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"agent factory {spec!r}: expected 'module:callable'")
    return getattr(importlib.import_module(module), attr)


def build_agent(factory: AgentFactory, config: AgentConfig) -> Agent:
    agent = factory(config)
    if agent.name != config.name:  # records are keyed by the config's name; a mismatch would split its score
        raise ValueError(f"agent factory returned an agent named {agent.name!r} for {config.name!r}")
    return agent
