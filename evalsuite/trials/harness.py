"""Run many trials: jobs, resume from traces.jsonl, in-process or across worker processes.

A job is (task_id, agent, trial index). Finished trials are appended to
out_dir/traces.jsonl as they arrive, so a killed run resumes where it
stopped: jobs already recorded under the same identity are skipped, never
rerun (rerunning would let a lucky retry replace a recorded outcome). A
traces file written under another identity is refused rather than mixed
into one score.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from evalsuite.core.identity import AgentConfig, RunIdentity, identity_sha256
from evalsuite.core.prices import PriceTable, load_prices
from evalsuite.core.records import TaskRecord
from evalsuite.domains.ref import WorldRef
from evalsuite.trials.agents.base import Agent, is_async
from evalsuite.trials.agents.endpoint import current_endpoint
from evalsuite.trials.engine import EngineRun, run_on_engine
from evalsuite.trials.jobs import Job, Stamp, build_agent, load_factory, run_job
from evalsuite.trials.pool import Chunk, HarnessError, run_pool
from evalsuite.trials.progress import Report, RunProgress
from evalsuite.trials.spend import CapReached, RunCap, RunCapped, Spend
from evalsuite.trials.tracelog import SUMMARY, TRACES, TraceWriter, TrialRecord, repair_traces, write_summary
from evalsuite.trials.trial import TrialResult


@dataclass(frozen=True)
class TrialSettings:
    """How a batch of trials runs and what its records are stamped with.

    identity and seed make every record's stamp (the identity takes on the agents' configs). out_dir holds
    traces.jsonl and summary.parquet, and makes the batch resumable; None keeps the records in memory only.
    workers defaults to os.cpu_count(); workers=1 runs in this process, the only mode that accepts agent
    objects (a custom agent cannot be sent to a spawned worker; use agent_factory="module:callable" for one a
    worker can import). progress draws a bar on stderr.
    """

    identity: RunIdentity
    seed: int = 0
    out_dir: Path | None = None
    workers: int | None = None
    progress: bool = False
    agent_factory: str | None = None
    max_in_flight: int | None = None  # trials at once of an agent on the trial engine; None: the agent's default
    cap: RunCap | None = None  # the run's spending cap (evalsuite.trials.spend)
    report: Report | None = None  # gets the progress line every few seconds and at the end (a Dagster log)

    def __post_init__(self) -> None:
        if self.out_dir is not None:
            object.__setattr__(self, "out_dir", Path(self.out_dir))


@dataclass
class _Agents:
    """The batch's agents by name: their configs, the built agents, their stamps, and which were given as objects;
    and the identity that takes on their configs."""

    identity: RunIdentity
    names: list[str]
    configs: dict[str, AgentConfig]
    built: dict[str, Agent]
    stamps: dict[str, Stamp]
    objects: set[str]

    def close(self) -> None:
        for name in self.names:  # a long-lived agent (mcp persistent or zygote) stops its process and tool server
            if name not in self.objects and hasattr(self.built[name], "close"):
                self.built[name].close()


def run_trials(world_ref: WorldRef, tasks: list[TaskRecord], agents: Sequence[str | AgentConfig | Agent],
               trials: int | Mapping[str, int] | None, settings: TrialSettings) -> list[TrialRecord]:
    """Run every (task, agent, trial) job and return their records in job order.

    trials=None runs each task's own trial_protocol.trials; a mapping gives a count per agent
    name (acceptance: the reference N times, the baselines once). Agents are named (AgentConfig.parse),
    given as AgentConfig, or (workers=1 only) as agent objects; every agent is built from its config and
    every record stamped with it.
    """
    workers = settings.workers or os.cpu_count() or 1
    if current_endpoint().cache_dir and not settings.identity.response_cache:  # a cached run never passes as fresh
        raise ValueError("model responses may come from the response cache, but the run identity does not say "
                         "so (RunIdentity.response_cache)")
    by_id = _index(tasks, settings.identity, world_ref)
    crew = _agents(agents, settings, workers)
    jobs = [Job(t.task_id, n, i) for n in crew.names for t in tasks for i in range(_trial_count(trials, n, t))]
    earlier = _earlier(settings, crew)
    have = {r.key: r for r in earlier}
    todo = [j for j in jobs if j not in have]
    new: dict[tuple, TrialRecord] = {}
    prices = _prices(crew, settings.cap)
    progress = RunProgress(len(jobs), len(jobs) - len(todo), Spend(prices, earlier), settings.report)
    writer = TraceWriter(settings.out_dir / TRACES) if settings.out_dir is not None else None
    try:
        with progress.shown(settings.progress):
            def emit(record: TrialRecord) -> None:
                if writer:
                    writer.write(record)
                new[record.key] = record

            reached, left = _run_todo(world_ref, tasks, by_id, todo, crew, settings, workers, emit, progress, prices)
    finally:
        if writer:
            writer.close()
        crew.close()
    missing = [j for j in todo if j not in new]
    if len(missing) != left:  # every job must end as a record or be left by the cap; a gap is a harness bug
        raise HarnessError(f"{len(missing)} job(s) produced no record, first: {missing[0]}")
    if settings.out_dir is not None:
        write_summary([*earlier, *new.values()], settings.out_dir / SUMMARY)
    if reached is not None:
        raise RunCapped(CapReached(limit=reached, spent=progress.spend.line(), trials_not_run=left))
    return [have.get(j) or new[j] for j in jobs]


def _run_todo(world_ref: WorldRef, tasks: list[TaskRecord], by_id: dict[str, TaskRecord], todo: list[Job],
              crew: _Agents, settings: TrialSettings, workers: int, emit: Callable[[TrialRecord], None],
              progress: RunProgress, prices: PriceTable | None) -> tuple[str | None, int]:
    """CPU-bound agents' jobs in this process or the pool, then I/O-bound agents' on the trial engine;
    (the cap limit reached or None, jobs the cap left)."""
    engine = {n for n in crew.names if is_async(crew.built[n])}
    waiting = [j for j in todo if j.agent not in engine]

    def done(record: TrialRecord) -> None:
        emit(record)
        progress.finished(record, was_in_flight=False)

    if workers == 1 and waiting:
        with closing(world_ref.open()) as world:
            for job in waiting:
                done(run_job(world, by_id[job.task_id], crew.built[job.agent], job.trial, crew.stamps[job.agent]))
    elif waiting:
        run_pool(world_ref, tasks, _chunks(waiting), crew.configs, crew.stamps, workers, settings.agent_factory, done)
    runs = [EngineRun(crew.built[n], crew.stamps[n], [j for j in todo if j.agent == n],
                      settings.max_in_flight or crew.configs[n].max_in_flight or crew.built[n].max_in_flight)
            for n in crew.names if n in engine]
    runs = [r for r in runs if r.jobs]
    if not runs:
        return None, 0
    return run_on_engine(world_ref, by_id, runs, emit, progress, settings.cap, prices)


def _prices(crew: _Agents, cap: RunCap | None) -> PriceTable | None:
    """The price table a run with model agents prices its spend with (progress, limits, cap); None without them."""
    if not any(is_async(a) for a in crew.built.values()) and cap is None:
        return None
    return load_prices().table


def _agents(agents: Sequence[str | AgentConfig | Agent], settings: TrialSettings, workers: int) -> _Agents:
    """The agents named, configured and built (an unknown name fails here, before any trial), and stamped."""
    objects = {a.name: a for a in agents if not isinstance(a, (str, AgentConfig))}
    if objects and workers != 1:
        raise ValueError(f"agent objects ({', '.join(objects)}) run only with workers=1; use agent_factory")
    names = [a if isinstance(a, str) else a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agent names repeat: {names}")
    identity = settings.identity.with_agents(a if isinstance(a, (str, AgentConfig)) else a.name for a in agents)
    factory = load_factory(settings.agent_factory)
    configs = {n: identity.agent_config(n) for n in names}
    return _Agents(identity, names, configs, {n: objects.get(n) or build_agent(factory, configs[n]) for n in names},
                   {n: _stamp(identity, n, settings.seed) for n in names}, set(objects))


def _earlier(settings: TrialSettings, crew: _Agents) -> list[TrialRecord]:
    """The records out_dir already holds (a torn last line repaired), checked to be this batch's identity."""
    if settings.out_dir is None:
        return []
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    earlier = repair_traces(settings.out_dir / TRACES).records
    _check_resumable(earlier, crew.identity, crew.stamps, settings.seed, settings.out_dir / TRACES)
    return earlier


