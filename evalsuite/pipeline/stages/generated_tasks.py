"""Generated tasks: every composite of the domain's subtasks, verified, and a balanced sample of them, for a
spec with a `generation` section; derived_tasks builds its world and task records from this record.

Composites that fail verification are dropped and counted by reason; the counts per stratum (intent,
number of subtasks, persona) go to the record and to the asset's metadata.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import md_table
from evalsuite.core.records import Environment, TaskRecord
from evalsuite.pipeline import preflight
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Stage, StageOutput, require
from evalsuite.pipeline.stages import deidentified_snapshot, policy_documents
from evalsuite.sourcing.snapshot import read_snapshot
from evalsuite.sourcing.spec import SuiteSpec


class GenerationRecord(BaseModel):
    """generation.json: the settings and inputs it was made from, its counts, seed rows and task records."""

    config_sha256: str
    composites: int
    verified: int
    dropped: dict[str, int]
    candidates: int
    sampled: int
    strata: list[dict]
    tables: dict[str, list[dict]]
    tasks: list[TaskRecord]


def record_path(paths: Paths) -> Path:
    return paths.root / "generation.json"


def _config_sha256(spec: SuiteSpec, paths: Paths) -> str:
    settings = spec.generation.model_dump(mode="json") if spec.generation else None
    docs = [d.model_dump(mode="json") for d in policy_documents.policy_docs(spec)]
    protocol = spec.trial_protocol.model_dump(mode="json")
    return json_sha256([settings, deidentified_snapshot.on_record(paths).sha256, docs, protocol])


def generate(spec: SuiteSpec, paths: Paths) -> GenerationRecord:
    """Compose, verify and sample with the domain's generate, on the plans of the de-identified snapshot."""
    if spec.generation is None:
        raise ValueError(f"{spec.spec_file}: generation: this suite does not generate its tasks")
    require(deidentified_snapshot.STAGE, spec, paths)
    fn = preflight.domain_for(spec).generate
    if fn is None:
        raise ValueError(f"{spec.spec_file}: generation: domain {spec.domain!r} composes no tasks")
    catalog = {n: df.to_dict("records") for n, df in read_snapshot(paths.deid).items()}
    policy = max(policy_documents.policy_docs(spec), key=lambda d: d.effective_from).as_policy()
    g = spec.generation
    out = fn(catalog.get("plans", []), policy, n=g.sample, seed=g.seed, protocol=spec.trial_protocol,
             intents=g.intents, max_subtasks=g.max_subtasks)
    record = GenerationRecord(config_sha256=_config_sha256(spec, paths), **out.model_dump())
    write_json(record_path(paths), record.model_dump(mode="json"))
    return record


def ensure(spec: SuiteSpec, paths: Paths) -> GenerationRecord:
    """The generation on record when it was made from these settings and inputs, else a new one."""
    path = record_path(paths)
    if path.is_file():
        record = GenerationRecord.model_validate_json(path.read_text())
        if record.config_sha256 == _config_sha256(spec, paths):
            return record
    return generate(spec, paths)


def stamped(record: GenerationRecord, suite, environment: Environment, license_ref: str) -> list[TaskRecord]:
    """The generated records with this build's suite, world and license, as derived_tasks writes them."""
    return [t.model_copy(update={"suite": suite, "environment": environment,
                                 "provenance": t.provenance.model_copy(update={"license_ref": license_ref})})
            for t in record.tasks]


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    r = generate(spec, paths)
    body = r.model_dump(mode="json", exclude={"tables", "tasks"}) | {"tasks": [t.task_id for t in r.tasks]}
    strata = md_table(["intent", "subtasks", "persona", "available", "sampled"],
                      [[s["intent"], s["subtasks"], s["persona"], s["available"], s["sampled"]] for s in r.strata])
    return StageOutput(json_sha256(body), {
        "composites": r.composites, "verified": r.verified, "dropped": sum(r.dropped.values()),
        "dropped_by_reason": md_table(["reason", "composites"], sorted(r.dropped.items())),
        "candidates": r.candidates, "sampled": r.sampled, "strata": strata, "record": record_path(paths)})


STAGE = Stage(
    name="generated_tasks", deps=("deidentified_snapshot", "policy_documents"), module=__name__,
    kinds=frozenset({"json"}), run=run, applies=lambda spec: spec.generation is not None,
    config=lambda spec, paths: spec.generation.model_dump(mode="json") if spec.generation else None,
    description="Composed tasks: every composite of the domain's subtasks verified, a balanced seeded sample taken.",
)
