"""The Dagster instance on PostgreSQL (deploy/dagster_postgres.yaml): a build run and trial runs stored in a fresh
database."""
from __future__ import annotations

import shutil
import uuid

import dagster as dg
import dagster_driver as driver
import pytest
from pipeline_support import service_or_skip
from suite_support import ROOT, SUITE, copy_suite

from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.automation import release_trials
from evalsuite_dagster.suite.graph import build_suite_graph

PG = ("127.0.0.1", 5432)  # trust auth, user postgres (this machine and CI)


def _admin(sql: str) -> None:
    import psycopg2  # installed with dagster-postgres

    conn = psycopg2.connect(host=PG[0], port=PG[1], user="postgres", dbname="postgres")
    conn.autocommit = True  # CREATE/DROP DATABASE cannot run inside a transaction
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


@pytest.fixture
def pg_url():
    """A database of this test's own, dropped afterwards whatever happened."""
    service_or_skip(PG, "PostgreSQL", "the PostgreSQL instance test needs one")
    name = f"evalsuite_test_{uuid.uuid4().hex[:12]}"
    _admin(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql+psycopg2://postgres@{PG[0]}:{PG[1]}/{name}"
    finally:
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _query(url: str, sql: str) -> list[tuple]:
    import psycopg2

    conn = psycopg2.connect(host=PG[0], port=PG[1], user="postgres", dbname=url.rsplit("/", 1)[1])
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()
    finally:
        conn.close()


def test_build_and_trial_runs_are_stored_in_postgres(tmp_path, pg_url, monkeypatch, deid_key):
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

    monkeypatch.setenv("EVALSUITE_DAGSTER_PG_URL", pg_url)
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    shutil.copyfile(ROOT / "deploy" / "dagster_postgres.yaml", dagster_home / "dagster.yaml")
    spec = copy_suite(tmp_path / "suite")
    graph = build_suite_graph(spec)
    defs = build_defs([graph], home=tmp_path / "home")
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
        built = driver.build(defs, graph, instance)
        assert built.success, built.blocked
        asked = release_trials(graph, instance)  # what the new-release sensor asks for: partitions, a run per agent
        for add in asked.dynamic_partitions_requests:
            instance.add_dynamic_partitions(add.partitions_def_name, list(add.partition_keys))
        first = asked.run_requests[0]  # one trial run is enough to show trial runs are stored
        trial = driver.execute(defs, graph.trials_job, instance, partition_key=first.partition_key, tags=first.tags)
        assert trial.success

    # What a reopened instance (another process, another machine) reads back, straight from the database.
    runs = _query(pg_url, "SELECT pipeline_name, status FROM runs ORDER BY create_timestamp")
    assert runs[0] == (graph.build_job, "SUCCESS")
    assert runs[1:] == [(graph.trials_job, "SUCCESS")]
    release = _query(pg_url, "SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
                             f"AND asset_key = '{dg.AssetKey([SUITE, 'suite_release']).to_string()}'")
    assert release == [(1,)]
    partitions = _query(pg_url, "SELECT partitions_def_name, partition FROM dynamic_partitions ORDER BY 1, 2")
    assert (f"{SUITE}__versions", built.version) in partitions
    assert {p for d, p in partitions if d == f"{SUITE}__agents"} == {a.name for a in graph.spec.agents}
    tables = {t for (t,) in _query(pg_url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert {"runs", "event_logs", "instigators", "job_ticks"} <= tables  # schedule/sensor state lives there too
    with dg.DagsterInstance.from_config(str(dagster_home)) as again:
        done = again.get_materialized_partitions(graph.key("trial_traces"))
        assert {str(k) for k in done} == {str(first.partition_key)}