def default_workers(trials: int) -> int | None:
    """1 (this process) unless a worker pool pays: it costs ~0.5 s to start, and on 2 cores 10,000
    millisecond-scale AP trials took 19.8 s in process and 21.9 s across the pool. None = all cores."""
    return None if trials >= 3000 and (os.cpu_count() or 1) >= 4 else 1


def acceptance_runner(world_ref: WorldRef, identity: RunIdentity, workers: int | None = None
                      ) -> Callable[[list[TaskRecord], Mapping[str, int]], list[TrialResult]]:
    """A runner for evalsuite.audit.acceptance.run_acceptance: one pool for all its agents and trials."""

    def run(tasks: list[TaskRecord], plan: Mapping[str, int]) -> list[TrialResult]:
        total = len(tasks) * sum(plan.values())
        return list(run_trials(world_ref, tasks, list(plan), plan,
                               TrialSettings(identity, workers=workers or default_workers(total))))

    return run


def _trial_count(trials: int | Mapping[str, int] | None, agent: str, task: TaskRecord) -> int:
    if trials is None:
        return task.trial_protocol.trials
    return trials if isinstance(trials, int) else trials[agent]


def _index(tasks: list[TaskRecord], identity: RunIdentity, world_ref: WorldRef) -> dict[str, TaskRecord]:
    if world_ref.seed_sha256 != identity.seed_sha256:
        raise ValueError(f"world seed {world_ref.seed_sha256[:12]}… != identity seed {identity.seed_sha256[:12]}…")
    by_id: dict[str, TaskRecord] = {}
    for t in tasks:
        if t.task_id in by_id:
            raise ValueError(f"task {t.task_id} appears twice")
        stamped = t.suite.task_set_sha256
        if stamped is not None and stamped != identity.task_set_sha256:
            raise ValueError(f"task {t.task_id} belongs to task set {stamped[:12]}…, "
                             f"not {identity.task_set_sha256[:12]}…")
        by_id[t.task_id] = t
    return by_id


