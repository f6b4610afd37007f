"""Acceptance of every derived task (reference N times, no-op, every-write adversary, reset check);
gates reference_solvable, reference_stable, not_trivially_passable, resettable and adjudicated."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from evalsuite.core.hashing import file_sha256
from evalsuite.core.io import atomic_write, write_json
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.present import Markdown, md_table
from evalsuite.pipeline.stage import Gate, GateError, Stage, StageOutput, Verdict, require
from evalsuite.pipeline.stages import derived
from evalsuite.scoring.acceptance import GATES, AcceptanceReport, Runner, audit_markdown, run_acceptance
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.core.identity import RunIdentity
from evalsuite.trials.harness import acceptance_runner
from evalsuite.worlds.ref import WorldRef
from evalsuite.worlds.registry import get_domain
from evalsuite.worlds.world import World


class AuditRecord(AcceptanceReport):
    """audit.json: the acceptance report and the task set and world it was run on."""

    task_set_sha256: str
    seed_sha256: str


def parallel_runner(spec: SuiteSpec, world: World, task_set: str, workers: int | None = None) -> Runner:
    """Acceptance trials spread over worker processes, stamped with a provisional identity."""
    domain = world.domain
    identity = RunIdentity(suite=spec.name, suite_version="acceptance", task_set_sha256=task_set,
                           seed_sha256=world.seed_sha256, environment_image=domain.image,
                           tool_schemas_sha256=domain.tool_schemas_sha256(), simulator=spec.simulator)
    return acceptance_runner(WorldRef.from_world(world), identity, workers)


def accept(spec: SuiteSpec, paths: Paths, runner: Runner | None = None) -> AcceptanceReport:
    """Acceptance of every derived task; trials run on all cores unless a runner is given."""
    require(derived.STAGE, spec, paths)
    tasks, task_set = derived.tasks_on_disk(paths), derived.task_set_on_disk(paths)
    world = World(get_domain(spec.domain), paths.world)
    report = run_acceptance(tasks, spec.acceptance, runner or parallel_runner(spec, world, task_set))
    record = AuditRecord(task_set_sha256=task_set, seed_sha256=world.seed_sha256, **report.model_dump())
    atomic_write(paths.acceptance / "audit.md", audit_markdown(report, spec.name))
    write_json(paths.audit, record.model_dump(mode="json"))
    return report


def quarantine_table(quarantined: list[tuple[str, list[str]]], limit: int = 100) -> Markdown:
    """Quarantined tasks and their reasons, the first `limit` of them."""
    if not quarantined:
        return Markdown("No task quarantined.")
    table = md_table(["task", "reasons"], [[task, "; ".join(reasons)] for task, reasons in quarantined[:limit]])
    more = len(quarantined) - limit
    return Markdown(table + (f"\n\n…and {more} more (see audit.md)" if more > 0 else ""))


def run(spec: SuiteSpec, paths: Paths, runner: Runner | None = None) -> StageOutput:
    report = accept(spec, paths, runner)
    s = report.summary
    return StageOutput(file_sha256(paths.audit), {
        "tasks": s["tasks"], "accepted": s["accepted"], "quarantined": s["quarantined"],
        "releasable": s["releasable"], "summary": dict(s),
        "gates": md_table(["gate", "tasks failing"], [[g, len(report.gate(g))] for g in GATES]),
        "quarantined_tasks": quarantine_table([(t.task_id, t.reasons) for t in report.tasks if t.quarantined]), "audit": paths.acceptance / "audit.md"})


@lru_cache(maxsize=4)
def _audit_at(stamp: tuple[str, int, int]) -> AuditRecord:
    return AuditRecord.model_validate_json(Path(stamp[0]).read_text())


def audit_on_record(paths: Paths) -> AuditRecord:
    """The acceptance results, refused unless they are for exactly the task set on disk."""
    if not paths.audit.is_file():
        raise GateError("acceptance_results", "no acceptance results on record")
    audit = _audit_at(derived.stamp(paths.audit))
    current = derived.task_set_on_disk(paths)
    if audit.task_set_sha256 != current:
        raise GateError("acceptance_results",
                        f"acceptance results are for task set {audit.task_set_sha256[:12]}, not {current[:12]}")
    return audit


def _acceptance_gate(name: str):
    def judge(spec: SuiteSpec, paths: Paths) -> Verdict:
        audit = audit_on_record(paths)
        failing = [(t.task_id, "; ".join(t.reasons)) for t in audit.gate(name)]
        return derived.quarantine_verdict(name, spec, len(audit.tasks), failing,
                                          releasable=bool(audit.summary["releasable"]))

    return judge


def _gate(name: str, description: str, **kw) -> Gate:
    return Gate(name, "acceptance_results", _acceptance_gate(name), description=description, **kw)


STAGE = Stage(
    name="acceptance_results", deps=("derived_tasks",), module=__name__, kinds=frozenset({"json"}), run=run,
    config=lambda spec: spec.acceptance.model_dump(mode="json"),
    description="Reference, no-op and adversary trials per task; failing tasks quarantined.",
    gates=(_gate("reference_solvable", "The reference solution passes in a freshly reset world, and none of its calls fail."),
           _gate("reference_stable", "The reference solution passes on every one of the N acceptance trials."),
           _gate("not_trivially_passable", "The no-op agent and the every-write adversary fail."),
           _gate("resettable", "The world hash after reset equals the recorded seed hash before every trial."),
           _gate("adjudicated", "Goal states carry two reviewer sign-offs.",
                 applies=lambda spec: spec.acceptance.require_adjudication)),
)
