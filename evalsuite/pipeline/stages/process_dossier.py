"""The process dossier as a source, upstream of derivation: validated, recorded with its content hash (which every
release of the suite carries), its customizations applied to the derived tasks and world. The decision of the gate
requirements_traced stands here; the gate guards derived_tasks and is declared there.
"""
from __future__ import annotations

import pandas as pd
from pydantic import BaseModel

from evalsuite.core.hashing import file_sha256, json_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import md_list, md_table
from evalsuite.core.records import TaskRecord
from evalsuite.pipeline import preflight
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import GateError, GateResult, Stage, StageOutput, blocked, passed
from evalsuite.pipeline.stages import policy_documents
from evalsuite.sourcing.dossier import Dossier, DossierError, load_dossier
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.tasks.customization import customize_frames, customize_task
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.tasks.traceability import trace_problems


class DossierRecord(BaseModel):
    """dossier.json: the dossier as this suite applies it, and the content hash releases carry."""

    sha256: str  # of the dossier's validated content
    applied: list[str]  # the customizations this suite applies
    dossier: Dossier  # as applied (Dossier.applied)


def dossier_as_applied(spec: SuiteSpec) -> tuple[Dossier, Dossier]:
    """The dossier as written, and as this suite applies it."""
    path = spec.resolve(spec.dossier.file)
    dossier = load_dossier(path)
    if dossier.suite != spec.name and not spec.dossier.apply:  # a variant names the dossier of the suite it varies
        raise DossierError(f"{path}: suite: {dossier.suite!r} is another suite's dossier, not {spec.name!r}'s")
    return dossier, dossier.applied(spec.dossier.apply)


def on_record(paths: Paths) -> DossierRecord:
    if not paths.dossier.is_file():
        raise GateError("requirements_traced", "no process dossier on record")
    return DossierRecord.model_validate_json(paths.dossier.read_text())


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    written, applied = dossier_as_applied(spec)
    record = DossierRecord(sha256=written.sha256, applied=spec.dossier.apply, dossier=applied)
    write_json(paths.dossier, record.model_dump(mode="json"))
    d = applied
    return StageOutput(json_sha256([record.sha256, record.applied]), {
        "sha256": record.sha256, "customizations_applied": ", ".join(record.applied) or "none",
        "intended_result": d.intended_result,
        "requirements": md_table(["id", "statement", "clauses", "checks", "tasks"],
                                 [[r.id, r.statement, ", ".join(r.links.clauses), ", ".join(r.links.checks),
                                   len(r.links.tasks)] for r in d.requirements]),
        "open_questions": md_table(["id", "consequential", "owner", "status", "question"],
                                   [[q.id, q.consequential, q.owner, q.status, q.question] for q in d.open_questions]),
        "contradictions": md_list([f"{c.id} ({' vs '.join(c.between)}): {c.resolution or 'UNRESOLVED'} "
                                   f"(resolver {c.resolver})" for c in d.contradictions], empty="none"),
        "record": paths.dossier})


def customized(spec: SuiteSpec, tasks: list[TaskRecord]) -> list[TaskRecord]:
    """The derived tasks under every customization the spec applies (as they were, when it applies none)."""
    if not spec.dossier or not spec.dossier.apply:
        return tasks
    dossier = load_dossier(spec.resolve(spec.dossier.file))
    hooks = preflight.domain_for(spec).customize
    docs = {(d.doc, d.version): d.as_policy() for d in policy_documents.policy_docs(spec)}
    for c in map(dossier.customization, spec.dossier.apply):
        tasks = [customize_task(t, c, docs[(c.policy.doc, c.policy.version)], hooks) for t in tasks]
    return tasks


def customized_frames(spec: SuiteSpec, frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The seed tables the world is built from, under every customization the spec applies."""
    if not spec.dossier or not spec.dossier.apply:
        return frames
    dossier = load_dossier(spec.resolve(spec.dossier.file))
    for c in map(dossier.customization, spec.dossier.apply):
        frames = customize_frames(frames, c)
    return frames


def requirements_traced(spec: SuiteSpec, paths: Paths) -> GateResult:
    """The derived tasks against the dossier on record (evalsuite.tasks.traceability); a suite without a dossier
    has nothing to trace."""
    if spec.dossier is None:
        return passed("requirements_traced", "the suite has no process dossier")
    record = on_record(paths)
    if not paths.tasks.is_file():
        raise GateError("requirements_traced", "no derived tasks on record")
    tasks = read_tasks(paths.tasks)
    problems = trace_problems(record.dossier, tasks, preflight.domain_for(spec).domain,
                              policy_documents.policy_docs(spec))
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return blocked("requirements_traced", problems[0] + more, problems=md_list(problems[:50]))
    r = record.dossier.requirements
    return passed("requirements_traced", f"{len(r)} requirements traced to clauses, enforcement, checks and "
                                         f"{len(tasks)} tasks", dossier_sha256=record.sha256)


STAGE = Stage(
    name="process_dossier", deps=(), module=__name__, kinds=frozenset({"yaml"}), run=run,
    applies=lambda spec: spec.dossier is not None,
    config=lambda spec, paths: [file_sha256(spec.resolve(spec.dossier.file)), spec.dossier.apply]
    if spec.dossier else None,
    description="The process dossier: requirements, who answered them, and the customizations applied.",
)
