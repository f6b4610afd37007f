"""Import and audit τ²-bench retail: source tables, rights, versioned policy, world, tasks, suite spec.

`import_tau2_retail(src, out)` reads tau2's data files (db.json, tasks.json,
split_tasks.json, policy.md, LICENSE), checks them against the pinned
snapshot, and writes everything a suite needs. Every gold trajectory is
replayed in the built world: the rows it changes become the task's goal
state, the reference must pass that goal with our grader, and any gold action
that fails is reported (tau2 skips such actions silently in its logs).
"""
from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pyarrow as pa
from pydantic import BaseModel
from sqlalchemy import Boolean, Float, Integer

from evalsuite.core.records import Policy, Simulator, SuiteRef, TaskRecord
from evalsuite.domains.tau2_retail import DOMAIN, TAU2_HASH, build_world
from evalsuite.domains.tau2_retail.convert import from_nested, to_nested
from evalsuite.grading.grader import grade_trial
from evalsuite.importers.gold import GoldReplayError
from evalsuite.importers.source_files import pinned_files
from evalsuite.importers.suite_folder import (
    IMPORTED_USES,
    replay_reference,
    write_parquet,
    write_rights,
    write_suite,
    written_files,
)
from evalsuite.importers.tau2.policy import clause_ids, versioned_policy
from evalsuite.importers.tau2.tasks import task_record
from evalsuite.sourcing.policies import load_policy
from evalsuite.sourcing.rights import RightsManifest
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.taskfile import write_tasks
from evalsuite.worlds.world import World

SUITE = "tau2_retail"
SUITE_VERSION = "1.0.0"
LICENSE_REF = "MIT (Copyright (c) 2025 Sierra Research; LICENSE)"
PINNED_SHA256 = {  # README.md of the third-party folder
    "db.json": "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
    "tasks.json": "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
    "split_tasks.json": "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
    "policy.md": "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
    "LICENSE": "e67c5aa0074dfcaefd3c3a1aedb94cb539234aecd15d5a972574e3200e6252fe",
}
POLICY_EFFECTIVE_FROM = dt.date(2026, 8, 18)  # the upstream HEAD the snapshot was taken from
DEFAULT_SIMULATOR = Simulator(model="gpt-4.1-2025-04-14", version="tau2-bench user simulator @a2c02472",
                              temperature=0.0)


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
    files: list[str]


def import_tau2_retail(src: Path, out: Path, simulator: Simulator = DEFAULT_SIMULATOR,
                       pinned: dict[str, str] | None = PINNED_SHA256) -> ImportReport:
    """Write source/, rights.yaml, LICENSE, policy.md, world.sqlite, tasks.jsonl, suite.yaml, import_report.json."""
    src, out = Path(src), Path(out)
    sha = pinned_files(src, PINNED_SHA256, pinned, Tau2InputError, "tau2")
    out.mkdir(parents=True, exist_ok=True)
    db = json.loads((src / "db.json").read_text())
    rows = from_nested(db)
    write_parquet(DOMAIN, rows, out / "source", _arrow_type)
    write_rights(out, MANIFEST, RIGHTS_HEADER)
    shutil.copyfile(src / "LICENSE", out / "LICENSE")
    policy_md = (src / "policy.md").read_text()
    (out / "policy.md").write_text(versioned_policy(
        policy_md, doc="tau2_retail_policy", version=SUITE_VERSION, effective_from=POLICY_EFFECTIVE_FROM,
        params={"source": "sierra-research/tau2-bench data/tau2/domains/retail/policy.md",
                "source_commit": "a2c024725189473d2d7cea3a5cfdbcc67478e41f", "source_sha256": sha["policy.md"]}))
    policy = load_policy(out / "policy.md").as_policy()
    world = build_world(db, out / "world.sqlite")
    initial = TAU2_HASH.world_hash(world)
    if initial != TAU2_HASH.initial:
        raise ValueError(f"tau2 hash of the built world {initial} != tau2's initial hash {TAU2_HASH.initial}")
    tasks, report_bits = _tasks(src, world, policy, clause_ids(policy_md), simulator)
    write_tasks(out / "tasks.jsonl", tasks)
    write_suite(out, SUITE, DOMAIN.name, sorted(rows), Acceptance(reference_trials=8), simulator)
    report = ImportReport(out=str(out), source_sha256=sha, rows={t: len(r) for t, r in rows.items()},
                          initial_tau2_hash=initial, world_sha256=world.seed_sha256, tasks=len(tasks),
                          files=written_files(out), **report_bits)
    (out / "import_report.json").write_text(report.model_dump_json(indent=2))
    return report


