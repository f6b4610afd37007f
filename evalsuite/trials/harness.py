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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from evalsuite.core.identity import AgentConfig, RunIdentity, identity_sha256
from evalsuite.core.records import TaskRecord
from evalsuite.trials.agents.base import Agent
from evalsuite.trials.jobs import Job, Stamp, build_agent, load_factory, run_job
from evalsuite.trials.pool import Chunk, HarnessError, run_pool
from evalsuite.trials.tracelog import SUMMARY, TRACES, TraceWriter, TrialRecord, repair_traces, write_summary
from evalsuite.trials.trial import TrialResult
from evalsuite.worlds.ref import WorldRef


def run_trials(world_ref: WorldRef, tasks: list[TaskRecord], agents: Sequence[str | AgentConfig | Agent],
               trials: int | Mapping[str, int] | None, *,
               out_dir: Path | None = None, workers: int | None = None, progress: bool = False,
               identity: RunIdentity, seed: int = 0, agent_factory: str | None = None) -> list[TrialRecord]:
    """Run every (task, agent, trial) job and return their records in job order.

    trials=None runs each task's own trial_protocol.trials; a mapping gives a count per agent
    name (acceptance: the reference N times, the baselines once). workers defaults to
    os.cpu_count(); workers=1 runs in this process, the only mode that accepts
    agent objects (a custom agent cannot be sent to a spawned worker; use
    agent_factory="module:callable" for one a worker can import).

    Agents are named (AgentConfig.parse) or given as AgentConfig; the identity takes on their configs
    (RunIdentity.with_agents), every agent is built from its config and every record stamped with it.
    """
    workers = workers or os.cpu_count() or 1
    by_id = _index(tasks, identity, world_ref)
    factory = load_factory(agent_factory)
    objects = {a.name: a for a in agents if not isinstance(a, (str, AgentConfig))}
    if objects and workers != 1:
        raise ValueError(f"agent objects ({', '.join(objects)}) run only with workers=1; use agent_factory")
    names = [a if isinstance(a, str) else a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agent names repeat: {names}")
    identity = identity.with_agents(a if isinstance(a, (str, AgentConfig)) else a.name for a in agents)
    configs = {n: identity.agent_config(n) for n in names}
    built = {n: objects.get(n) or build_agent(factory, configs[n]) for n in names}  # fails fast on an unknown name
    stamps = {n: _stamp(identity, n, seed) for n in names}
    jobs = [Job(t.task_id, n, i) for n in names for t in tasks for i in range(_trial_count(trials, n, t))]

    earlier: list[TrialRecord] = []
    writer = None
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        earlier = repair_traces(out_dir / TRACES).records
        _check_resumable(earlier, identity, stamps, seed, out_dir / TRACES)
        writer = TraceWriter(out_dir / TRACES)
    have = {r.key: r for r in earlier}
    todo = [j for j in jobs if j not in have]
    new: dict[tuple, TrialRecord] = {}
    try:
        with _progress(progress, len(jobs), len(jobs) - len(todo)) as advance:
            def emit(record: TrialRecord) -> None:
                if writer:
                    writer.write(record)
                new[record.key] = record
                advance()

            if workers == 1:
                world = world_ref.open()
                for job in todo:
                    emit(run_job(world, by_id[job.task_id], built[job.agent], job.trial, stamps[job.agent]))
            else:
                run_pool(world_ref, tasks, _chunks(todo), configs, stamps, workers, agent_factory, emit)
    finally:
        if writer:
            writer.close()
        for name in names:  # a long-lived agent (mcp persistent or zygote) stops its process and tool server here
            if name not in objects and hasattr(built[name], "close"):
                built[name].close()
    missing = [j for j in todo if j not in new]
    if missing:  # every job must end as a record; a gap here is a harness bug, not a result
        raise HarnessError(f"{len(missing)} job(s) produced no record, first: {missing[0]}")
    if out_dir is not None:
        write_summary([*earlier, *new.values()], out_dir / SUMMARY)
    return [have.get(j) or new[j] for j in jobs]


def default_workers(trials: int) -> int | None:
    """1 (this process) unless a worker pool pays: it costs ~0.5 s to start, and on 2 cores 10,000
    millisecond-scale AP trials took 19.8 s in process and 21.9 s across the pool. None = all cores."""
    return None if trials >= 3000 and (os.cpu_count() or 1) >= 4 else 1


def acceptance_runner(world_ref: WorldRef, identity: RunIdentity, workers: int | None = None
                      ) -> Callable[[list[TaskRecord], Mapping[str, int]], list[TrialResult]]:
    """A runner for evalsuite.scoring.acceptance.run_acceptance: one pool for all its agents and trials."""

    def run(tasks: list[TaskRecord], plan: Mapping[str, int]) -> list[TrialResult]:
        total = len(tasks) * sum(plan.values())
        return list(run_trials(world_ref, tasks, list(plan), plan, workers=workers or default_workers(total),
                               identity=identity))

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
            raise ValueError(f"task {t.task_id} belongs to task set {stamped[:12]}…, not {identity.task_set_sha256[:12]}…")
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


@contextmanager
def _progress(enabled: bool, total: int, completed: int) -> Iterator[Callable[[], None]]:
    if not enabled:
        yield lambda: None
        return
    columns = (TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True)) as bar:  # stderr: stdout stays for results
        task = bar.add_task("trials", total=total, completed=completed)
        yield lambda: bar.advance(task)
