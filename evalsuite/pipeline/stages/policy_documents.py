"""The versioned policies staff applied, indexed with their clauses and hashes."""
from __future__ import annotations

from evalsuite.core.hashing import file_sha256, json_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import md_table
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Stage, StageOutput
from evalsuite.sourcing.policies import PolicyDoc, load_policy
from evalsuite.sourcing.spec import SuiteSpec


def policy_docs(spec: SuiteSpec) -> list[PolicyDoc]:
    return [load_policy(spec.resolve(p)) for p in spec.policies]


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    body = [{"doc": d.doc, "version": d.version, "effective_from": d.effective_from.isoformat(),
             "clauses": [c.id for c in d.clauses], "sha256": json_sha256(d.model_dump(mode="json"))}
            for d in policy_docs(spec)]
    write_json(paths.policies, body)
    table = md_table(["doc", "version", "effective from", "clauses", "sha256"],
                     [[b["doc"], b["version"], b["effective_from"], len(b["clauses"]), b["sha256"][:12]] for b in body])
    return StageOutput(json_sha256(body), {"documents": len(body), "policies": table, "index": paths.policies})


STAGE = Stage(
    name="policy_documents", deps=(), module=__name__, kinds=frozenset({"markdown"}), run=run,
    config=lambda spec, paths: [file_sha256(spec.resolve(p)) for p in spec.policies],
    description="The versioned policies staff applied, with their clauses.",
)
