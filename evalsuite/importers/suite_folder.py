"""The suite folder every importer writes, and reads back: the seed tables as Parquet, the rights manifest, the
suite spec (its quarantine allowance from the import's own acceptance audit), the list of files written, and a
task's reference replayed on the folder's world (export-state)."""
from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from pydantic import BaseModel
from sqlalchemy import Column

from evalsuite.audit.acceptance import TASK_GATES, TaskAudit, in_process_runner, run_acceptance
from evalsuite.core.records import Simulator, TaskRecord, TrialProtocol
from evalsuite.deid.rules import load_rules
from evalsuite.importers.source_files import require_files
from evalsuite.sourcing.rights import RightsManifest, load_manifest
from evalsuite.sourcing.spec import Acceptance, Derivation, Sources, SuiteSpec, TableSource, dump_spec, load_spec
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.domain import Domain
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

IMPORTED_USES = {"build_environments", "derive_tasks", "redistribute"}  # what a public benchmark's license allows
REPORT = "import_report.json"


def write_parquet(domain: Domain, rows: dict[str, list[dict[str, Any]]], dest: Path,
                  arrow_type: Callable[[Column], pa.DataType] | None = None) -> None:
    """One Parquet file per table of the domain, the primary key in the file metadata; column types from
    `arrow_type` when given, else inferred from the rows."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, table in domain.tables.items():
        meta = {"primary_key": json.dumps([c.name for c in table.primary_key.columns])}
        if arrow_type is None:
            arrow = pa.Table.from_pylist(rows[name]).replace_schema_metadata(meta)
        else:
            schema = pa.schema([pa.field(c.name, arrow_type(c)) for c in table.columns], metadata=meta)
            arrow = pa.Table.from_pylist(rows[name], schema=schema)
        pq.write_table(arrow, dest / f"{name}.parquet")


def write_rights(out: Path, manifest: RightsManifest, header: str) -> None:
    """rights.yaml under a comment header; refused unless it reads back as the manifest written."""
    (out / "rights.yaml").write_text(header + yaml.safe_dump(manifest.model_dump(mode="json"), sort_keys=False))
    if load_manifest(out / "rights.yaml") != manifest:
        raise ValueError(f"{out / 'rights.yaml'}: does not read back as written")


def write_suite(out: Path, name: str, domain: str, tables: Iterable[str], acceptance: Acceptance,
                simulator: Simulator | None = None, *, spec_file: str = "suite.yaml", tasks: str = "tasks.jsonl",
                policies: Iterable[str] = ("policy.md",), trial_protocol: TrialProtocol | None = None,
                deid: str | None = None, source: str | None = None, header: str = "") -> None:
    """A suite spec (`spec_file`) over the folder's source tables (`source`: their source's name, when a variant
    suite shares them), rights, policies and imported tasks, under `header` (comment lines); every path it names
    must exist (it is loaded back)."""
    spec = SuiteSpec(
        name=name, domain=domain,
        sources=Sources(name=source or name, tables={t: TableSource(path=f"source/{t}.parquet") for t in tables}),
        rights=["rights.yaml"], needed_uses=sorted(IMPORTED_USES), policies=list(policies), deid=deid,
        derivation=Derivation(tasks=tasks), acceptance=acceptance, simulator=simulator, base_dir=out,
        **({"trial_protocol": trial_protocol} if trial_protocol else {}))
    dump_spec(spec, out / spec_file, header)
    load_spec(out / spec_file)


def write_keep_rules(path: Path, kept: Iterable[str], header: str) -> None:
    """A de-identification rules file keeping each `table.column` of `kept` as published (a reviewed decision, for a
    benchmark's invented people its tasks name); read back, so a wrong rule fails here."""
    tables: dict[str, dict] = {}
    for ref in kept:
        table, column = ref.split(".")
        tables.setdefault(table, {"columns": {}})["columns"][column] = {"rule": "keep"}
    path.write_text(header + yaml.safe_dump({"tables": tables}, sort_keys=False))
    load_rules(path)


class ImportAudit(BaseModel):
    """The import's own acceptance audit of the tasks it wrote (the checks a build runs, the reference once: an
    imported reference replays its gold, the same every time; a build's repeated trials check that), and the
    quarantine allowance the written spec needs to release what it accepts."""

    tasks: int
    quarantined: dict[str, list[str]]  # task id -> reasons, as the build's audit gives them
    gates: dict[str, int]  # acceptance gate -> tasks failing it (a task may fail several)
    max_quarantined_fraction: float  # the quarantined fraction, rounded up to a whole percent

    @classmethod
    def of(cls, audits: Sequence[TaskAudit]) -> ImportAudit:
        """The findings over these tasks' audits (audit_import's, or some of them: a suite of part of the tasks)."""
        quarantined = {a.task_id: a.reasons for a in audits if a.quarantined}
        return cls(tasks=len(audits), quarantined=quarantined,
                   gates={g: sum(not test(a) for a in audits) for g, test in TASK_GATES.items()},
                   max_quarantined_fraction=math.ceil(100 * len(quarantined) / max(len(audits), 1)) / 100)

    def acceptance(self, settings: Acceptance) -> Acceptance:
        return settings.model_copy(update={"max_quarantined_fraction": self.max_quarantined_fraction})

    def comment(self, settings: Acceptance) -> str:
        """YAML comment lines: why the spec allows what it allows."""
        q = len(self.quarantined)
        gates = ", ".join(f"{g} {n}" for g, n in self.gates.items() if n) or "none"
        text = (f"max_quarantined_fraction {self.max_quarantined_fraction} is what the import's own acceptance audit "
                f"needs: the reference, the no-op and the every-write adversary on every task quarantine {q} of "
                f"{self.tasks} (tasks failing, by gate: {gates}; ids and reasons in {REPORT}). The other "
                f"{self.tasks - q} release. A build runs the reference {settings.reference_trials} times; if it "
                "quarantines more (a flaky reference), it blocks.")
        return "".join(f"# {line}\n" for line in textwrap.wrap(text, 115))


def audit_import(world: World, tasks: list[TaskRecord]) -> list[TaskAudit]:
    """Acceptance of the imported tasks in this process (one reference trial each): what a build of a spec over
    them quarantines."""
    return run_acceptance(tasks, Acceptance(reference_trials=1), in_process_runner(world)).tasks


def written_files(out: Path) -> list[str]:
    """Every file of the folder, relative, the import report included."""
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != REPORT) + [REPORT]


def replay_reference(out_dir: Path, domain: Domain, task_id: str, error: type[Exception]) -> TrialWorld:
    """The folder's world after task `task_id`'s reference calls (failing calls change nothing, as in the peers)."""
    out_dir = Path(out_dir)
    require_files(out_dir, ("world.sqlite", "tasks.jsonl"), error)
    task = next((t for t in read_tasks(out_dir / "tasks.jsonl") if t.task_id == str(task_id)), None)
    if task is None:
        raise error(f"{out_dir / 'tasks.jsonl'}: no task {task_id!r}")
    trial = World(domain, out_dir / "world.sqlite").reset(task.role)
    for call in task.solution_calls():
        trial.call(call.tool, call.arguments)
    return trial
