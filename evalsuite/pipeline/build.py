"""The suite build, stage by stage: what the Dagster assets wrap, usable without Dagster.

source → rights review → seed snapshot (quality-checked) → de-identified snapshot
(residual and join checks) → derived tasks and world → acceptance → release.
Each stage writes its own artifacts under the home folder and returns a small
result with a content hash; a gate that fails raises GateError naming itself.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pandas as pd
import yaml
from pydantic import BaseModel

from evalsuite.deid import deidentify as deid_mod
from evalsuite.sourcing.quality import QualityReport, TableExpectations, check_tables
from evalsuite.scoring.acceptance import GATES, AcceptanceReport, Runner, audit_markdown, run_acceptance
from evalsuite.trials.harness import RunIdentity, WorldRef, acceptance_runner
from evalsuite.tasks.derivation import DeriveContext
from evalsuite.worlds.registry import get_deriver, get_domain
from evalsuite.core.hashing import combine_sha256, file_sha256, json_sha256
from evalsuite.core.home import home_dir
from evalsuite.sourcing.policies import PolicyDoc, load_policy
from evalsuite.core.records import Deidentification, Environment, SuiteRef, TaskRecord
from evalsuite.releases.release import Quarantined, ReleaseManifest, release_version, task_set_sha256, write_release
from evalsuite.sourcing.rights import RightsDecision, load_manifest, review
from evalsuite.sourcing.snapshot import frame_rows, read_snapshot, read_sources, write_snapshot
from evalsuite.sourcing.spec import SuiteSpec, load_spec
from evalsuite.tasks.validation import domain_problems, read_task_objects
from evalsuite.worlds.world import World


class GateError(RuntimeError):
    """A gate blocked the build; `gate` names it, the message says why."""

    def __init__(self, gate: str, reason: str):
        super().__init__(f"gate {gate} blocked: {reason}")
        self.gate, self.reason = gate, reason


class Paths:
    """Where a suite's artifacts live under the home folder."""

    def __init__(self, spec: SuiteSpec, home: Path | None = None):
        self.home = Path(home or home_dir())
        self.root = self.home / "suites" / spec.name
        self.seed, self.deid = self.root / "seed", self.root / "deidentified"
        self.tasks, self.world = self.root / "tasks.jsonl", self.root / "world.sqlite"
        self.rights, self.derivation = self.root / "rights.json", self.root / "derivation.json"
        self.quality, self.deid_report = self.root / "quality.json", self.root / "deid.json"
        self.policies = self.root / "policies.json"
        self.acceptance = self.root / "acceptance"
        self.releases = self.home / "releases"
        self.runs = self.home / "runs" / spec.name


# ---------------------------------------------------------------- source and rights

def source_fingerprint(spec: SuiteSpec) -> str:
    """Hash of the raw inputs as delivered: file bytes, or the query text of SQL sources."""
    parts = {}
    for name, src in spec.sources.tables.items():
        parts[name] = file_sha256(spec.resolve(src.path)) if src.path else json_sha256([src.url, src.query])
    return combine_sha256(parts)


def deid_rules(spec: SuiteSpec) -> deid_mod.DeidRules | None:
    return deid_mod.load_rules(spec.resolve(spec.deid)) if spec.deid else None


def review_rights(spec: SuiteSpec, paths: Paths, today: dt.date | None = None) -> RightsDecision:
    manifests = {m.source: m for m in (load_manifest(spec.resolve(p)) for p in spec.rights)}
    rules = deid_rules(spec)
    decision = review({spec.sources.name: manifests.get(spec.sources.name)}, set(spec.needed_uses),
                      rules.ruled_columns() if rules else set(), today or dt.date.today())
    paths.root.mkdir(parents=True, exist_ok=True)
    paths.rights.write_text(decision.model_dump_json(indent=2))
    return decision


