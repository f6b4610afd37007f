"""The one registry of stages and gates: the build order, each gate's stage and description, and code versions.

`evalsuite build`, `evalsuite audit`, `evalsuite gates`, the Dagster assets and
asset checks, and the README's gate table all read it; a gate is declared once,
in the module of the stage it guards.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalsuite.pipeline import code_versions
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Gate, GateResult, Stage, evaluate
from evalsuite.pipeline.stages import (
    acceptance_results,
    deidentified_snapshot,
    derived_tasks,
    generated_tasks,
    leaderboard,
    policy_documents,
    process_dossier,
    rights_review,
    scorecard,
    seed_snapshot,
    suite_release,
    trial_traces,
)
from evalsuite.sourcing.spec import SuiteSpec

BUILD: tuple[Stage, ...] = (rights_review.STAGE, seed_snapshot.STAGE, deidentified_snapshot.STAGE,
                            policy_documents.STAGE, process_dossier.STAGE, generated_tasks.STAGE, derived_tasks.STAGE,
                            acceptance_results.STAGE, suite_release.STAGE)
STAGES: dict[str, Stage] = {s.name: s for s in BUILD}
GATES: dict[str, Gate] = {g.name: g for s in BUILD for g in s.gates}

# The evaluation stages run per release and agent; their code is their module's imports, their config the spec's.
EVALUATION: dict[str, tuple[str, Callable[[SuiteSpec, Paths], Any]]] = {
    "trial_traces": (trial_traces.__name__, trial_traces.config),
    "scorecard": (scorecard.__name__, lambda spec, paths: None),
    "leaderboard": (leaderboard.__name__, lambda spec, paths: None),
}


def build_stages(spec: SuiteSpec) -> list[Stage]:
    """The build stages this spec runs, in build order (generation only where the spec composes its tasks)."""
    return [s for s in BUILD if s.applies(spec)]


def deps_of(stage: Stage, spec: SuiteSpec) -> list[str]:
    """The stages this one reads for this spec: its deps, less those the spec does not run."""
    run = {s.name for s in build_stages(spec)}
    return [d for d in stage.deps if d in run or d not in STAGES]


def gates_of(stage: str, spec: SuiteSpec) -> list[Gate]:
    """The gates that guard a stage's output for this spec (adjudication only where the spec requires it)."""
    return [g for g in STAGES[stage].gates if g.applies(spec)] if stage in STAGES else []


def gate_result(name: str, spec: SuiteSpec, paths: Paths) -> GateResult:
    """One gate's verdict from the records on disk; never raises (an unknown gate name does)."""
    if name not in GATES:
        raise KeyError(f"unknown gate {name!r}; gates: {', '.join(GATES)}")
    return evaluate(GATES[name], spec, paths)


def code_version(stage: str, spec: SuiteSpec, paths: Paths) -> str:
    """What marks a stage's asset stale: the modules it imports (the suite's domain too, where it looks one up)
    and the spec settings and files it reads, the suite's own in the home of `paths`."""
    if stage in STAGES:
        module, config = STAGES[stage].module, STAGES[stage].config
    else:
        module, config = EVALUATION[stage]
    return code_versions.code_version(module, spec.domain_location(), config(spec, paths))
