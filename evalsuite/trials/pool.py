"""Jobs across worker processes, with a dead worker's trials recorded rather than lost.

Workers never inherit the parent's state: the parent may run a progress
thread, and a plain fork of a threaded process can deadlock. They come from
a forkserver (a clean single-threaded process that has imported this module
once, so a new worker costs milliseconds, not seconds of imports) where the
platform has one, and are spawned otherwise. Either way each opens the World
once in its initializer from JSON strings and builds each agent from its
AgentConfig, sent as JSON too: nothing unpicklable crosses the process
boundary, and a worker runs exactly the configured agent. One submission
carries every trial of one task x agent, which amortises the IPC; at most one
chunk per worker is in flight, so the chunks in flight are the chunks running.

When a worker dies (BrokenProcessPool) every in-flight future fails and there
is no telling which chunk killed it. Those chunks are rerun one at a time in
a one-worker pool: a chunk that breaks that pool alone is the culprit, and
its trials become infra_error records with the traceback; the others get
their real outcomes. Nothing is silently dropped and no innocent trial is
charged with another's crash.
"""
from __future__ import annotations

import json
import multiprocessing
import multiprocessing.connection
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import NamedTuple

from evalsuite.core.identity import AgentConfig
from evalsuite.core.records import TaskRecord
from evalsuite.domains.ref import WorldRef
from evalsuite.trials.agents.endpoint import Endpoint, adopt_endpoint, current_endpoint
from evalsuite.trials.jobs import Job, Stamp, build_agent, crash_record, load_factory, run_job
from evalsuite.trials.tracelog import TrialRecord
from evalsuite.trials.trial import traceback_text


class HarnessError(RuntimeError):
    """The run itself cannot proceed (a worker cannot start, a harness bug); finished trials stay on disk."""


class Chunk(NamedTuple):
    agent: str
    task_id: str
    trials: tuple[int, ...]

    def jobs(self) -> list[Job]:
        return [Job(self.task_id, self.agent, i) for i in self.trials]


Emit = Callable[[TrialRecord], None]


def run_pool(world: WorldRef, tasks: list[TaskRecord], chunks: list[Chunk], configs: dict[str, AgentConfig],
             stamps: dict[str, Stamp], workers: int, factory: str | None, emit: Emit) -> None:
    init = (world.model_dump_json(), json.dumps([t.model_dump(mode="json") for t in tasks]),
            json.dumps({name: c.model_dump(mode="json") for name, c in configs.items()}), factory,
            current_endpoint())  # the Dagster resource's settings: a worker does not inherit the context var
    pending, suspects = deque(chunks), deque()
    while pending or suspects:
        isolating = bool(suspects)
        source = suspects if isolating else pending
        lost = _drain(init, source, 1 if isolating else workers, stamps, emit)
        if lost and isolating:  # alone in its pool: this chunk killed its worker
            chunk, exc = lost[0]
            note = "worker process died running this task x agent alone (its trials are infra errors)\n"
            for job in chunk.jobs():
                emit(crash_record(job, stamps[chunk.agent], note + traceback_text(exc)))
        else:
            suspects.extend(chunk for chunk, _ in lost)


