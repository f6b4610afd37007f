"""The Celery trial job of a suite: one agent's trials on one release fan out over Celery workers in chunks.

<suite>__plan_chunks ─► <suite>__run_chunk[chunk_0 … chunk_n] (one Celery task each) ─► <suite>__collect
(op names carry the suite: Dagster wants them unique across the code location's jobs)

`collect` puts the chunks' records into the run folder and calls the trial
stage the in-process `trials_job` runs (evalsuite.pipeline.stages.trial_traces),
which finds every trial recorded and writes the summary and the scorecard:
same seeds, same scorecard. It then reports the `trial_traces` partition
(version × agent) as materialized, so the scorecard follows as usual. Wiring
only: chunking is evalsuite.trials.chunks. Workers need the same code, the
same instance (PostgreSQL, deploy/dagster_postgres.yaml, or one shared
DAGSTER_HOME) and the evalsuite home on a path they all see.
"""
# No `from __future__ import annotations`: Dagster resolves the ops' annotations (the config class) when the
# job is defined, and string annotations of ops defined inside a function do not resolve.

import functools
import os
import sys
import time
from pathlib import Path

import dagster as dg
from dagster_celery import celery_executor, core_execution_loop

from evalsuite.core.identity import AgentConfig, RunIdentity, agent_configs
from evalsuite.pipeline.stages import trial_traces
from evalsuite.releases.release import Release
from evalsuite.trials.agents.endpoint import Endpoint, pinned
from evalsuite.trials.chunks import TrialChunk, merge_records, plan_chunks, run_chunk
from evalsuite.trials.tracelog import TrialRecord
from evalsuite_dagster.metadata import run_stage, to_metadata
from evalsuite_dagster.resources import EvalsuiteHome, ModelEndpoint
from evalsuite_dagster.suite.graph import SuiteGraph, build_suite_graph

CELERY_CONFIG_DIR = Path(__file__).resolve().parents[2] / "deploy" / "celery"  # workers' PYTHONPATH entry
# Where the job's run config points the executor unless told otherwise (the Redis on this machine and in CI).
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
# The workers print the steps' INFO and above (the run's event log in the UI keeps every event): at DEBUG, each
# step start, output and resource init is a line in every worker's log.
WORKER_LOGS = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
# The Celery executor (in the run's process) polls its steps' results every TICK_SECONDS, 1 s in dagster-celery: a
# run waited up to 1 s at each hand-over (plan -> chunks -> collect) and up to 2 s at its end (one more sleep after
# the last result), 3.5 s of a 21 s model-bound run on 2 workers (bench/bench_celery_models.py), which held the
# 2-worker speed-up to 1.7x. A poll reads one result key per step in flight from the backend: at 0.2 s, a run with
# 100 chunks queued makes 500 small Redis reads a second. dagster-celery has no setting for it; this module is
# imported wherever the job runs (the run's process loads the code location).
EXECUTOR_POLL_SECONDS = 0.2
core_execution_loop.TICK_SECONDS = EXECUTOR_POLL_SECONDS


class CeleryTrialsConfig(dg.Config):
    """Which release and agent to run, and how many trials one Celery task (one step) runs."""

    version: str
    agent: str
    chunk_trials: int = 64
    max_in_flight: int = 0  # a model or external agent's trials at once in each worker (0: its config's or default)


def celery_run_config(suite: str, version: str, agent: str, chunk_trials: int = 64, broker: str | None = None,
                      backend: str | None = None, max_in_flight: int = 0) -> dict:
    """Run config of a `<suite>__celery_trials_job` run. Broker and backend default to EVALSUITE_CELERY_BROKER
    (else the local Redis) and EVALSUITE_CELERY_BACKEND (else the broker), as deploy/celery/dagster_celery_config.py
    sets them for the workers; the console logger at INFO keeps the workers' logs to what matters."""
    broker = broker or os.environ.get("EVALSUITE_CELERY_BROKER", DEFAULT_BROKER)
    backend = backend or os.environ.get("EVALSUITE_CELERY_BACKEND", broker)
    config = {"version": version, "agent": agent, "chunk_trials": chunk_trials}
    ops = {f"{suite}__plan_chunks": {"config": config | ({"max_in_flight": max_in_flight} if max_in_flight else {})}}
    return {"ops": ops, "execution": {"config": {"broker": broker, "backend": backend}}, **WORKER_LOGS}


# What a worker imports before it reports ready, so that no step pays it: the job, the model agent's SDK (0.35 s,
# else paid by each worker's first chunk of a model agent) and the scorecard's plot (collect's first run).
WORKER_IMPORTS = ("evalsuite_dagster.trials.celery", "evalsuite.trials.agents.openai_agent",
                  "matplotlib.backends.backend_agg", "matplotlib.figure")


def worker_command(name: str, python: str = sys.executable) -> list[str]:
    """argv of one Celery worker for the trial job: one step at a time (`--pool=solo`; run one per core; a model
    agent's chunk runs its trials on the worker's trial engine, max_in_flight at once), WORKER_IMPORTS imported
    before it reports ready. Run it with deploy/celery on PYTHONPATH and DAGSTER_HOME pointing at the shared
    instance."""
    return [python, "-m", "celery", "-A", "dagster_celery.app", "worker", "--pool=solo", "--prefetch-multiplier=1",
            "-I", ",".join(WORKER_IMPORTS), "-n", f"{name}@%h", "--without-gossip", "--without-mingle",
            "-l", "INFO"]


