"""Trials on Celery: one agent's trials fan out over two Celery workers in chunks and give the in-process scorecard."""
from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
import yaml
from celery_workers import LocalWorkers, local_workers
from docs_support import code_blocks, page, section
from pipeline_support import service_or_skip
from suite_support import ROOT, SUITE, copy_suite

from evalsuite.pipeline import driver
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.runlog import SCORECARD_JSON, TRACES
from evalsuite.sourcing.spec import load_spec
from evalsuite.trials.chunks import plan_chunks
from evalsuite.trials.local_model import serve_local_model
from evalsuite.trials.settings import EngineSettings
from evalsuite.trials.tracelog import read_traces
from evalsuite_dagster.suite.graph import build_suite_graph
from evalsuite_dagster.trials.celery import celery_run_config, celery_trials_job, job_for_spec

REDIS = ("127.0.0.1", 6379)
AGENT = "adversary"  # the every-write adversary: each trial leaves many writes and a failing verdict to compare


def _celery_workers_of(instance: dg.DagsterInstance, run_id: str) -> dict[str, str]:
    """step key -> the Celery worker that ran it, from the engine events the workers wrote."""
    out = {}
    for rec in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        meta = rec.dagster_event.engine_event_data.metadata
        if "Celery worker" in meta:
            out[rec.step_key] = meta["Celery worker"].value
    return out


def _trials(out_dir) -> list[tuple]:
    return sorted((r.task_id, r.trial, r.trial_seed, r.outcome, r.identity_sha256)
                  for r in read_traces(out_dir / TRACES).records)


@dataclass
class Built:
    spec: Path
    home: Path
    version: str


@dataclass
class Workers:
    workers: LocalWorkers
    dagster_home: Path
    broker: str


@pytest.fixture(scope="module")
def celery(tmp_path_factory):
    """Two Celery workers on a SQLite instance in a shared DAGSTER_HOME, started before `built` so they import
    while the suite builds; stopped at the end of the module whatever happened (local_workers' finally)."""
    service_or_skip(REDIS, "Redis", "the Celery trial test needs it as broker")
    tmp = tmp_path_factory.mktemp("celery_workers")
    dagster_home = tmp / "dagster"
    dagster_home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    broker = f"redis://127.0.0.1:6379/{random.randint(1, 15)}"  # a database of its own: no other test's tasks
    with local_workers(2, dagster_home, broker, tmp) as workers:
        yield Workers(workers, dagster_home, broker)


@pytest.fixture(scope="module")
def built(tmp_path_factory, deid_key) -> Built:
    """The AP suite (49 tasks x 2 trials) built once for this module's tests."""
    tmp = tmp_path_factory.mktemp("celery_suite")
    spec = copy_suite(tmp / "suite")
    return Built(spec, tmp / "home", driver.build(spec, home=tmp / "home").version)


def _in_process(b: Built, agent: str, out: Path) -> Path:
    """The same agent's trials run in process (run_release, as the trials_job stage does) into out."""
    config = [a for a in load_spec(b.spec).agents if a.name == agent]
    run_release(Release(b.home / "releases" / SUITE / b.version), config, out, workers=1)
    return out


def test_trial_job_on_two_celery_workers_gives_the_in_process_scorecard(tmp_path, celery, built):
    spec, home, version = built.spec, built.home, built.version
    recon = dg.build_reconstructable_job("evalsuite_dagster.trials.celery", "job_for_spec",
                                         reconstructable_args=(str(spec), str(home)))
    names = celery.workers.ready().names
    with dg.DagsterInstance.from_config(str(celery.dagster_home)) as instance:
        result = dg.execute_job(recon, instance=instance,
                                run_config=celery_run_config(SUITE, version, AGENT, chunk_trials=26,
                                                             broker=celery.broker))
        assert result.success, [e.message for e in result.all_events if e.is_failure]
        ran_on = _celery_workers_of(instance, result.run_id)
        key = str(dg.MultiPartitionKey({"version": version, "agent": AGENT}))
        trace_event = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey([SUITE, "trial_traces"]), asset_partitions=[key]),
            limit=1).records

    chunk_steps = sorted(k for k in ran_on if k.startswith(f"{SUITE}__run_chunk["))
    # 98 trials in chunks of 26 (whole tasks)
    assert chunk_steps == [f"{SUITE}__run_chunk[chunk_{i}]" for i in range(4)]
    assert {w.split("@")[0] for w in ran_on.values()} == set(names)  # both workers ran steps, nothing else did
    assert trace_event, "the trial_traces partition of the run is not recorded as materialized"
    logs = [line for n in names for line in (celery.workers.log_dir / f"{n}.log").read_text().splitlines()]
    assert not [line for line in logs if " - dagster - " in line and ("WARNING/" in line or " - DEBUG - " in line)]

    celery_dir = home / "runs" / SUITE / version / "agents" / AGENT
    in_process = _in_process(built, AGENT, tmp_path / "in_process")
    assert len(_trials(celery_dir)) == 98
    assert _trials(celery_dir) == _trials(in_process)
    card = (celery_dir / SCORECARD_JSON).read_text()
    assert card == (in_process / SCORECARD_JSON).read_text()
    assert json.loads(card)["agents"][0]["agent"] == AGENT


