"""The gates as asset checks that always emit a result: ERROR when the gate blocks.

Each check is one entry of the gate registry (evalsuite.pipeline.registry): its
name, description and judge. Task-level gates that fail within the quarantine
the spec allows report WARN (the tasks are quarantined and the release goes
ahead without them); beyond it, ERROR. An ERROR does not fail the run: every
stage below refuses the blocked input itself and is held back, not run, with
the gate's reason (held_back.py), so Dagster's own blocking is not used.
"""

import dagster as dg

from evalsuite.pipeline import registry
from evalsuite.pipeline.stage import Gate
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite_dagster.metadata import to_metadata
from evalsuite_dagster.resources import EvalsuiteHome


def gate_check(spec: SuiteSpec, asset_key: dg.AssetKey, gate: Gate) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=asset_key, name=gate.name, description=f"Gate: {gate.description}")
    def _check(home: EvalsuiteHome) -> dg.AssetCheckResult:
        v = registry.judge(gate.name, spec, home.paths(spec))
        severity = dg.AssetCheckSeverity.WARN if not v.passed and not v.blocking else dg.AssetCheckSeverity.ERROR
        return dg.AssetCheckResult(passed=v.passed, severity=severity, description=v.reason,
                                   metadata=to_metadata({"reason": v.reason, **v.metadata}))

    return _check


def suite_checks(spec: SuiteSpec, key: dict[str, dg.AssetKey]) -> list[dg.AssetChecksDefinition]:
    return [gate_check(spec, key[stage], gate) for stage in key for gate in registry.gates_of(stage, spec)]
