"""One asset graph per suite spec: key prefix = suite name; the build in group <suite>, the partitioned
trial_traces, scorecard and leaderboard in group <suite>_trials.

source_records ─► rights_review ─► seed_snapshot ─► deidentified_snapshot ─┐
policy_documents ──────────────────────────────────── (generated_tasks) ──► derived_tasks
  ─► acceptance_results ─► suite_release ─► trial_traces[version|agent] ─► scorecard[version] ─► leaderboard

The build assets are the stages the stage registry (evalsuite.pipeline.registry)
gives the spec, generated_tasks included where the spec composes its tasks:
each calls its stage's `run` and returns its content hash as the DataVersion;
the gates are the asset checks in checks.py beside this module; a stage below a
gate that blocked is held back, not run (held_back.py).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import dagster as dg

from evalsuite.deid.keys import DeidKeyError
from evalsuite.deid.rules import DeidError
from evalsuite.pipeline import preflight, registry
from evalsuite.pipeline.locks import suite_lock
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import GateError, Stage
from evalsuite.pipeline.stages import leaderboard, scorecard, source_records, trial_traces
from evalsuite.sourcing.spec import SpecError, SuiteSpec, load_spec
from evalsuite.trials.settings import EngineSettings
from evalsuite.trials.spend import RunCap
from evalsuite_dagster.metadata import gate_failure, materialized, run_stage, to_metadata
from evalsuite_dagster.resources import EvalsuiteHome, ModelEndpoint
from evalsuite_dagster.suite.checks import suite_checks
from evalsuite_dagster.suite.held_back import NOT_RUN_TAG, held_back, key_missing, planned_below, upstream_block

# Materialize when upstream changed, but never past a gate (asset check) that has not passed, nor below a step
# that held its assets back (no key): its run succeeded, and it runs again when asked, not by itself. The gates do
# not fail their run (held_back.py), so the condition looks at every check, not Dagster's blocking ones.
GATES_PASSED = dg.AutomationCondition.all_deps_match((dg.AutomationCondition.all_checks_match(
    dg.AutomationCondition.check_passed() | dg.AutomationCondition.will_be_requested(), blocking_only=False,
) & ~dg.AutomationCondition.executed_with_tags(tag_keys={NOT_RUN_TAG})).with_label("all_gates_passed")
).with_label("all_deps_gates_passed")
GATED = dg.AutomationCondition.eager() & GATES_PASSED


@dataclass
class SuiteGraph:
    spec: SuiteSpec
    spec_path: Path
    assets: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    agents: "dg.DynamicPartitionsDefinition | None" = None
    versions: "dg.DynamicPartitionsDefinition | None" = None
    home: Path | None = None  # the home its assets build in (None: EVALSUITE_HOME), whose files key code versions

    @cached_property
    def paths(self) -> Paths:
        """Made once: Paths creates and closes the home, and code_version asks for it per stage."""
        return Paths(self.spec, self.home)

    def code_version(self, stage: str) -> str:
        return registry.code_version(stage, self.spec, self.paths)

    @property
    def trials_group(self) -> str:
        """trial_traces, scorecard and leaderboard: partitioned (or downstream of partitions), so a group of their
        own lets "Materialize all" on the suite group start a build instead of a partition dialog."""
        return f"{self.spec.name}_trials"

    def key(self, stage: str) -> dg.AssetKey:
        return dg.AssetKey([self.spec.name, stage])

    @property
    def build_job(self) -> str:
        return f"{self.spec.name}__build_job"

    @property
    def trials_job(self) -> str:
        return f"{self.spec.name}__trials_job"

    @property
    def score_job(self) -> str:
        return f"{self.spec.name}__score_job"

    @property
    def leaderboard_job(self) -> str:
        return f"{self.spec.name}__leaderboard_job"

    @property
    def stages(self) -> list[Stage]:
        """The build stages of this suite, in build order."""
        return registry.build_stages(self.spec)

    def jobs(self) -> list:
        build = dg.AssetSelection.assets(self.key("source_records"), *(self.key(s.name) for s in self.stages))
        return [dg.define_asset_job(self.build_job, selection=build,
                                    description=f"Build and release suite {self.spec.name}"),
                dg.define_asset_job(self.trials_job, selection=[self.key("trial_traces")],
                                    description="Run one agent config on one release"),
                dg.define_asset_job(self.score_job, selection=[self.key("scorecard")]),
                dg.define_asset_job(self.leaderboard_job, selection=[self.key("leaderboard")])]


def _stage_asset(g: SuiteGraph, stage: Stage):
    spec = g.spec

    @dg.asset(name=stage.name, key_prefix=spec.name, group_name=spec.name,
              deps=[g.key(d) for d in registry.deps_of(stage, spec)],
              code_version=g.code_version(stage.name), automation_condition=GATED,
              description=stage.description, kinds=set(stage.kinds), output_required=False)
    def _asset(context: dg.AssetExecutionContext, home: EvalsuiteHome) -> Iterator:
        yield from _gated_step(g, stage, context, home)

    return _asset


def _gated_step(g: SuiteGraph, stage: Stage, context: dg.AssetExecutionContext, home: EvalsuiteHome) -> Iterator:
    """Run a build stage; a gate that blocks its input holds it (and every asset below it) back, unrun."""
    paths = home.paths(g.spec)
    try:
        if stage is g.stages[0]:  # the sources against the domain before any record, as `evalsuite build` checks
            preflight.check_sources(g.spec)
        with suite_lock(paths):  # per step: a CLI build of the suite in this home waits, and vice versa
            out = stage.run(g.spec, paths)
    except GateError as exc:
        if not upstream_block(stage, exc):
            raise gate_failure(exc) from exc
        yield from held_back(context, planned_below(context, g.key(stage.name)), exc)
        return
    except DeidKeyError as exc:  # the user's secret is not set: nothing ran, nothing to retry until it is
        yield from key_missing(context, planned_below(context, g.key(stage.name)), exc)
        return
    except (DeidError, SpecError) as exc:  # bad rules, values or sources: the one line `evalsuite build` prints
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    yield materialized(out)


def _source_asset(g: SuiteGraph):
    spec = g.spec

    @dg.observable_source_asset(name="source_records", key_prefix=spec.name, group_name=spec.name,
                                description=f"The supplier delivery {spec.sources.name} as received; "
                                            "data version = hash of the raw inputs.")
    def _observe() -> dg.ObserveResult:
        out = source_records.observe(spec)
        return dg.ObserveResult(data_version=dg.DataVersion(out.data_version), metadata=to_metadata(out.metadata))

    return _observe


class TrialRunConfig(dg.Config):
    """How a trial run's model and external agents run (set in the Launchpad): trials in flight (0: the agent
    config's or the agent's default), a run cap on cost and tokens (0: none); progress goes to the run's log."""

    max_in_flight: int = 0
    max_cost: float = 0.0
    max_tokens: int = 0

    def engine(self, report: Callable[[str], None]) -> EngineSettings:
        cap = RunCap(cost=self.max_cost or None, tokens=self.max_tokens or None) if self.max_cost or self.max_tokens \
            else None
        return EngineSettings(max_in_flight=self.max_in_flight or None, cap=cap, report=report)


