"""Derived tasks and their world: tasks from resolved cases (or imported), under the policy in effect and the
dossier's customizations the spec applies; gates task_schema_valid, assertions_cite_policy, masked_fields_justified
and (where the spec has a dossier) requirements_traced."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from evalsuite.audit.validation import domain_problems, validate_file
from evalsuite.core.hashing import file_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import Markdown, md_list, md_table
from evalsuite.core.records import Deidentification, Environment, SuiteRef, TaskRecord
from evalsuite.pipeline import preflight
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Gate, GateError, GateResult, Stage, StageOutput, blocked, passed, require
from evalsuite.pipeline.stages import (
    deidentified_snapshot,
    generated_tasks,
    policy_documents,
    process_dossier,
    rights_review,
)
from evalsuite.sourcing.snapshot import FrameRows, iter_frame_columns, read_snapshot
from evalsuite.sourcing.spec import SpecError, SuiteSpec
from evalsuite.tasks.derivation import DeriveContext
from evalsuite.tasks.taskfile import TaskFileError, read_tasks, task_set_sha256, write_tasks
from evalsuite.worlds.world import World


class DeriveRecord(BaseModel):
    """derivation.json: the task set and the inputs it was derived from."""

    task_set_sha256: str
    seed_sha256: str
    tasks: int
    skipped: dict[str, int]
    problems: list[str]
    deid_sha256: str | None = None  # the de-identified snapshot the world and tasks came from
    rights_manifest_sha256: dict[str, str] = {}  # the rights decision they were cleared under


def stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


@lru_cache(maxsize=4)
def _tasks_at(stamp: tuple[str, int, int]) -> tuple[TaskRecord, ...]:
    try:
        return tuple(read_tasks(stamp[0]))
    except TaskFileError as exc:  # the schema gate lists every problem; the others only refuse, in one line
        raise GateError("task_schema_valid", f"{exc} (see gate task_schema_valid)") from exc


@lru_cache(maxsize=4)
def _problems_at(stamp: tuple[str, int, int]) -> tuple[str, ...]:
    return tuple(str(p) for p in validate_file(stamp[0]))


@lru_cache(maxsize=4)
def _task_set_at(stamp: tuple[str, int, int]) -> str:
    return task_set_sha256(list(_tasks_at(stamp)))


def tasks_on_disk(paths: Paths) -> list[TaskRecord]:
    """The derived tasks, parsed once per version of tasks.jsonl (several gates and stages read them)."""
    if not paths.tasks.is_file():
        raise GateError("task_schema_valid", "no derived tasks on record")
    return list(_tasks_at(stamp(paths.tasks)))


def task_set_on_disk(paths: Paths) -> str:
    tasks_on_disk(paths)
    return _task_set_at(stamp(paths.tasks))


def _context(spec: SuiteSpec, paths: Paths, world: World, decision, prov: dict | None) -> DeriveContext:
    env = Environment(image=world.domain.image, seed_snapshot=str(paths.deid.relative_to(paths.home)),
                      seed_sha256=world.seed_sha256)
    deid = (Deidentification(method=prov["method"], rule_set_sha256=prov["rule_set_sha256"], date=prov["date"])
            if prov else None)
    return DeriveContext(suite=SuiteRef(name=spec.name, version="unreleased"), environment=env,
                         seed=spec.derivation.seed, splits=spec.derivation.splits, protocol=spec.trial_protocol,
                         deidentification=deid,
                         license_ref=",".join(f"{k}:{v[:12]}" for k, v in decision.manifest_sha256.items()))


def _imported(spec: SuiteSpec, ctx: DeriveContext) -> list[TaskRecord]:
    """Prebuilt task records (an imported benchmark), stamped with this build's world and suite."""
    return [t.model_copy(update={"suite": ctx.suite, "environment": ctx.environment})
            for t in read_tasks(spec.resolve(spec.derivation.tasks))]


def _tasks(spec: SuiteSpec, package, rows: FrameRows, generated, ctx: DeriveContext) -> tuple[list[TaskRecord], dict]:
    """The tasks (imported, sampled from composites or derived from resolved cases) and what was skipped."""
    if spec.derivation.tasks:
        return _imported(spec, ctx), {}
    if generated:
        tasks = generated_tasks.stamped(generated, ctx.suite, ctx.environment, ctx.license_ref)
        return tasks, {f"composite dropped: {k}": v for k, v in generated.dropped.items()}
    if package.derive is None:
        raise SpecError(f"{spec.spec_file}: derivation: domain {package.domain.name!r} derives no tasks from cases; "
                        "give derivation.tasks in the spec")
    der = package.derive(rows, policy_documents.policy_docs(spec), ctx)
    return der.tasks, der.skipped