def require_rights(paths: Paths) -> RightsDecision:
    if not paths.rights.is_file():
        raise GateError("rights_cleared", "no rights review on record")
    decision = RightsDecision.model_validate_json(paths.rights.read_text())
    if not decision.cleared:
        raise GateError("rights_cleared", "; ".join(decision.reasons))
    return decision


# ---------------------------------------------------------------- snapshots

def expectations(spec: SuiteSpec) -> dict[str, TableExpectations]:
    if not spec.quality:
        return {}
    raw = yaml.safe_load(spec.resolve(spec.quality).read_text()) or {}
    return {t: TableExpectations.model_validate(e) for t, e in raw.items()}


class SnapshotResult(BaseModel):
    sha256: str
    rows: dict[str, int]
    quality: QualityReport | None = None


def build_seed(spec: SuiteSpec, paths: Paths) -> SnapshotResult:
    """Read the sources, check them with great-expectations, write the seed snapshot and quality.json."""
    require_rights(paths)
    tables = read_sources(spec)
    report = check_tables(tables, expectations(spec)) if spec.quality else None
    sha = write_snapshot(tables, paths.seed, {"quality_success": report.success if report else None})
    result = SnapshotResult(sha256=sha, rows={n: len(d) for n, d in tables.items()}, quality=report)
    _write_json(paths.quality, result.model_dump(mode="json"))
    return result


def require_quality(paths: Paths) -> SnapshotResult:
    """The seed snapshot on disk, refused unless its recorded quality check passed for exactly it."""
    seed = _record_for(paths.quality, SnapshotResult, paths.seed, "source_quality", "quality check")
    if seed.quality is not None and not seed.quality.success:
        raise GateError("source_quality", "; ".join(seed.quality.summary()[:3]))
    return seed


def _record_for(record: Path, model, snapshot: Path, gate: str, check: str):
    """A stage's recorded check, refused unless it exists and was made for exactly the snapshot on disk."""
    if not record.is_file():
        raise GateError(gate, f"no {check} on record for {snapshot.name}")
    result = model.model_validate_json(record.read_text())
    if result.sha256 != _snapshot_sha(snapshot):
        raise GateError(gate, f"{snapshot.name} changed after its {check}")
    return result


def _snapshot_sha(folder: Path) -> str | None:
    meta = folder / "snapshot.json"
    return json.loads(meta.read_text())["sha256"] if meta.is_file() else None