def _drain(init: tuple, source: deque, limit: int, stamps: dict[str, Stamp],
           emit: Emit) -> list[tuple[Chunk, BaseException]]:
    """Run chunks from source until it is empty or the pool breaks; return the chunks lost to a break."""
    lost: list[tuple[Chunk, BaseException]] = []
    broken: BaseException | None = None
    with _main_hidden(), ProcessPoolExecutor(limit, mp_context=_context(), initializer=_init_worker,
                                             initargs=init) as pool:
        inflight: dict[Future, Chunk] = {}
        try:
            while (source and not broken) or inflight:
                while source and not broken and len(inflight) < limit:
                    chunk = source.popleft()
                    try:
                        inflight[pool.submit(_run_chunk, chunk, stamps[chunk.agent].model_dump_json())] = chunk
                    except BrokenProcessPool as exc:  # broke since the last wait: this chunk never ran
                        source.appendleft(chunk)
                        broken = exc
                if not inflight:
                    break
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in done:
                    chunk = inflight.pop(fut)
                    try:
                        lines = fut.result()
                    except BrokenProcessPool as exc:
                        lost.append((chunk, exc))
                        broken = exc
                        continue
                    except Exception as exc:  # not a trial's doing: the harness is broken, stop loudly
                        raise HarnessError(f"chunk {chunk.agent}/{chunk.task_id} failed in its worker: {exc}") from exc
                    for line in lines:
                        emit(TrialRecord.model_validate_json(line))
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    if broken and not lost:  # no trial was running, so no trial can be charged; retrying blind could loop forever
        raise HarnessError(f"the worker pool broke with no trial running: {broken}") from broken
    return lost


@contextmanager
def _main_hidden() -> Iterator[None]:
    """While the pool lives, workers are told nothing of the calling script. Spawned and forkserver children
    re-run a script's top level (multiprocessing imports __main__ again from its file or module name) unless it
    stands under `if __name__ == "__main__":`, and a plain script calling evalsuite.run would then build and run a
    second time inside every worker. A worker needs only evalsuite and the agent factory, imported by name."""
    main = sys.modules.get("__main__")
    saved = {k: v for k, v in vars(main).items() if k in ("__file__", "__spec__")} if main is not None else {}
    if "__file__" in saved:
        del main.__file__
    if "__spec__" in saved:
        main.__spec__ = None
    try:
        yield
    finally:
        vars(main).update(saved)


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # pandas: every worker hashes its world image on opening, and importing it there would cost each new worker
        # about 0.25 s; imported once in the server, it costs nothing per worker. Takes effect when the server
        # starts; harmless after.
        ctx.set_forkserver_preload([__name__, "pandas"])
        return ctx
    return multiprocessing.get_context("spawn")


# --- worker side ------------------------------------------------------------

_STATE: dict = {}


def _init_worker(world_json: str, tasks_json: str, configs_json: str, factory: str | None,
                 model_endpoint: Endpoint) -> None:
    """Open the world, index the tasks and read the agent configs once per process.

    A failure is kept, not raised: a raising initializer only shows up as a
    BrokenProcessPool, indistinguishable from a trial killing its worker.
    Raised from the first chunk instead, it stops the run with its cause.
    """
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent.sentinel,), daemon=True).start()
    try:
        adopt_endpoint(model_endpoint)
        _STATE["world"] = WorldRef.model_validate_json(world_json).open()
        _STATE["tasks"] = {t["task_id"]: TaskRecord.model_validate(t) for t in json.loads(tasks_json)}
        _STATE["configs"] = {n: AgentConfig.model_validate(c) for n, c in json.loads(configs_json).items()}
        _STATE["factory"] = load_factory(factory)
        _STATE["agents"] = {}
    except Exception as exc:
        _STATE["init_error"] = traceback_text(exc)


def _exit_with_parent(sentinel: int) -> None:
    """End this worker when the run's process dies (a SIGKILL runs no cleanup).

    Without it a worker waits forever on its call queue, whose write end it
    holds itself, and keeps the forkserver alive with it.
    """
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def _run_chunk(chunk: Chunk, stamp_json: str) -> list[str]:
    if "init_error" in _STATE:
        raise RuntimeError(f"worker initialisation failed:\n{_STATE['init_error']}")
    agents = _STATE["agents"]
    if chunk.agent not in agents:
        agents[chunk.agent] = build_agent(_STATE["factory"], _STATE["configs"][chunk.agent])
    stamp = Stamp.model_validate_json(stamp_json)
    task = _STATE["tasks"][chunk.task_id]
    return [run_job(_STATE["world"], task, agents[chunk.agent], i, stamp).model_dump_json() for i in chunk.trials]
