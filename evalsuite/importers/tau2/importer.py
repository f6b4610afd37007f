"""Import and audit a τ²-bench domain (retail, airline): source tables, rights, versioned policy, world, tasks, suite.

`import_tau2(source, src, out)` reads tau2's data files (db.json, tasks.json,
split_tasks.json, policy.md, LICENSE), checks them against the pinned
snapshot, and writes everything a suite needs. Every gold trajectory is
replayed in the built world: the rows it changes become the task's goal
state, the reference must pass that goal with our grader, and any gold action
that fails is reported (tau2 skips such actions silently in its logs). What
differs between domains is the `Tau2Source` (evalsuite.importers.tau2.sources).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from pydantic import BaseModel

from evalsuite.core.records import Policy, Simulator, SuiteRef, TaskRecord
from evalsuite.grading.grader import grade_trial
from evalsuite.importers.gold import GoldReplayError
from evalsuite.importers.source_files import pinned_files
from evalsuite.importers.suite_folder import (
    ImportAudit,
    audit_import,
    replay_reference,
    write_parquet,
    write_rights,
    write_suite,
    written_files,
)
from evalsuite.importers.tau2.policy import clause_ids, versioned_policy
from evalsuite.importers.tau2.sources import LICENSE_REF, SOURCE_COMMIT, Tau2Source
from evalsuite.importers.tau2.tasks import task_record
from evalsuite.sourcing.policies import load_policy
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.taskfile import write_tasks
from evalsuite.worlds.world import World


class Tau2InputError(ValueError):
    """A tau2 folder (or an imported one) that cannot be used; the message is one line naming the file."""


class ImportReport(BaseModel):
    out: str
    source_sha256: dict[str, str]
    rows: dict[str, int]
    initial_tau2_hash: str
    world_sha256: str
    tasks: int
    splits: dict[str, int]
    categories: dict[str, int]
    gold_replay_errors: list[GoldReplayError]
    empty_gold_tasks: list[str]
    noop_gold_tasks: list[str]  # gold end state == seed (tau2 hash unchanged), empty gold included
    gold_end_tau2_hash: dict[str, str]
    shared_gold_end_states: list[list[str]]  # write tasks whose gold ends in the very same DB state
    tasks_with_upstream_issues: list[str]
    acceptance: ImportAudit  # what suite.yaml's quarantine allowance comes from
    files: list[str]


def import_tau2(source: Tau2Source, src: Path, out: Path, simulator: Simulator | None = None) -> ImportReport:
    """Write source/, rights.yaml, LICENSE, policy.md, world.sqlite, tasks.jsonl, suite.yaml, import_report.json."""
    src, out, simulator = Path(src), Path(out), simulator or source.simulator
    sha = pinned_files(src, source.pinned_sha256, source.pinned_sha256, Tau2InputError, "tau2")
    out.mkdir(parents=True, exist_ok=True)
    db = json.loads((src / "db.json").read_text())
    rows = source.from_nested(db)
    write_parquet(source.domain, rows, out / "source", source.arrow_type)
    write_rights(out, source.manifest, source.rights_header)
    shutil.copyfile(src / "LICENSE", out / "LICENSE")
    policy_md = (src / "policy.md").read_text()
    params = {"source": f"sierra-research/tau2-bench data/tau2/domains/{source.upstream}/policy.md",
              "source_commit": SOURCE_COMMIT, "source_sha256": sha["policy.md"]}
    if source.policy_note:
        params["effective_from_note"] = source.policy_note
    (out / "policy.md").write_text(versioned_policy(policy_md, doc=f"{source.suite}_policy", version=source.version,
                                                    effective_from=source.policy_effective_from, params=params))
    policy = load_policy(out / "policy.md").as_policy()
    world = World.build(source.domain, rows, out / "world.sqlite")
    initial = source.tau2_hash.world_hash(world)
    if initial != source.tau2_hash.initial:
        raise ValueError(f"tau2 hash of the built world {initial} != tau2's initial hash {source.tau2_hash.initial}")
    tasks, report_bits = _tasks(source, src, world, policy, clause_ids(policy_md), simulator)
    write_tasks(out / "tasks.jsonl", tasks)
    audit, settings = ImportAudit.of(audit_import(world, tasks)), Acceptance(reference_trials=8)
    write_suite(out, source.suite, source.domain.name, sorted(rows), audit.acceptance(settings), simulator,
                header=audit.comment(settings))
    report = ImportReport(out=str(out), source_sha256=sha, rows={t: len(r) for t, r in rows.items()},
                          initial_tau2_hash=initial, world_sha256=world.seed_sha256, tasks=len(tasks),
                          acceptance=audit, files=written_files(out), **report_bits)
    (out / "import_report.json").write_text(report.model_dump_json(indent=2))
    return report


def _tasks(source: Tau2Source, src: Path, world: World, policy: Policy, clauses: dict[str, str],
           simulator: Simulator) -> tuple[list[TaskRecord], dict]:
    raw = json.loads((src / "tasks.json").read_text())
    split_of = _splits(json.loads((src / "split_tasks.json").read_text()), [str(t["id"]) for t in raw])
    hasher = source.tau2_hash.hasher(world)
    suite = SuiteRef(name=source.suite, version=source.version)
    tasks, errors, hashes = [], [], {}
    for task in raw:
        record, replay, end_hash = task_record(source, task, split_of[str(task["id"])], world, hasher, policy,
                                               clauses, suite, simulator, LICENSE_REF)
        verdict = grade_trial(replay.trial, " ".join(o.value for o in record.goal_state.required_outputs),
                                     record.goal_state, record.role, record.forbidden)
        if not verdict.passed:  # a goal its own reference fails is a derivation bug, never a task to ship
            raise ValueError(f"task {record.task_id}: the gold replay fails its derived goal: "
                             f"{[c.name + ': ' + c.detail for c in verdict.failures()]}")
        tasks.append(record)
        errors.extend(replay.errors)
        hashes[record.task_id] = end_hash
    count = lambda key: {k: sum(1 for t in tasks if key(t) == k) for k in sorted({key(t) for t in tasks})}  # noqa: E731
    return tasks, dict(
        splits=count(lambda t: t.split), categories=count(lambda t: t.category), gold_replay_errors=errors,
        empty_gold_tasks=[t.task_id for t in tasks if not t.solution_calls()],
        noop_gold_tasks=[tid for tid, h in hashes.items() if h == source.tau2_hash.initial],
        gold_end_tau2_hash=hashes,
        shared_gold_end_states=_shared(hashes, source.tau2_hash.initial),
        tasks_with_upstream_issues=[str(t["id"]) for t in raw if t.get("issues")],
    )


def _shared(hashes: dict[str, str], initial: str) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for tid, h in hashes.items():
        groups.setdefault(h, []).append(tid)
    return [ids for h, ids in groups.items() if len(ids) > 1 and h != initial]


def _splits(splits: dict[str, list[str]], ids: list[str]) -> dict[str, str]:
    """tau2's train/test lists -> our split per task id; `base` must be exactly their union."""
    train, test = set(splits["train"]), set(splits["test"])
    if train & test or set(splits.get("base", train | test)) != train | test or train | test != set(ids):
        raise ValueError("split_tasks.json: train and test must partition the task ids (base = their union)")
    return {i: "train" if i in train else "test" for i in ids}


def export_state(source: Tau2Source, out_dir: Path, task_id: str, dest: Path) -> str:
    """Write the state after task `task_id`'s gold actions as db.json-shaped JSON; returns its tau2 hash."""
    rows = replay_reference(out_dir, source.domain, task_id, Tau2InputError).rows()
    Path(dest).write_text(json.dumps(source.to_nested(rows), indent=4))
    return source.tau2_hash.hash_rows(rows)