def _write_json(path: Path, body) -> None:
    """Replace path in one step, so a killed build never leaves half a record a later stage trusts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(body, indent=2))
    os.replace(tmp, path)


class DeidStage(BaseModel):
    sha256: str
    rows: dict[str, int]
    residual: deid_mod.ResidualReport | None
    joins: dict[str, dict[str, int]]
    provenance: dict | None
    seed_sha256: str | None = None  # the seed snapshot this was made from

    @property
    def joins_preserved(self) -> bool:
        return all(j["after"] == j["before"] for j in self.joins.values())


def _join_counts(tables: dict[str, pd.DataFrame], exps: dict[str, TableExpectations]) -> dict[str, int]:
    """For each foreign key, how many child rows find their parent."""
    out = {}
    for t, e in exps.items():
        for col, ref in e.foreign_keys.items():
            rt, rc = ref.split(".")
            if t in tables and rt in tables and col in tables[t]:
                child = tables[t][col].dropna()
                out[f"{t}.{col}->{ref}"] = int(child.isin(set(tables[rt][rc].dropna())).sum())
    return out


def deidentify_seed(spec: SuiteSpec, paths: Paths) -> DeidStage:
    """De-identify the quality-checked seed; deid.json records the residual scan and join counts."""
    seed_sha = require_quality(paths).sha256
    result = _deidentify(spec, paths)
    result.seed_sha256 = seed_sha
    _write_json(paths.deid_report, result.model_dump(mode="json"))
    return result


def require_deid(paths: Paths) -> DeidStage:
    """The de-identified snapshot on disk, refused unless its residual and join checks passed for exactly it."""
    de = _record_for(paths.deid_report, DeidStage, paths.deid, "no_residual_pii", "residual check")
    if de.residual is not None and not de.residual.passed:
        raise GateError("no_residual_pii", f"{de.residual.total} residual personal value(s): {de.residual.counts}")
    if not de.joins_preserved:
        raise GateError("joins_preserved", json.dumps({k: v for k, v in de.joins.items() if v["before"] != v["after"]}))
    return de


def _deidentify(spec: SuiteSpec, paths: Paths) -> DeidStage:
    seed = read_snapshot(paths.seed)
    rules = deid_rules(spec)
    if rules is None:
        sha = write_snapshot(seed, paths.deid, {"deidentification": None})
        return DeidStage(sha256=sha, rows={n: len(d) for n, d in seed.items()}, residual=None, joins={}, provenance=None)
    result = deid_mod.deidentify(seed, rules)
    residual = deid_mod.residual_check(seed, result.tables, rules)
    exps = expectations(spec)
    before, after = _join_counts(seed, exps), _join_counts(result.tables, exps)
    joins = {k: {"before": before[k], "after": after.get(k, 0)} for k in before}
    prov = result.provenance()
    sha = write_snapshot(result.tables, paths.deid, {"deidentification": prov, "residual_passed": residual.passed})
    return DeidStage(sha256=sha, rows={n: len(d) for n, d in result.tables.items()}, residual=residual, joins=joins, provenance=prov)


# ---------------------------------------------------------------- policies, tasks, world

def load_policy_docs(spec: SuiteSpec) -> list[PolicyDoc]:
    return [load_policy(spec.resolve(p)) for p in spec.policies]


class DeriveStage(BaseModel):
    task_set_sha256: str
    seed_sha256: str
    tasks: int
    skipped: dict[str, int]
    problems: list[str]
    deid_sha256: str | None = None  # the de-identified snapshot the world and tasks came from
    rights_manifest_sha256: dict[str, str] = {}  # the rights decision they were cleared under


def derive(spec: SuiteSpec, paths: Paths) -> DeriveStage:
    """Build the world from the de-identified snapshot and derive (or import) its tasks."""
    decision = require_rights(paths)
    deid_sha = require_deid(paths).sha256
    domain = get_domain(spec.domain)
    snap = read_snapshot(paths.deid)
    rows = {n: frame_rows(df) for n, df in snap.items()}
    world = World.build(domain, {n: r for n, r in rows.items() if n in domain.tables}, paths.world)
    env = Environment(image=domain.image, seed_snapshot=str(paths.deid.relative_to(paths.home)), seed_sha256=world.seed_sha256)
    meta = json.loads((paths.deid / "snapshot.json").read_text())
    prov = meta.get("deidentification")
    ctx = DeriveContext(suite=SuiteRef(name=spec.name, version="unreleased"), environment=env, seed=spec.derivation.seed,
                        splits=spec.derivation.splits, protocol=spec.trial_protocol,
                        license_ref=",".join(f"{k}:{v[:12]}" for k, v in decision.manifest_sha256.items()),
                        deidentification=Deidentification(method=prov["method"], rule_set_sha256=prov["rule_set_sha256"],
                                                          date=prov["date"]) if prov else None)
    if spec.derivation.tasks:
        tasks = _imported(spec, ctx)
        skipped: dict[str, int] = {}
    else:
        der = get_deriver(spec.domain)(rows, load_policy_docs(spec), ctx)
        tasks, skipped = der.tasks, der.skipped
    problems = [f"{t.task_id}:{f}: {m}" for t in tasks for f, m in domain_problems(t, domain)]
    paths.tasks.write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    result = DeriveStage(task_set_sha256=task_set_sha256(tasks), seed_sha256=world.seed_sha256, tasks=len(tasks),
                         skipped=skipped, problems=problems, deid_sha256=deid_sha,
                         rights_manifest_sha256=decision.manifest_sha256)
    _write_json(paths.derivation, result.model_dump(mode="json"))
    return result


def require_derivation(paths: Paths, decision: RightsDecision, tasks: list[TaskRecord]) -> DeriveStage:
    """The derivation on record, refused unless it is valid, of exactly these tasks and under this rights decision."""
    if not paths.derivation.is_file():
        raise GateError("task_schema_valid", "no derivation on record")
    der = DeriveStage.model_validate_json(paths.derivation.read_text())
    if der.problems:
        raise GateError("task_schema_valid", "; ".join(der.problems[:3]))
    if der.task_set_sha256 != task_set_sha256(tasks):
        raise GateError("task_schema_valid", "tasks.jsonl changed after derivation")
    if der.rights_manifest_sha256 != decision.manifest_sha256:
        raise GateError("rights_cleared", "the tasks were derived under another rights decision")
    return der


def _imported(spec: SuiteSpec, ctx: DeriveContext) -> list[TaskRecord]:
    """Prebuilt task records (an imported benchmark), stamped with this build's world and suite."""
    out = []
    for _, obj in read_task_objects(spec.resolve(spec.derivation.tasks)):
        t = TaskRecord.model_validate(obj)
        out.append(t.model_copy(update={"suite": ctx.suite, "environment": ctx.environment}))
    return out