def _stamp(identity: RunIdentity, agent: str, seed: int) -> Stamp:
    fields = identity.fields(agent)
    return Stamp(fields=fields, run_seed=seed, identity_sha256=identity_sha256(fields, seed))


def _check_resumable(records: list[TrialRecord], identity: RunIdentity, stamps: dict[str, Stamp], seed: int,
                     path: Path) -> None:
    """Every stored trial must share this run's identity; agents of this run must also share its config."""
    for lineno, r in enumerate(records, start=1):
        want = {**identity.fields(r.agent), "run_seed": seed}
        if r.agent not in stamps:
            want.pop("agent_config")  # another agent's config is not this run's to judge
        got = r.model_dump(mode="json", include=set(want))
        diff = sorted(k for k in want if got.get(k) != want[k])
        if diff:
            raise HarnessError(f"{path}:{lineno}: trial {r.key} was recorded under a different identity "
                               f"({', '.join(diff)} differ); write this run to a new out_dir")


def _chunks(jobs: list[Job]) -> list[Chunk]:
    """All trials of one task x agent in one submission, in job order."""
    grouped: dict[tuple[str, str], list[int]] = {}
    for j in jobs:
        grouped.setdefault((j.agent, j.task_id), []).append(j.trial)
    return [Chunk(agent, task_id, tuple(trials)) for (agent, task_id), trials in grouped.items()]