def _trial_asset(g: SuiteGraph):
    spec = g.spec

    @dg.asset(name="trial_traces", key_prefix=spec.name, group_name=g.trials_group, deps=[g.key("suite_release")],
              partitions_def=dg.MultiPartitionsDefinition({"version": g.versions, "agent": g.agents}),
              code_version=g.code_version("trial_traces"), kinds={"jsonl"},
              description="Every trial of one agent config on one release: traces.jsonl, summary.parquet.")
    def _asset(context: dg.AssetExecutionContext, config: TrialRunConfig, home: EvalsuiteHome,
               model_endpoint: ModelEndpoint) -> dg.MaterializeResult:
        keys = context.partition_key.keys_by_dimension
        return materialized(run_stage(trial_traces.run, spec, home.paths(spec), keys["version"], keys["agent"], None,
                                      model_endpoint.settings(), config.engine(context.log.info)))

    return _asset


def _scorecard_asset(g: SuiteGraph):
    spec = g.spec
    by_version = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="version")

    @dg.asset(name="scorecard", key_prefix=spec.name, group_name=g.trials_group, partitions_def=g.versions,
              deps=[dg.AssetDep(g.key("trial_traces"), partition_mapping=by_version)], kinds={"json", "markdown"},
              code_version=g.code_version("scorecard"), automation_condition=GATED,
              description="pass^k / pass@k per agent with task-bootstrap intervals, slices and the run identity.")
    def _asset(context: dg.AssetExecutionContext, home: EvalsuiteHome) -> dg.MaterializeResult:
        return materialized(run_stage(scorecard.run, spec, home.paths(spec), context.partition_key))

    return _asset


def build_suite_graph(spec_path: str | Path, home: Path | None = None) -> SuiteGraph:
    spec = load_spec(spec_path)
    g = SuiteGraph(spec=spec, spec_path=Path(spec_path).resolve(), home=home,
                   agents=dg.DynamicPartitionsDefinition(name=f"{spec.name}__agents"),
                   versions=dg.DynamicPartitionsDefinition(name=f"{spec.name}__versions"))
    g.assets = [_source_asset(g), *(_stage_asset(g, s) for s in g.stages),
                _trial_asset(g), _scorecard_asset(g), _leaderboard_asset(g)]
    g.checks = suite_checks(spec, {s.name: g.key(s.name) for s in g.stages})
    return g


class LeaderboardConfig(dg.Config):
    """How the leaderboard orders each release's agents (set in the Launchpad): pass_k (best first),
    cost_per_trial or cost_per_success (cheapest first; agents without a price last)."""

    sort_by: str = "pass_k"


def _leaderboard_asset(g: SuiteGraph):
    spec = g.spec

    @dg.asset(name="leaderboard", key_prefix=spec.name, group_name=g.trials_group, deps=[g.key("scorecard")],
              code_version=g.code_version("leaderboard"), kinds={"markdown"},
              automation_condition=dg.AutomationCondition.eager().without(~dg.AutomationCondition.any_deps_missing()),
              description="Every agent on every scored release of the suite, best first.")
    def _asset(config: LeaderboardConfig, home: EvalsuiteHome) -> dg.MaterializeResult:
        return materialized(leaderboard.run(spec, home.paths(spec), config.sort_by))

    return _asset
