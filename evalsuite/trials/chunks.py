"""Trials in chunks for a distributed executor: plan chunks of whole tasks, run one chunk, merge chunks' records.

A distributed step (a Celery task, a Kubernetes pod) costs far more to start
than an AP trial takes, so a step runs a chunk of about `size` trials, never
one. A chunk holds whole tasks (every trial of each), as the local pool's
submissions do, and runs through `run_trials` in its own process, so its
records are the ones the in-process path writes for the same seeds. The
records then go into the run folder's traces.jsonl, where the in-process path
finds them already recorded and only writes the summary and the scorecard.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from evalsuite.core.identity import AgentConfig, RunIdentity
from evalsuite.core.records import TaskRecord
from evalsuite.domains.ref import WorldRef
from evalsuite.trials.agents.endpoint import Endpoint, endpoint
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.tracelog import TRACES, TraceWriter, TrialRecord, folder_lock, repair_traces


class TrialChunk(BaseModel):
    """One step's work: every trial of these tasks for one agent (index orders chunks, names the step)."""

    index: int = Field(ge=0)
    agent: str
    task_ids: list[str] = Field(min_length=1)
    trials: int = Field(ge=1, description="trials in the chunk, over all its tasks")


def plan_chunks(tasks: list[TaskRecord], agent: str, size: int, out_dir: Path | None = None) -> list[TrialChunk]:
    """Chunks of about `size` trials (a task is never split), in task order.

    Tasks whose every trial out_dir's traces.jsonl already records are left out, so a run resumes
    where it stopped; a task recorded in part is run whole again and its new duplicates dropped on merge.
    """
    if size < 1:
        raise ValueError(f"chunk size must be at least 1 trial, got {size}")
    done = _recorded(out_dir)
    chunks: list[TrialChunk] = []
    ids: list[str] = []
    count = 0
    for t in tasks:
        n = t.trial_protocol.trials
        if all((t.task_id, agent, i) in done for i in range(n)):
            continue
        ids.append(t.task_id)
        count += n
        if count >= size:
            chunks.append(TrialChunk(index=len(chunks), agent=agent, task_ids=ids, trials=count))
            ids, count = [], 0
    if ids:
        chunks.append(TrialChunk(index=len(chunks), agent=agent, task_ids=ids, trials=count))
    return chunks


def run_chunk(world_ref: WorldRef, tasks: list[TaskRecord], config: AgentConfig, identity: RunIdentity,
              chunk: TrialChunk, seed: int = 0, model_endpoint: Endpoint | None = None,
              max_in_flight: int | None = None) -> list[TrialRecord]:
    """Run one chunk in this process: the same run_trials call, stamps and trial seeds as the in-process path
    (and, as there, openai agents are built under the given endpoint settings); a model or external agent's
    trials run max_in_flight at a time on the trial engine."""
    if config.name != chunk.agent:
        raise ValueError(f"chunk {chunk.index} is for agent {chunk.agent!r}, not {config.name!r}")
    by_id = {t.task_id: t for t in tasks}
    missing = [i for i in chunk.task_ids if i not in by_id]
    if missing:
        raise ValueError(f"chunk {chunk.index}: task {missing[0]} is not in the release")
    with endpoint(model_endpoint or Endpoint()):
        return run_trials(world_ref, [by_id[i] for i in chunk.task_ids], [config], None,
                          TrialSettings(identity, seed=seed, workers=1, max_in_flight=max_in_flight))


def merge_records(out_dir: Path, records: Iterable[TrialRecord]) -> int:
    """Append to out_dir/traces.jsonl the records it does not hold yet; returns how many were written.

    A recorded trial is never replaced (a rerun must not swap in a luckier outcome); a record must not
    appear twice among the new ones either, which would mean two chunks ran the same trial.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):  # what is recorded is read and appended to by one writer at a time
        have = _recorded(out_dir)
        new: dict[tuple, TrialRecord] = {}
        for r in records:
            if r.key in new:
                raise ValueError(f"trial {r.key} came back from two chunks")
            if r.key not in have:
                new[r.key] = r
        writer = TraceWriter(out_dir / TRACES)
        try:
            for r in new.values():
                writer.write(r)
        finally:
            writer.close()
    return len(new)


def _recorded(out_dir: Path | None) -> set[tuple]:
    if out_dir is None or not (Path(out_dir) / TRACES).is_file():
        return set()
    return {r.key for r in repair_traces(Path(out_dir) / TRACES).records}
