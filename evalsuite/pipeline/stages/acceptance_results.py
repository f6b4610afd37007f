"""Acceptance of every derived task (reference N times, no-op, every-write adversary, reset check);
gates reference_solvable, reference_stable, not_trivially_passable, resettable and adjudicated."""
from __future__ import annotations

from contextlib import closing
from functools import lru_cache
from pathlib import Path

from evalsuite.audit.acceptance import (
    TASK_GATES,
    AcceptanceReport,
    Runner,
    audit_markdown,
    run_acceptance,
    strata_table,
)
from evalsuite.audit.reviews import LEDGER_NAME, Ledger, ReviewEntry, ReviewError, review_counts, review_state
from evalsuite.core.domain_refs import is_file_ref
from evalsuite.core.hashing import file_sha256
from evalsuite.core.identity import RunIdentity
from evalsuite.core.io import atomic_write, write_json
from evalsuite.core.markdown import Markdown, md_table
from evalsuite.domains.ref import WorldRef
from evalsuite.pipeline import preflight
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Gate, GateError, GateResult, Stage, StageOutput, require
from evalsuite.pipeline.stages import derived_tasks
from evalsuite.releases.release import DOMAIN_FILE
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.trials.harness import acceptance_runner
from evalsuite.worlds.world import World


class AuditRecord(AcceptanceReport):
    """audit.json: the acceptance report and the task set and world it was run on."""

    task_set_sha256: str
    seed_sha256: str
    reviews: dict[str, int] = {}  # review counts of the task set (review_counts), where adjudication is required
    unreviewed: dict[str, str] = {}  # task id -> what review its goal state still needs, in a few words


def parallel_runner(spec: SuiteSpec, world: World, task_set: str, workers: int | None = None,
                    paths: Paths | None = None) -> Runner:
    """Acceptance trials spread over worker processes, stamped with a provisional identity."""
    domain = world.domain
    identity = RunIdentity(suite=spec.name, suite_version="acceptance", task_set_sha256=task_set,
                           seed_sha256=world.seed_sha256, environment_image=domain.image,
                           tool_schemas_sha256=domain.tool_schemas_sha256(), simulator=spec.simulator)
    return acceptance_runner(WorldRef.from_world(world, _worker_source(spec, paths)), identity, workers)


def _worker_source(spec: SuiteSpec, paths: Paths | None) -> str | None:
    """Where a worker process finds the build's domain (registry.lookup): a declarative one's bound file, written
    beside the build's records (its columns come from the sources, which a worker does not read), or the spec's
    dotted path; None where the name is an installed entry point."""
    package = preflight.domain_for(spec)
    if package.bound_file is not None and paths is not None:
        return str(atomic_write(paths.root / DOMAIN_FILE, package.bound_file).resolve())
    return None if spec.domain == package.name or is_file_ref(spec.domain) else spec.domain


def accept(spec: SuiteSpec, paths: Paths, runner: Runner | None = None) -> AuditRecord:
    """Acceptance of every derived task; trials run on all cores unless a runner is given."""
    require(derived_tasks.STAGE, spec, paths)
    tasks, task_set = derived_tasks.tasks_on_disk(paths), derived_tasks.task_set_on_disk(paths)
    # The world is opened to check its hash and name it to the runner, whose trials open their own: a large world
    # is three copies of its file in memory, so this one gives them back before any trial runs.
    with closing(World(preflight.domain_for(spec).domain, paths.world)) as world:
        runner = runner or parallel_runner(spec, world, task_set, paths=paths)
    reviews = ledger_entries(spec, paths)
    report = run_acceptance(tasks, spec.acceptance, runner, reviews)
    states = [review_state(t, reviews) for t in tasks] if spec.acceptance.require_adjudication else []
    record = AuditRecord(task_set_sha256=task_set, seed_sha256=world.seed_sha256, **report.model_dump(),
                         reviews=review_counts(states) if states else {},
                         unreviewed={s.task_id: s.missing() for s in states if not s.adjudicated})
    atomic_write(paths.acceptance / "audit.md", audit_markdown(report, spec.name))
    write_json(paths.audit, record.model_dump(mode="json"))
    return record


def ledger(paths: Paths) -> Ledger:
    """The suite's review ledger: beside its derived tasks, outside them, so every rebuild keeps it."""
    return Ledger(paths.root / LEDGER_NAME)


def ledger_entries(spec: SuiteSpec, paths: Paths) -> list[ReviewEntry]:
    """The ledger, an input of acceptance only where the spec requires adjudication; one that cannot be read
    blocks at the adjudicated gate naming its file and line."""
    if not spec.acceptance.require_adjudication:
        return []
    try:
        return ledger(paths).entries()
    except ReviewError as exc:
        raise GateError("adjudicated", str(exc)) from exc


