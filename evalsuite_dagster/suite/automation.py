"""Schedules and sensors of a suite: the spec's cron, the supplier drop folder, new releases.

- `<suite>__schedule` rebuilds the suite on the spec's cron string.
- `<suite>__drop_folder` hashes the files in the spec's drop folder; its cursor
  holds their content hashes, so a touched but unchanged file triggers nothing,
  nor do the files found at its first look.
- Both build only a suite that was built on this instance before: loading a
  suite (`make ui` loads every bundled one) starts no run.
- `<suite>__new_release` registers a newly released version (and the spec's
  agent configs, and any recorded run imported into its runs folder) as dynamic
  partitions and requests one trial run per agent.
- `evalsuite_automation` evaluates the assets' AutomationConditions (scorecards
  once every agent's traces are in; nothing past a gate that has not passed).
"""

import json

import dagster as dg

from evalsuite.pipeline.drop_folder import drop_folder_changes, drop_folder_digest, drop_folder_state
from evalsuite.pipeline.stages.trial_traces import imported_agents
from evalsuite_dagster.suite.graph import SuiteGraph

SENSOR_INTERVAL = 30  # seconds


def schedule(g: SuiteGraph) -> dg.ScheduleDefinition | None:
    if not g.spec.schedule:
        return None

    @dg.schedule(name=f"{g.spec.name}__schedule", cron_schedule=g.spec.schedule, job_name=g.build_job,
                 default_status=dg.DefaultScheduleStatus.RUNNING,
                 description=f"Rebuild {g.spec.name} on the spec's schedule ({g.spec.schedule}) once it was built here")
    def _schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
        if not built_here(g, context.instance):
            return dg.SkipReason(not_chosen(g))
        return dg.RunRequest()

    return _schedule


def built_here(g: SuiteGraph, instance: dg.DagsterInstance) -> bool:
    """The user chose this suite: it was built on this instance once. A suite that was only loaded (every bundled
    suite is) is never built by a schedule or sensor, so `make ui` starts nothing the user did not ask for."""
    return instance.get_latest_materialization_event(g.key("rights_review")) is not None


def not_chosen(g: SuiteGraph) -> str:
    return f"{g.spec.name} was never built here: build it once (Materialize all), then it is kept up to date"


def drop_folder_sensor(g: SuiteGraph) -> dg.SensorDefinition | None:
    spec = g.spec
    if not spec.sources.drop_folder:
        return None

    @dg.sensor(name=f"{spec.name}__drop_folder", job_name=g.build_job, minimum_interval_seconds=SENSOR_INTERVAL,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description=f"Rebuild {spec.name} when files in {spec.sources.drop_folder} are added or change "
                           "content, once the suite was built here")
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        previous = json.loads(context.cursor) if context.cursor else None
        state = drop_folder_state(spec, previous)
        cursor = json.dumps(state, sort_keys=True)
        if previous is None:  # the files found at the first look are no new drop
            return dg.SensorResult(skip_reason="first look at the drop folder: cursor recorded", cursor=cursor)
        changed = drop_folder_changes(previous, state)
        if not changed:
            return dg.SensorResult(skip_reason="no file added, removed or changed in content", cursor=cursor)
        if not built_here(g, context.instance):
            return dg.SensorResult(skip_reason=not_chosen(g), cursor=cursor)
        return dg.SensorResult([_build_request(state, changed)], cursor=cursor)

    return _sensor


def _build_request(state: dict, changed: list[str]) -> dg.RunRequest:
    return dg.RunRequest(tags={"evalsuite/drop_folder_sha256": drop_folder_digest(state)[:16],
                               "evalsuite/changed": ", ".join(changed[:5])[:200]})


def new_release_sensor(g: SuiteGraph) -> dg.SensorDefinition:
    spec = g.spec

    @dg.sensor(name=f"{spec.name}__new_release", job_name=g.trials_job, minimum_interval_seconds=SENSOR_INTERVAL,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description=f"Run every agent config of {spec.name} on each new release")
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        return release_trials(g, context.instance)

    return _sensor


def release_trials(g: SuiteGraph, instance: dg.DagsterInstance) -> dg.SensorResult:
    """Partitions to register, and a trial run for each agent without traces of the latest release (run keys make
    each request once-only)."""
    event = instance.get_latest_materialization_event(g.key("suite_release"))
    if event is None or event.asset_materialization is None:
        return dg.SensorResult(skip_reason="no release yet")
    version = event.asset_materialization.metadata["version"].value
    agents = [a.name for a in g.spec.agents] + imported_agents(g.paths, version)  # recorded runs: read, not run
    known = set(instance.get_dynamic_partitions(g.agents.name))
    known_version = instance.has_dynamic_partition(g.versions.name, version)
    adds = [] if known_version else [g.versions.build_add_request([version])]
    adds += [g.agents.build_add_request([a for a in agents if a not in known])] if set(agents) - known else []
    done = instance.get_materialized_partitions(g.key("trial_traces"))
    keys = [dg.MultiPartitionKey({"version": version, "agent": a}) for a in agents]
    runs = [dg.RunRequest(run_key=f"{version}|{k.keys_by_dimension['agent']}", partition_key=k,
                          tags={"evalsuite/suite_version": version, "evalsuite/agent": k.keys_by_dimension["agent"]})
            for k in keys if k not in done]
    if not runs and not adds:
        return dg.SensorResult(skip_reason=f"every agent already has traces for release {version}", cursor=version)
    return dg.SensorResult(run_requests=runs, dynamic_partitions_requests=adds, cursor=version)


def suite_automation(g: SuiteGraph) -> list:
    return [x for x in (schedule(g), drop_folder_sensor(g), new_release_sensor(g)) if x is not None]


def automation_sensor() -> dg.AutomationConditionSensorDefinition:
    return dg.AutomationConditionSensorDefinition("evalsuite_automation", target=dg.AssetSelection.all(),
                                                  default_status=dg.DefaultSensorStatus.RUNNING,
                                                  description="Evaluates every asset's AutomationCondition")