def load_tasks(paths: Paths) -> list[TaskRecord]:
    return [TaskRecord.model_validate_json(line) for line in paths.tasks.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------- acceptance and release

def parallel_runner(spec: SuiteSpec, world: World, tasks: list[TaskRecord], workers: int | None = None) -> Runner:
    """Acceptance trials spread over worker processes, stamped with a provisional identity."""
    domain = world.domain
    identity = RunIdentity(suite=spec.name, suite_version="acceptance", task_set_sha256=task_set_sha256(tasks),
                           seed_sha256=world.seed_sha256, environment_image=domain.image,
                           tool_schemas_sha256=domain.tool_schemas_sha256(), simulator=spec.simulator)
    return acceptance_runner(WorldRef.from_world(world), identity, workers)


def accept(spec: SuiteSpec, paths: Paths, runner: Runner | None = None) -> AcceptanceReport:
    """Acceptance of every derived task; trials run on all cores unless a runner is given."""
    tasks = load_tasks(paths)
    world = World(get_domain(spec.domain), paths.world)
    report = run_acceptance(tasks, spec.acceptance, runner or parallel_runner(spec, world, tasks))
    paths.acceptance.mkdir(parents=True, exist_ok=True)
    body = {"task_set_sha256": task_set_sha256(tasks), "seed_sha256": world.seed_sha256, **report.model_dump(mode="json")}
    (paths.acceptance / "audit.json").write_text(json.dumps(body, indent=2))
    (paths.acceptance / "audit.md").write_text(audit_markdown(report, spec.name))
    return report


def release(spec: SuiteSpec, paths: Paths) -> Path:
    """Release the accepted tasks, refusing unless every gate passed for this exact task set and rights decision."""
    decision = require_rights(paths)
    require_deid(paths)
    if not paths.tasks.is_file():
        raise GateError("task_schema_valid", "no derived tasks on record")
    tasks = load_tasks(paths)
    tsha = task_set_sha256(tasks)
    require_derivation(paths, decision, tasks)
    audit_file = paths.acceptance / "audit.json"
    if not audit_file.is_file():
        raise GateError("acceptance", "no acceptance results on record")
    audit = json.loads(audit_file.read_text())
    if audit["task_set_sha256"] != tsha:
        raise GateError("acceptance", f"acceptance results are for task set {audit['task_set_sha256'][:12]}, not {tsha[:12]}")
    report = AcceptanceReport.model_validate({"tasks": audit["tasks"], "summary": audit["summary"]})
    if not report.summary["releasable"]:
        raise GateError(*blocking_gate(report))
    return _write(spec, paths, decision, report, [t for t in tasks if t.task_id in set(report.accepted_ids)], tsha)


def blocking_gate(report: AcceptanceReport) -> tuple[str, str]:
    """The first acceptance gate with failing tasks, and why the quarantine it causes blocks the release."""
    s = report.summary
    why = (f"{s['quarantined']} of {s['tasks']} tasks quarantined, "
           f"more than the allowed {s['max_quarantined_fraction']:.0%}")
    for name in GATES:
        failing = report.gate(name)
        if failing:
            first = failing[0]
            return name, f"{len(failing)} task(s) fail, first {first.task_id}: {'; '.join(first.reasons[:2])}; {why}"
    return "acceptance", why


def _write(spec, paths, decision, report, accepted, tsha) -> Path:
    domain = get_domain(spec.domain)
    world = World(domain, paths.world)
    identity = {"task_set": task_set_sha256(accepted), "seed": world.seed_sha256, "image": domain.image,
                "tools": domain.tool_schemas_sha256(), "rights": decision.manifest_sha256,
                "policies": sorted({f"{t.policy.doc}@{t.policy.version}" for t in accepted}),
                "simulator": spec.simulator.model_dump(mode="json") if spec.simulator else None,
                "source_acceptance": tsha}
    manifest = ReleaseManifest(
        suite=spec.name, version=release_version(spec.version_prefix, identity), domain=spec.domain,
        task_set_sha256=identity["task_set"], seed_sha256=world.seed_sha256, environment_image=domain.image,
        tool_schemas_sha256=identity["tools"], policy_versions=identity["policies"],
        rights_decision={"status": decision.status, "manifest_sha256": decision.manifest_sha256,
                         "reviewed_on": decision.reviewed_on.isoformat()},
        acceptance={k: v for k, v in report.summary.items()},
        quarantined=[Quarantined(task_id=t.task_id, reasons=t.reasons) for t in report.tasks if t.quarantined],
        simulator=spec.simulator, n_tasks=len(accepted))
    return write_release(paths.releases, manifest, accepted, paths.world,
                         extra={"audit.md": (paths.acceptance / "audit.md").read_text()})


def build_release(spec_path: str | Path, home: Path | None = None, runner: Runner | None = None) -> Path:
    """Every stage in order, stopping at the first gate that blocks; returns the release folder."""
    spec, paths = prepare(spec_path, home)
    accept(spec, paths, runner)
    return release(spec, paths)


def prepare(spec_path: str | Path, home: Path | None = None) -> tuple[SuiteSpec, Paths]:
    """Every stage up to derived tasks and their world, stopping at the first gate that blocks."""
    spec = load_spec(spec_path)
    paths = Paths(spec, home)
    decision = review_rights(spec, paths)
    if not decision.cleared:
        raise GateError("rights_cleared", "; ".join(decision.reasons))
    seed = build_seed(spec, paths)
    if seed.quality and not seed.quality.success:
        raise GateError("source_quality", "; ".join(seed.quality.summary()[:3]))
    de = deidentify_seed(spec, paths)
    if de.residual is not None and not de.residual.passed:
        raise GateError("no_residual_pii", f"{de.residual.total} residual personal value(s): {de.residual.counts}")
    if not de.joins_preserved:
        raise GateError("joins_preserved", json.dumps({k: v for k, v in de.joins.items() if v["before"] != v["after"]}))
    der = derive(spec, paths)
    if der.problems:
        raise GateError("task_schema_valid", "; ".join(der.problems[:3]))
    return spec, paths


def audit_suite(spec_path: str | Path, out: Path, home: Path | None = None, runner: Runner | None = None) -> AcceptanceReport:
    """Run the acceptance checks on any suite and write out/audit.json and out/audit.md."""
    spec, paths = prepare(spec_path, home)
    report = accept(spec, paths, runner)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("audit.json", "audit.md"):
        (out / name).write_text((paths.acceptance / name).read_text())
    return report
