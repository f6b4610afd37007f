"""The gates: blocking asset checks with ERROR severity that always emit a result.

Each check reads what its asset's stage recorded on disk (evalsuite.pipeline.stages.gate).
Task-level gates that fail within the quarantine the spec allows report WARN
(the tasks are quarantined and the release goes ahead without them); beyond it,
ERROR, which stops everything downstream in the run.
"""

import dagster as dg

from assets.metadata import to_metadata
from assets.resources import EvalsuiteHome
from evalsuite.pipeline.stages import gate, gates_of
from evalsuite.sourcing.spec import SuiteSpec

GATE_DOCS = {
    "rights_cleared": "The license covers the needed uses, has not expired, and every personal column has a rule.",
    "source_quality": "The source tables meet their great-expectations suite (keys, required columns, joins, value sets).",
    "no_residual_pii": "No original personal value or personal-looking pattern is left after de-identification.",
    "joins_preserved": "Every foreign-key join that held before de-identification still holds after it.",
    "task_schema_valid": "Every task record validates against the TaskRecord schema and the domain's tables and tools.",
    "assertions_cite_policy": "Every goal-state assertion cites a clause of the task's policy.",
    "masked_fields_justified": "Every masked volatile field carries a justification.",
    "reference_solvable": "The reference solution passes in a freshly reset world, and none of its calls fail.",
    "reference_stable": "The reference solution passes on every one of the N acceptance trials.",
    "not_trivially_passable": "The no-op agent and the every-write adversary fail.",
    "resettable": "The world hash after reset equals the recorded seed hash before every trial.",
    "adjudicated": "Goal states carry two reviewer sign-offs.",
}


def gate_check(spec: SuiteSpec, asset_key: dg.AssetKey, name: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=asset_key, name=name, blocking=True, description=GATE_DOCS[name])
    def _check(home: EvalsuiteHome) -> dg.AssetCheckResult:
        v = gate(name, spec, home.paths(spec))
        severity = dg.AssetCheckSeverity.WARN if not v.passed and not v.blocking else dg.AssetCheckSeverity.ERROR
        return dg.AssetCheckResult(passed=v.passed, severity=severity, description=v.reason,
                                   metadata=to_metadata({"reason": v.reason, **v.metadata}))

    return _check


def suite_checks(spec: SuiteSpec, key: dict[str, dg.AssetKey]) -> list[dg.AssetChecksDefinition]:
    return [gate_check(spec, key[stage], name) for stage in key for name in gates_of(stage, spec)]