def _tasks(src: Path, world: World, policy: Policy, clauses: dict[str, str],
           simulator: Simulator) -> tuple[list[TaskRecord], dict]:
    raw = json.loads((src / "tasks.json").read_text())
    split_of = _splits(json.loads((src / "split_tasks.json").read_text()), [str(t["id"]) for t in raw])
    hasher = TAU2_HASH.hasher(world)
    suite = SuiteRef(name=SUITE, version=SUITE_VERSION)
    tasks, errors, hashes = [], [], {}
    for task in raw:
        record, replay, end_hash = task_record(task, split_of[str(task["id"])], world, hasher, policy, clauses,
                                               suite, simulator, LICENSE_REF)
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
        noop_gold_tasks=[tid for tid, h in hashes.items() if h == TAU2_HASH.initial],
        gold_end_tau2_hash=hashes,
        shared_gold_end_states=_shared(hashes),
        tasks_with_upstream_issues=[str(t["id"]) for t in raw if t.get("issues")],
    )


def _shared(hashes: dict[str, str]) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for tid, h in hashes.items():
        groups.setdefault(h, []).append(tid)
    return [ids for h, ids in groups.items() if len(ids) > 1 and h != TAU2_HASH.initial]


def _splits(splits: dict[str, list[str]], ids: list[str]) -> dict[str, str]:
    """tau2's train/test lists -> our split per task id; `base` must be exactly their union."""
    train, test = set(splits["train"]), set(splits["test"])
    if train & test or set(splits.get("base", train | test)) != train | test or train | test != set(ids):
        raise ValueError("split_tasks.json: train and test must partition the task ids (base = their union)")
    return {i: "train" if i in train else "test" for i in ids}


_ARROW = {Integer: pa.int64(), Float: pa.float64(), Boolean: pa.bool_()}


def _arrow_type(column) -> pa.DataType:
    # JSON columns are text already; the int-or-float column is all null in the seed, so float64 loses nothing.
    return next((t for k, t in _ARROW.items() if isinstance(column.type, k)),
                pa.float64() if column.name == "exchange_price_difference" else pa.string())


# tau2's generated users: they look personal (the personal-data scan flags them), so the manifest names them.
SYNTHETIC = ["users.first_name", "users.last_name", "users.email", "users.address1", "users.address2",
             "orders.address1", "orders.address2"]
MANIFEST = RightsManifest(source=SUITE, license_ref=LICENSE_REF, licensor="Sierra Research",
                          permitted_uses=IMPORTED_USES, expires=None, personal_data=False,
                          deidentification_required=False, synthetic_columns=SYNTHETIC)
RIGHTS_HEADER = ("# tau2-bench retail data, MIT license: the full text is in LICENSE beside this file.\n"
                 "# No personal data: user names, emails and addresses in db.json are synthetic.\n")


def export_state(out_dir: Path, task_id: str, dest: Path) -> str:
    """Write the state after task `task_id`'s gold actions as db.json-shaped JSON; returns its tau2 hash."""
    rows = replay_reference(out_dir, DOMAIN, task_id, Tau2InputError).rows()
    Path(dest).write_text(json.dumps(to_nested(rows), indent=4))
    return TAU2_HASH.hash_rows(rows)
