"""Drive a suite through its asset graph in this process, on a given instance (tests, benchmarks, `make demo`).

The same jobs, checks and sensors the UI and the daemon use: the build job, then
what the new-release sensor asks for (partitions and one trial run per agent),
then the scorecard of the release and the leaderboard.
"""
from dataclasses import dataclass, field

import dagster as dg

from evalsuite_dagster.site.asset import site_job_name
from evalsuite_dagster.suite.automation import release_trials
from evalsuite_dagster.suite.graph import SuiteGraph

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass
class BuildOutcome:
    success: bool
    run_id: str
    version: str | None = None
    release: str | None = None
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (gate or step, reason)
    checks: dict[str, tuple[bool, str]] = field(default_factory=dict)  # gate -> (passed, severity)
    materialized: list[str] = field(default_factory=list)
    held_back: list[str] = field(default_factory=list)  # assets not run: a gate blocked their input, or no key


def execute(defs: dg.Definitions, job: str, instance: dg.DagsterInstance, partition_key: str | None = None,
            selection: list[dg.AssetKey] | None = None, quiet: bool = True, tags: dict | None = None):
    return defs.resolve_job_def(job).execute_in_process(
        instance=instance, partition_key=partition_key, asset_selection=selection, raise_on_error=False,
        run_config=QUIET if quiet else None, tags=tags)


def build(defs: dg.Definitions, g: SuiteGraph, instance: dg.DagsterInstance,
          selection: list[str] | None = None, quiet: bool = True) -> BuildOutcome:
    """Run the build job (or the named stages of it); report what blocked, by gate."""
    keys = [g.key(s) for s in selection] if selection else None
    result = execute(defs, g.build_job, instance, selection=keys, quiet=quiet)
    out = BuildOutcome(success=False, run_id=result.run_id)  # set below: the run succeeded and no gate blocked
    for ev in result.all_events:
        if ev.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
            e = ev.event_specific_data
            out.checks[e.check_name] = (e.passed, e.severity.value)
            if not e.passed and e.severity == dg.AssetCheckSeverity.ERROR:
                out.blocked.append((e.check_name, e.description or ""))
        elif ev.event_type == dg.DagsterEventType.ASSET_OBSERVATION:  # held back (suite/held_back.py)
            meta = ev.event_specific_data.asset_observation.metadata
            if "not_run" in meta:
                out.held_back.append(ev.event_specific_data.asset_observation.asset_key.path[-1])
                cause = (meta["gate"].value, meta["gate_reason"].value) if "gate" in meta else (
                    ev.step_key, meta["not_run"].value)
                if cause[0] not in dict(out.blocked):
                    out.blocked.append(cause)
        elif ev.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION:
            m = ev.event_specific_data.materialization
            out.materialized.append(m.asset_key.path[-1])
            if m.asset_key == g.key("suite_release"):
                out.version, out.release = m.metadata["version"].value, m.metadata["release"].value
        elif ev.event_type == dg.DagsterEventType.STEP_FAILURE:
            err = ev.step_failure_data.user_failure_data
            meta = err.metadata if err else {}
            if "gate" in meta:
                out.blocked.append((meta["gate"].value, meta["reason"].value))
            elif ev.step_failure_data.error:
                out.blocked.append((ev.step_key, ev.step_failure_data.error.message.strip().splitlines()[-1]))
    out.success = result.success and not out.blocked
    return out


def run_trials(defs: dg.Definitions, g: SuiteGraph, instance: dg.DagsterInstance, quiet: bool = True) -> list[str]:
    """Evaluate the new-release sensor and run what it requests; returns the trial partitions that ran."""
    result = release_trials(g, instance)
    for req in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
    done = []
    for rr in result.run_requests or []:
        run = execute(defs, g.trials_job, instance, partition_key=rr.partition_key, quiet=quiet, tags=rr.tags)
        if not run.success:
            raise RuntimeError(f"trial run {rr.partition_key} failed: {first_error(run)}")
        done.append(str(rr.partition_key))
    return done


def score(defs: dg.Definitions, g: SuiteGraph, instance: dg.DagsterInstance, version: str, quiet: bool = True) -> None:
    for job, key in ((g.score_job, version), (g.leaderboard_job, None)):
        run = execute(defs, job, instance, partition_key=key, quiet=quiet)
        if not run.success:
            raise RuntimeError(f"{job} failed: {first_error(run)}")


def publish(defs: dg.Definitions, g: SuiteGraph, instance: dg.DagsterInstance, version: str) -> str:
    """Materialize one release's evidence site through its job; returns its index.html as a link."""
    run = execute(defs, site_job_name(g), instance, partition_key=version)
    for ev in run.all_events:
        if ev.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION:
            return ev.event_specific_data.materialization.metadata["site"].value
    raise RuntimeError(f"{site_job_name(g)} failed: {first_error(run)}")


def first_error(result) -> str:
    """The first failed step's error message of a run result."""
    for ev in result.all_events:
        if ev.event_type == dg.DagsterEventType.STEP_FAILURE and ev.step_failure_data.error:
            return ev.step_failure_data.error.message.strip()
    return "unknown error"