def test_the_job_resumes_a_run_folder_without_rerunning_recorded_trials(tmp_path, built):
    """A run folder holding 20 tasks' trials: only the other 29 tasks are planned, the recorded lines stay as they
    were, and the scorecard is the in-process one. The graph runs in process here (execute_in_process): the
    chunking and merging are the same whichever executor runs the steps."""
    expected = _in_process(built, "reference", tmp_path / "in_process")
    lines = (expected / TRACES).read_text().splitlines(keepends=True)
    run_dir = built.home / "runs" / SUITE / built.version / "agents" / "reference"
    run_dir.mkdir(parents=True)
    (run_dir / TRACES).write_text("".join(lines[:40]))  # 20 tasks x 2 trials, as a killed run leaves them
    job = job_for_spec(str(built.spec), str(built.home))
    config = celery_run_config(SUITE, built.version, "reference", chunk_trials=20)
    del config["execution"]  # execute_in_process runs every step in this process, whatever the job's executor
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(run_config=config, instance=instance)
    steps = {e.step_key for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_SUCCESS}
    chunks = sorted(k for k in steps if k.startswith(f"{SUITE}__run_chunk["))
    assert chunks == [f"{SUITE}__run_chunk[chunk_{i}]" for i in range(3)]
    assert (run_dir / TRACES).read_text().splitlines(keepends=True)[:40] == lines[:40]
    assert _trials(run_dir) == _trials(expected)
    assert (run_dir / SCORECARD_JSON).read_text() == (expected / SCORECARD_JSON).read_text()


def test_the_run_config_on_the_docs_page_is_one_the_job_accepts(tmp_path):
    """The Celery run config of the scaling docs, copied into the launchpad as it stands, names the job's real op
    (`<suite>__plan_chunks`) and its fields: Dagster's own validation of the run config accepts it."""
    (block,) = code_blocks(section(page("scaling/several-machines.md"), "## Trials on Celery"), "yaml")
    job = celery_trials_job(build_suite_graph(ROOT / "suites" / f"{SUITE}.yaml"), tmp_path / "home")
    config = yaml.safe_load(block)
    dg.validate_run_config(job, config)  # raises DagsterInvalidConfigError naming the op or field it does not know
    assert config["ops"] == celery_run_config(SUITE, "r86254e4f44dc", "reference")["ops"]


MODEL_AGENT = "openai:local"


TIMING = {"seconds", "waits"}  # wall times, and whether a request queued for a connection: the machine's, not the run's


def _without_timing(value):
    """A record's JSON without its wall times (the trial's, each call's, each model call's) and waits."""
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def _records(out_dir: Path) -> dict[tuple, dict]:
    return {r.key: _without_timing(r.model_dump(mode="json")) for r in read_traces(out_dir / TRACES).records}


def _chunk_seconds(instance: dg.DagsterInstance, run_id: str) -> dict[str, float]:
    """step key -> the seconds its trials ran on the engine (the step's output metadata)."""
    return {rec.step_key: rec.dagster_event.step_output_data.metadata["trial seconds"].value
            for rec in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_OUTPUT)
            if rec.step_key.startswith(f"{SUITE}__run_chunk[")}


def test_a_model_agent_on_celery_workers_records_what_the_in_process_run_records(tmp_path, celery, built):
    """An openai agent against a deterministic endpoint (the local model: each task's reference solution, one call
    a request, 50 ms latency), 8 trials in flight in each worker's chunks: the Celery job's records are the
    in-process run's (outcomes, traces, tokens, trial seeds, identity hashes; wall times and waits aside)."""
    rel = Release(built.home / "releases" / SUITE / built.version)
    tasks = rel.tasks()
    n = sum(t.trial_protocol.trials for t in tasks)
    with serve_local_model(tasks, max_requests=3 * 5 * n, median_ms=50) as url:
        raw = yaml.safe_load(built.spec.read_text())
        raw["agents"] = [{"name": MODEL_AGENT, "kind": "openai", "model": "local", "base_url": url}]
        spec = built.spec.with_name(f"{SUITE}_model.yaml")  # beside the module's spec: same sources, same home
        spec.write_text(yaml.safe_dump(raw, sort_keys=False))
        recon = dg.build_reconstructable_job("evalsuite_dagster.trials.celery", "job_for_spec",
                                             reconstructable_args=(str(spec), str(built.home)))
        celery.workers.ready()
        with dg.DagsterInstance.from_config(str(celery.dagster_home)) as instance:
            result = dg.execute_job(recon, instance=instance, run_config=celery_run_config(
                SUITE, built.version, MODEL_AGENT, chunk_trials=26, broker=celery.broker, max_in_flight=8))
            assert result.success, [e.message for e in result.all_events if e.is_failure]
            engine_seconds = _chunk_seconds(instance, result.run_id)
            ran_on = _celery_workers_of(instance, result.run_id)
        in_process = tmp_path / "in_process"
        run_release(rel, load_spec(spec).agents, in_process, workers=1, engine=EngineSettings(max_in_flight=8))

    celery_dir = built.home / "runs" / SUITE / built.version / "agents" / MODEL_AGENT
    on_celery, here = _records(celery_dir), _records(in_process)
    assert len(on_celery) == n == 98
    assert on_celery == here
    assert (celery_dir / SCORECARD_JSON).read_text() == (in_process / SCORECARD_JSON).read_text()
    assert {w.split("@")[0] for w in ran_on.values()} == set(celery.workers.names)
    assert {r["outcome"] for r in here.values()} == {"pass"}
    assert all(len(r["usage"]["model_calls"]) == len(r["trace"]) + 1 for r in here.values())
    # trials overlapped in each worker: summed, a chunk's trials took over twice the time the chunk took
    by_task = {}
    for r in read_traces(celery_dir / TRACES).records:
        by_task[r.task_id] = by_task.get(r.task_id, 0.0) + r.seconds
    assert len(engine_seconds) == 4
    for chunk in plan_chunks(tasks, MODEL_AGENT, 26):
        summed = sum(by_task[t] for t in chunk.task_ids)
        assert summed > 2 * engine_seconds[f"{SUITE}__run_chunk[chunk_{chunk.index}]"], chunk.index