def _release_run(g: SuiteGraph, home: EvalsuiteHome, version: str, agent: str, settings: Endpoint | None = None
                 ) -> tuple[Release, AgentConfig, RunIdentity]:
    """The release, the agent's config and the identity run_release gives this agent's trials on it (the
    endpoint its requests go to pinned as run_release pins it, under `settings`)."""
    configs = {a.name: a for a in g.spec.agents}
    if agent not in configs:
        raise dg.Failure(description=f"agent {agent!r} is not among the agents of suite {g.spec.name}",
                         allow_retries=False)
    rel = Release(home.paths(g.spec).release(g.spec.name, version))
    config = pinned(configs[agent], settings)
    return rel, config, rel.run_identity(agent_configs([config]))


def celery_trials_job(g: SuiteGraph, home: str | Path | None = None) -> dg.JobDefinition:
    """`<suite>__celery_trials_job`; `home` binds the resources (tests, benchmarks), else Definitions gives them."""

    @dg.op(name=f"{g.spec.name}__plan_chunks", out={"chunks": dg.DynamicOut(), "run": dg.Out()})
    def plan(config: CeleryTrialsConfig, home: EvalsuiteHome):
        rel, _, _ = _release_run(g, home, config.version, config.agent)
        out = home.paths(g.spec).agent_run(config.version, config.agent)
        yield dg.Output((config.version, config.agent), output_name="run")
        for chunk in plan_chunks(rel.tasks(), config.agent, config.chunk_trials, out):
            yield dg.DynamicOutput((config.version, chunk.model_dump(), config.max_in_flight), output_name="chunks",
                                   mapping_key=f"chunk_{chunk.index}")

    @dg.op(name=f"{g.spec.name}__run_chunk")
    def run_one(work: tuple, home: EvalsuiteHome, model_endpoint: ModelEndpoint) -> dg.Output[list[str]]:
        version, raw, in_flight = work
        chunk = TrialChunk.model_validate(raw)
        settings = model_endpoint.settings()
        rel, config, identity = _release_run(g, home, version, chunk.agent, settings)
        start = time.perf_counter()
        records = run_chunk(rel.world_ref(), rel.tasks(), config, identity, chunk,
                            model_endpoint=settings, max_in_flight=in_flight or None)
        # the step's wall time less this is what a Celery step costs beyond its trials (bench_celery_models.py)
        seconds = time.perf_counter() - start
        return dg.Output([r.model_dump_json() for r in records],
                         metadata={"trials": len(records), "trial seconds": dg.MetadataValue.float(round(seconds, 4))})

    @dg.op(name=f"{g.spec.name}__collect")
    def collect(context: dg.OpExecutionContext, run: tuple, chunks: list, home: EvalsuiteHome,
                model_endpoint: ModelEndpoint):
        version, agent = run
        paths = home.paths(g.spec)
        out_dir = paths.agent_run(version, agent)
        merge_records(out_dir, (TrialRecord.model_validate_json(line) for lines in chunks for line in lines))
        rel, _, _ = _release_run(g, home, version, agent)
        left = plan_chunks(rel.tasks(), agent, 1, out_dir)
        if left:  # the stage below would run them here, hiding that a chunk's trials never came back
            raise dg.Failure(description=f"{len(left)} task(s) of {agent} have no records from the workers, "
                                         f"first {left[0].task_ids[0]}", allow_retries=False)
        # every trial recorded: nothing left to run; the endpoint pins the agent's config as the chunks pinned it
        out = run_stage(trial_traces.run, g.spec, paths, version, agent, 1, model_endpoint.settings())
        _register(context.instance, g, version, agent)
        yield dg.AssetMaterialization(asset_key=g.key("trial_traces"), metadata=to_metadata(out.metadata),
                                      partition=dg.MultiPartitionKey({"version": version, "agent": agent}),
                                      tags={"dagster/data_version": out.data_version})
        yield dg.Output(out.data_version)

    @dg.job(name=f"{g.spec.name}__celery_trials_job", executor_def=celery_executor,
            resource_defs={"home": EvalsuiteHome(home=str(home)), "model_endpoint": ModelEndpoint.from_env()}
            if home else None,
            description="Run one agent config on one release, its trials in chunks over Celery workers")
    def _job():
        chunks, run = plan()
        collect(run, chunks.map(run_one).collect())

    return _job


def _register(instance: dg.DagsterInstance, g: SuiteGraph, version: str, agent: str) -> None:
    """Add the version and agent partitions if missing (what the new-release sensor does before a trial run)."""
    for parts, key in ((g.versions, version), (g.agents, agent)):
        if not instance.has_dynamic_partition(parts.name, key):
            instance.add_dynamic_partitions(parts.name, [key])


def job_for_spec(spec_path: str, home: str) -> dg.JobDefinition:
    """The job of one spec file on one home: a target workers can rebuild (dg.build_reconstructable_job).

    A worker rebuilds the job for every step it runs; building a suite's graph takes ~0.3 s, so the job
    is kept per spec path, home and spec text (an edited spec gives a new job)."""
    return _job_for_spec(spec_path, home, Path(spec_path).read_bytes())


@functools.lru_cache(maxsize=16)
def _job_for_spec(spec_path: str, home: str, _text: bytes) -> dg.JobDefinition:
    return celery_trials_job(build_suite_graph(spec_path), home)