def _config(spec: SuiteSpec, paths: Paths) -> list:
    """The acceptance settings and, where adjudication is required, the ledger's content: a new sign-off marks
    acceptance stale like an edited spec setting (the ledger of the home the suite is built in)."""
    if not spec.acceptance.require_adjudication:
        return [spec.acceptance.model_dump(mode="json"), None]
    found = ledger(paths).path
    return [spec.acceptance.model_dump(mode="json"), file_sha256(found) if found.is_file() else None]


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
    reviews = {"reviews": report.reviews} if spec.acceptance.require_adjudication else {}
    return StageOutput(file_sha256(paths.audit), {**reviews,
        "tasks": s["tasks"], "accepted": s["accepted"], "quarantined": s["quarantined"],
        "releasable": s["releasable"], "summary": dict(s),
        "gates": md_table(["gate", "tasks failing"], [[g, len(report.gate(g))] for g in TASK_GATES]),
        "quarantined_tasks": quarantine_table([(t.task_id, t.reasons) for t in report.tasks if t.quarantined]),
        "audit": paths.acceptance / "audit.md",
        **({"strata": strata_table(report.strata)} if report.strata else {}),
        **fault_plan_metadata(report)})


def fault_plan_metadata(report: AuditRecord) -> dict:
    """Reference passes per fault plan, for suites whose tasks carry plans (none otherwise, so others' metadata
    is as before)."""
    rows = [[t.task_id, plan or "unfaulted", n] for t in report.tasks for plan, n in t.fault_plans.items()]
    return {"fault_plans": md_table(["task", "condition", "reference passes"], rows)} if rows else {}


@lru_cache(maxsize=4)
def _audit_at(stamp: tuple[str, int, int]) -> AuditRecord:
    return AuditRecord.model_validate_json(Path(stamp[0]).read_text())


def audit_on_record(paths: Paths) -> AuditRecord:
    """The acceptance results, refused unless they are for exactly the task set on disk."""
    if not paths.audit.is_file():
        raise GateError("acceptance_results", "no acceptance results on record")
    audit = _audit_at(derived_tasks.stamp(paths.audit))
    current = derived_tasks.task_set_on_disk(paths)
    if audit.task_set_sha256 != current:
        raise GateError("acceptance_results",
                        f"acceptance results are for task set {audit.task_set_sha256[:12]}, not {current[:12]}")
    return audit


def _acceptance_gate(name: str):
    def decide(spec: SuiteSpec, paths: Paths) -> GateResult:
        audit = audit_on_record(paths)
        failing = [(t.task_id, "; ".join(t.reasons)) for t in audit.gate(name)]
        return derived_tasks.quarantine_verdict(name, spec, len(audit.tasks), failing,
                                                releasable=bool(audit.summary["releasable"]),
                                                quarantined=int(audit.summary["quarantined"]))

    return decide


def adjudicated(spec: SuiteSpec, paths: Paths, listed: int = 5) -> GateResult:
    """Like every acceptance gate (unadjudicated tasks quarantined within the allowance, blocking beyond it), but
    the reason lists per task what review is missing, and the review counts are its metadata."""
    audit = audit_on_record(paths)
    failing = [(t.task_id, audit.unreviewed.get(t.task_id) or "; ".join(t.reasons)) for t in audit.gate("adjudicated")]
    quarantined = int(audit.summary["quarantined"])
    v = derived_tasks.quarantine_verdict("adjudicated", spec, len(audit.tasks), failing,
                                         releasable=bool(audit.summary["releasable"]), quarantined=quarantined)
    v.metadata["reviews"] = audit.reviews
    if v.passed:
        return v
    more = f"; …and {len(failing) - listed} more (evalsuite review status)" if len(failing) > listed else ""
    count = derived_tasks.failing_count(len(failing), len(audit.tasks), v.blocking,
                                        spec.acceptance.max_quarantined_fraction, quarantined, what="not adjudicated")
    v.reason = f"{count}: " + "; ".join(f"{task}: {missing}" for task, missing in failing[:listed]) + more
    return v


def _gate(name: str, description: str, **kw) -> Gate:
    return Gate(name, "acceptance_results", _acceptance_gate(name), description=description, **kw)


STAGE = Stage(
    name="acceptance_results", deps=("derived_tasks",), module=__name__, kinds=frozenset({"json"}), run=run,
    config=_config,
    description="Reference, no-op and adversary trials per task; failing tasks quarantined.",
    gates=(_gate("reference_solvable", "The reference solution passes in a freshly reset world under every fault plan, "
                                       "none of its calls fail, and every alternative solution passes."),
           _gate("reference_stable", "The reference solution passes on every one of the N acceptance trials."),
           _gate("not_trivially_passable", "The no-op agent (where the task requires action), the every-write "
                                           "adversary and every named negative control fail, under every fault "
                                           "plan."),
           _gate("resettable", "The world hash after reset equals the recorded seed hash before every trial."),
           Gate("adjudicated", "acceptance_results", adjudicated,
                description="Goal states carry two reviewer sign-offs.",
                applies=lambda spec: spec.acceptance.require_adjudication)),
)
