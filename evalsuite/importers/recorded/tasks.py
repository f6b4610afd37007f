"""Which release task each recorded task is: the same id (τ²-bench results, plain messages), or for τ-bench logs,
whose task indices are not τ²'s, the task of the same user whose scenario and gold writes match best.

τ-bench's README says its 50 airline scenarios are τ²'s in another order, matched by user id and instruction. A user
can have several tasks, so candidates (the release's tasks whose scenario names the user) are ranked by how well
the gold write actions agree, then by the words instruction and scenario share; recorded tasks are assigned best
pair first, each release task to one recorded task at most.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence

from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.domains.registry import domain_of
from evalsuite.importers.recorded.formats import RecordedTrial, Recording


def match_tasks(recording: Recording, tasks: Sequence[TaskRecord]) -> tuple[dict[str, str], dict[str, str]]:
    """(recorded task -> release task, recorded task -> why it has none)."""
    firsts = {t.task_ref: t for t in recording.trials}  # one trial per recorded task carries what matching needs
    ids = {t.task_id for t in tasks}
    if recording.format != "tau_bench_trajectories":
        return ({ref: ref for ref in firsts if ref in ids},
                {ref: f"no task {ref} in the release" for ref in firsts if ref not in ids})
    pairs = sorted(((_score(rec, t), ref, t.task_id) for ref, rec in firsts.items() for t in _candidates(rec, tasks)),
                   reverse=True)
    found: dict[str, str] = {}
    for _, ref, task_id in pairs:
        if ref not in found and task_id not in found.values():
            found[ref] = task_id
    missing = {ref: f"no task of the release matches it (none left naming user {rec.user_id} or with its gold "
                    "writes: matched to other recorded tasks, or quarantined)" for ref, rec in firsts.items()
               if ref not in found}
    return found, missing


def _candidates(rec: RecordedTrial, tasks: Sequence[TaskRecord]) -> list[TaskRecord]:
    """The tasks whose scenario names the recorded user; where none does (a scenario that names the user by name
    and zip), the tasks whose gold writes are the recorded task's."""
    named = [t for t in tasks if rec.user_id and _names(rec.user_id, _scenario(t))]
    theirs = gold_writes(rec.gold_writes or [], tasks[0].domain) if tasks else []
    return named or [t for t in tasks if theirs and gold_writes(t.reference_solution, t.domain) == theirs]


def gold_writes(calls: Sequence[ToolCall], domain: str) -> list[tuple[str, str]]:
    """The write calls of a gold action list, comparable: (tool, arguments as canonical JSON)."""
    tools = domain_of(domain).tools
    return [(c.tool, json.dumps(c.arguments, sort_keys=True)) for c in calls
            if c.tool in tools and tools[c.tool].kind == "write"]


def _score(rec: RecordedTrial, task: TaskRecord) -> tuple[int, int, float]:
    """(gold writes identical, same write tools in order, share of words in common)."""
    theirs = gold_writes(rec.gold_writes or [], task.domain)
    ours = gold_writes(task.reference_solution, task.domain)
    words = [set(re.findall(r"\w+", s.lower())) for s in (rec.instruction or "", _scenario(task))]
    overlap = len(words[0] & words[1]) / max(len(words[0] | words[1]), 1)
    return int(theirs == ours), int([t for t, _ in theirs] == [t for t, _ in ours]), overlap


def _scenario(task: TaskRecord) -> str:
    return task.user_scenario.instructions if task.user_scenario else ""


def _names(user_id: str, text: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(user_id)}(?![\w])", text) is not None