def derive(spec: SuiteSpec, paths: Paths) -> DeriveRecord:
    """Build the world from the de-identified snapshot and derive (or import) its tasks."""
    require(rights_review.STAGE, spec, paths)
    require(deidentified_snapshot.STAGE, spec, paths)
    decision, deid_sha = rights_review.decision_on_record(paths), deidentified_snapshot.on_record(paths).sha256
    package = preflight.domain_for(spec)
    domain = package.domain
    frames = process_dossier.customized_frames(spec, read_snapshot(paths.deid))
    rows = FrameRows(frames)  # converted per table as the deriver reads it; the world streams every table
    generated = generated_tasks.ensure(spec, paths) if spec.generation else None  # composed tasks and their rows
    world = World.build(domain, {n: iter_frame_columns(df) for n, df in frames.items() if n in domain.tables}
                        | (generated.tables if generated else {}), paths.world)
    prov = json.loads((paths.deid / "snapshot.json").read_text()).get("deidentification")
    try:
        ctx = _context(spec, paths, world, decision, prov)
        tasks, skipped = _tasks(spec, package, rows, generated, ctx.model_copy(update={"world": world}))
        seed_sha256 = world.seed_sha256
    finally:
        world.close()  # a large world is three copies of its file in memory; acceptance opens its own
    tasks = process_dossier.customized(spec, tasks)
    problems = [f"{t.task_id}:{f}: {m}" for t in tasks for f, m in domain_problems(t, domain)]
    write_tasks(paths.tasks, tasks)
    record = DeriveRecord(task_set_sha256=task_set_sha256(tasks), seed_sha256=seed_sha256, tasks=len(tasks),
                          skipped=skipped, problems=problems, deid_sha256=deid_sha,
                          rights_manifest_sha256=decision.manifest_sha256)
    write_json(paths.derivation, record.model_dump(mode="json"))
    return record


