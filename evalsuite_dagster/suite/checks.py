"""The gates as asset checks that always emit a result: ERROR when the gate blocks.

Each check is one entry of the gate registry (evalsuite.pipeline.registry): its
name, description and decision. Task-level gates that fail within the quarantine
the spec allows report WARN (the tasks are quarantined and the release goes
ahead without them); beyond it, ERROR. An ERROR does not fail the run: every
stage below refuses the blocked input itself and is held back, not run, with
the gate's reason (held_back.py), so Dagster's own blocking is not used.
"""

from collections.abc import Iterator

import dagster as dg

from evalsuite.pipeline import registry
from evalsuite.pipeline.stage import Gate, GateResult
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite_dagster.metadata import to_metadata
from evalsuite_dagster.resources import EvalsuiteHome


def stage_checks(spec: SuiteSpec, asset_key: dg.AssetKey, gates: list[Gate]) -> dg.AssetChecksDefinition:
    """The gates of one stage as one step: a step per gate would cost the run its bookkeeping (a start, a success
    and their writes) a dozen times over; each gate is still its own check, run alone when selected alone."""
    by_name = {g.name: g for g in gates}

    @dg.multi_asset_check(name=f"{asset_key.to_python_identifier()}_gates", can_subset=True,
                          specs=[dg.AssetCheckSpec(g.name, asset=asset_key, description=f"Gate: {g.description}")
                                 for g in gates])
    def _checks(context: dg.AssetCheckExecutionContext, home: EvalsuiteHome) -> Iterator[dg.AssetCheckResult]:
        for key in sorted(context.selected_asset_check_keys, key=lambda k: list(by_name).index(k.name)):
            yield check_result(key, registry.gate_result(key.name, spec, home.paths(spec)))

    return _checks


def check_result(key: dg.AssetCheckKey, v: GateResult) -> dg.AssetCheckResult:
    severity = dg.AssetCheckSeverity.WARN if not v.passed and not v.blocking else dg.AssetCheckSeverity.ERROR
    return dg.AssetCheckResult(asset_key=key.asset_key, check_name=key.name, passed=v.passed, severity=severity,
                               description=v.reason, metadata=to_metadata({"reason": v.reason, **v.metadata}))


def suite_checks(spec: SuiteSpec, key: dict[str, dg.AssetKey]) -> list[dg.AssetChecksDefinition]:
    return [stage_checks(spec, key[stage], gates) for stage in key if (gates := registry.gates_of(stage, spec))]
