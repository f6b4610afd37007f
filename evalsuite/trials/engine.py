"""The trial engine for agents that wait on I/O: many trials in flight in one process, on one event loop.

A model agent spends a trial waiting on its endpoint (0.3-10 s a turn), so one trial at a time per core leaves
the machine idle. Here `max_in_flight` lanes share one event loop; each lane owns one world (a sibling of the
first: its own trial copy over the shared pristine state, reset by the change log as in the sequential path)
and runs one trial at a time on it, so a trial's world is never visible to another trial in flight. Tool calls
and grading run on the loop between awaits: they take microseconds to milliseconds and touch only the lane's
world. CPU-bound agents (the baselines) keep the sequential path and the process pool (evalsuite.trials.pool).

A run cap (evalsuite.trials.spend) is checked before each trial starts, counting the trials in flight at the mean
spend of those finished: once reached, no lane takes another job, the trials in flight finish and are recorded,
and the jobs left are reported, never recorded as failures.
"""
from __future__ import annotations

import asyncio
import gc
import sys
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from evalsuite.core.prices import PriceTable
from evalsuite.core.records import TaskRecord
from evalsuite.domains.ref import WorldRef
from evalsuite.trials.agents.base import AsyncAgent
from evalsuite.trials.jobs import Job, Stamp, arun_job
from evalsuite.trials.loops import outside_loop
from evalsuite.trials.progress import RunProgress
from evalsuite.trials.spend import RunCap
from evalsuite.trials.tracelog import TrialRecord
from evalsuite.worlds.world import World


@dataclass
class EngineRun:
    """One agent's jobs on the engine, and what it needs to run them."""

    agent: AsyncAgent
    stamp: Stamp
    jobs: list[Job]
    max_in_flight: int


def run_on_engine(world_ref: WorldRef, tasks: Mapping[str, TaskRecord], runs: list[EngineRun],
                  emit: Callable[[TrialRecord], None], progress: RunProgress, cap: RunCap | None = None,
                  prices: PriceTable | None = None) -> tuple[str | None, int]:
    """Run each agent's jobs, `max_in_flight` at a time; returns (the cap limit reached or None, jobs not run).

    Lanes' worlds are opened on the engine's thread and live for this call; every record is emitted as its
    trial ends (in completion order: the caller puts them back in job order)."""
    with tuned_collector():
        return outside_loop(lambda: asyncio.run(_run_all(world_ref, tasks, runs, emit, progress, cap, prices)),
                            "evalsuite-trial-engine")


# A run's first-generation collection after this many new objects, not CPython's 700: a trial in flight holds its
# objects for its whole life (its conversation, responses, trace), so a pass every 700 walked the same live objects
# again and again. 20,000 cut the collector's CPU in a 1,280-trial run at 128 in flight from 0.57 s to 0.16 s.
RUN_GC_THRESHOLD = 20_000


@contextmanager
def tuned_collector() -> Iterator[None]:
    """The garbage collector tuned for a run, and as it was after. The objects alive when the run starts (modules,
    the release, pydantic's schemas: most of the heap) are kept out of its passes (gc.freeze, gc.unfreeze after):
    trials in flight make objects fast enough for a full pass every few hundred trials, and each walked the whole
    heap, ~12% of a model-bound trial's CPU at 128 in flight; and a first-generation pass waits for
    RUN_GC_THRESHOLD new objects. Frozen objects are still freed when their last reference goes; only a cycle among
    them waits for the run's end. A process that froze its heap itself (a forking server) is left as it is."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], RUN_GC_THRESHOLD), *thresholds[1:])
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        yield
    finally:
        if freeze:
            gc.unfreeze()
        gc.set_threshold(*thresholds)


async def _run_all(world_ref: WorldRef, tasks: Mapping[str, TaskRecord], runs: list[EngineRun],
                   emit: Callable[[TrialRecord], None], progress: RunProgress, cap: RunCap | None,
                   prices: PriceTable | None) -> tuple[str | None, int]:
    worlds = _Worlds(world_ref)
    reached: str | None = None
    left = 0
    try:
        for run in runs:
            queue = deque(run.jobs)
            if reached is None:
                reached = await _drain(queue, run, tasks, worlds, emit, progress, cap, prices)
            left += len(queue)
    finally:
        # a model client no agent closed (an LLM user's beside an external agent) holds an aiohttp session on this
        # loop; there is one only if the client's module was loaded, and importing it here would load the SDK
        clients = sys.modules.get("evalsuite.trials.agents.model_client")
        if clients is not None:
            await clients.close_clients()
    return reached, left


async def _drain(queue: deque[Job], run: EngineRun, tasks: Mapping[str, TaskRecord], worlds: _Worlds,
                 emit: Callable[[TrialRecord], None], progress: RunProgress, cap: RunCap | None,
                 prices: PriceTable | None) -> str | None:
    """Run the queue's jobs in `max_in_flight` lanes until it is empty or the cap is reached (returned)."""
    reached: list[str] = []

    async def lane(world: World) -> None:
        while queue and not reached:
            limit = progress.spend.reached(cap, progress.in_flight)
            if limit is not None:
                reached.append(limit)
                return
            job = queue.popleft()
            progress.started()
            record = await arun_job(world, tasks[job.task_id], run.agent, job.trial, run.stamp, prices)
            emit(record)
            progress.finished(record)

    lanes = min(run.max_in_flight, len(queue))
    try:
        await asyncio.gather(*(lane(worlds.lane(i)) for i in range(lanes)))
    finally:
        if hasattr(run.agent, "aclose"):  # a long-lived agent's processes end on the loop they run on
            await run.agent.aclose()
    return reached[0] if reached else None


class _Worlds:
    """One world per lane, opened when a lane first needs it: the first from the reference, the rest its
    siblings; kept across agents of one call."""

    def __init__(self, ref: WorldRef):
        self._ref = ref
        self._worlds: list[World] = []

    def lane(self, i: int) -> World:
        while len(self._worlds) <= i:
            self._worlds.append(self._worlds[0].sibling() if self._worlds else self._ref.open())
        return self._worlds[i]