def summary(spec: SuiteSpec, der: DeriveRecord) -> str:
    """One line: how many cases became tasks and why the others did not (imported tasks: how many)."""
    if spec.generation:
        return f"{der.tasks} tasks sampled from verified composites; {sum(der.skipped.values())} composites dropped"
    if spec.derivation.tasks:
        return f"{der.tasks} tasks imported from {Path(spec.derivation.tasks).name}"
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(der.skipped.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{der.tasks + sum(der.skipped.values())} cases → {der.tasks} tasks; skipped: {skipped or 'none'}"


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    der = derive(spec, paths)
    tasks = tasks_on_disk(paths)
    return StageOutput(der.task_set_sha256, {
        "summary": summary(spec, der), "tasks": der.tasks, "task_set_sha256": der.task_set_sha256,
        "world_seed_sha256": der.seed_sha256,
        "splits": md_table(["split", "tasks"], sorted(Counter(t.split for t in tasks).items())),
        "categories": md_table(["category", "tasks"], sorted(Counter(t.category for t in tasks).items())),
        "skipped_cases": (md_table(["reason", "cases"], sorted(der.skipped.items())) if der.skipped
                          else Markdown("none")),
        "problems": len(der.problems), "tasks_file": paths.tasks})


def task_schema_valid(spec: SuiteSpec, paths: Paths) -> GateResult:
    """Valid records, of exactly the derivation on record, from the snapshot and rights decision on record now."""
    if not paths.derivation.is_file():
        raise GateError("task_schema_valid", "no derivation on record")
    der = DeriveRecord.model_validate_json(paths.derivation.read_text())
    if not paths.tasks.is_file():
        raise GateError("task_schema_valid", "no derived tasks on record")
    problems = der.problems + list(_problems_at(stamp(paths.tasks)))
    if problems:
        return blocked("task_schema_valid", "; ".join(problems[:3]), problems=md_list(problems[:50]))
    tasks = tasks_on_disk(paths)
    if der.task_set_sha256 != task_set_on_disk(paths):
        raise GateError("task_schema_valid", "tasks.jsonl changed after derivation")
    if der.rights_manifest_sha256 != rights_review.decision_on_record(paths).manifest_sha256:
        raise GateError("task_schema_valid", "the tasks were derived under another rights decision")
    if der.deid_sha256 != deidentified_snapshot.on_record(paths).sha256:
        raise GateError("task_schema_valid", "the tasks were derived from another de-identified snapshot")
    if not tasks:
        raise GateError("task_schema_valid", "no task was derived")
    return passed("task_schema_valid", f"{der.tasks} task records valid against the schema and the domain")


def quarantine_verdict(gate: str, spec: SuiteSpec, total: int, failing: list[tuple[str, str]],
                       releasable: bool | None = None, quarantined: int | None = None) -> GateResult:
    """A task-level gate: failing tasks are quarantined; it blocks only when the quarantine exceeds what the spec
    allows (or, for acceptance gates, when the acceptance report says the suite is not releasable). An acceptance
    gate gives `quarantined`, the tasks acceptance quarantines for any reason: a task may fail several gates, so
    the release is decided on that count, not on this gate's, and the reason says both."""
    if not failing:
        return passed(gate, f"all {total} tasks pass", tasks=total)
    allowed = spec.acceptance.max_quarantined_fraction
    blocking = (len(failing) / max(total, 1) > allowed) if releasable is None else not releasable
    meta = {"tasks": total, "failing": len(failing),
            "failing_tasks": md_table(["task", "reasons"], [list(f) for f in failing[:100]])}
    if quarantined is not None:
        meta["quarantined"] = quarantined
    count = failing_count(len(failing), total, blocking, allowed, quarantined)
    return GateResult(gate=gate, passed=False, blocking=blocking, metadata=meta,
                      reason=f"{count}, first {failing[0][0]}: {failing[0][1]}")


def failing_count(failing: int, total: int, blocking: bool, allowed: float, quarantined: int | None = None,
                  what: str | None = None) -> str:
    """How many tasks fail a gate (`what` they are: "fail this gate" by default) and what that does to the release;
    with `quarantined`, also how many tasks acceptance quarantines for any reason, the count the release is decided
    on (a task may fail several gates)."""
    verdict = "blocks the release" if blocking else "quarantined, release still allowed"
    if quarantined is None:
        return f"{failing} of {total} task(s) {what or 'fail'} ({verdict}; allowed {allowed:.0%})"
    return (f"{failing} of {total} task(s) {what or 'fail this gate'} ({verdict}: acceptance quarantines "
            f"{quarantined} of {total} for any reason, {quarantined / max(total, 1):.0%}; allowed {allowed:.0%})")


def _task_gate(name: str, test: Callable[[TaskRecord], bool]):
    def decide(spec: SuiteSpec, paths: Paths) -> GateResult:
        tasks = tasks_on_disk(paths)
        failing = [(t.task_id, name.replace("_", " ") + " fails") for t in tasks if not test(t)]
        return quarantine_verdict(name, spec, len(tasks), failing)

    return decide


def _config(spec: SuiteSpec, paths: Paths) -> list:
    imported = file_sha256(spec.resolve(spec.derivation.tasks)) if spec.derivation.tasks else None
    generated = [spec.generation.model_dump(mode="json")] if spec.generation else []  # only where a spec generates
    return [spec.derivation.model_dump(mode="json"), spec.trial_protocol.model_dump(mode="json"), imported, *generated]


STAGE = Stage(
    name="derived_tasks", deps=("deidentified_snapshot", "policy_documents", "process_dossier", "generated_tasks"),
    module=__name__,
    kinds=frozenset({"jsonl", "sqlite"}), run=run, config=_config,
    description="Task records derived from resolved cases, and the world they run in.",
    gates=(Gate("task_schema_valid", "derived_tasks", task_schema_valid,
                description="Every task record validates against the TaskRecord schema and the domain's tables "
                            "and tools."),
           Gate("assertions_cite_policy", "derived_tasks",
                _task_gate("assertions_cite_policy",
                           lambda t: all(a.clause in t.policy.clause_ids for a in t.goal_state.assertions)),
                description="Every goal-state assertion cites a clause of the task's policy."),
           Gate("masked_fields_justified", "derived_tasks",
                _task_gate("masked_fields_justified",
                           lambda t: all(m.justification.strip() for m in t.goal_state.volatile_fields_masked)),
                description="Every masked volatile field carries a justification."),
           Gate("requirements_traced", "derived_tasks", process_dossier.requirements_traced,
                applies=lambda spec: spec.dossier is not None,
                description="Every dossier requirement is stated by a clause, enforced where it restricts an action, "
                            "verified by a check and exercised by a task; every cited clause and write permission "
                            "traces to a requirement; nothing consequential is open; customizations moved whole.")),
)
