"""Fixtures of the pipeline tests: real materializations on real (temporary) Dagster instances."""
from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass

import dagster_driver as driver
import pytest
from pipeline_support import Suite, open_project_instance
from suite_support import DEMO_KEY, copy_suite

from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.graph import build_suite_graph


def pytest_configure(config):
    # Deliberate uses of Dagster APIs marked beta (observable_source_asset, MultiToSingleDimensionPartitionMapping)
    # and a deprecation inside Dagster's own source-asset code: noise in every test's warning summary.
    config.addinivalue_line("filterwarnings", "ignore::dagster.BetaWarning")
    config.addinivalue_line("filterwarnings", "ignore:Property `OpDefinition.version` is deprecated:DeprecationWarning")


@pytest.fixture(scope="session", autouse=True)
def deid_key():
    """The published demo key (as `make demo` uses): the expected outcomes below were checked with it."""
    old = os.environ.get("EVALSUITE_DEID_KEY")
    os.environ["EVALSUITE_DEID_KEY"] = DEMO_KEY
    yield DEMO_KEY
    if old is None:
        os.environ.pop("EVALSUITE_DEID_KEY", None)
    else:
        os.environ["EVALSUITE_DEID_KEY"] = old


@dataclass
class Built:
    suite: Suite
    dagster_home: object
    first: driver.BuildOutcome
    second: driver.BuildOutcome
    trial_partitions: list[str]


@pytest.fixture(scope="session")
def built(tmp_path_factory, worker_id, deid_key) -> Built:
    """The clean suite built, rebuilt with unchanged inputs, run and scored, on a project-configured instance.

    Built once per test session: xdist workers share it through the session's base temp folder, the
    first to take the lock builds it, the others open the same instance (they only read it).
    """
    base = tmp_path_factory.getbasetemp()
    tmp = (base.parent if worker_id != "master" else base) / "built_suite"
    tmp.mkdir(exist_ok=True)
    with open(tmp / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        spec = tmp / "suite" / "ap_exceptions.yaml"
        if not (tmp / "outcomes.json").is_file():
            spec = copy_suite(tmp / "suite")
            _build(tmp, spec)
        fcntl.flock(lock, fcntl.LOCK_UN)
    outcomes = json.loads((tmp / "outcomes.json").read_text())
    graph = build_suite_graph(spec)
    instance = open_project_instance(tmp / "dagster")
    suite = Suite(spec, tmp / "home", graph, build_defs([graph], home=tmp / "home"), instance)
    yield Built(suite, tmp / "dagster", _outcome(outcomes["first"]), _outcome(outcomes["second"]), outcomes["trials"])
    instance.dispose()


def _build(tmp, spec) -> None:
    graph = build_suite_graph(spec)
    defs = build_defs([graph], home=tmp / "home")
    with open_project_instance(tmp / "dagster") as instance:
        first = driver.build(defs, graph, instance)
        assert first.success, first.blocked
        trials = driver.run_trials(defs, graph, instance)
        driver.score(defs, graph, instance, first.version)
        second = driver.build(defs, graph, instance)
    body = {"first": asdict(first), "second": asdict(second), "trials": trials}
    (tmp / "outcomes.json").write_text(json.dumps(body))


def _outcome(raw: dict) -> driver.BuildOutcome:
    raw["blocked"] = [tuple(b) for b in raw["blocked"]]
    raw["checks"] = {k: tuple(v) for k, v in raw["checks"].items()}
    return driver.BuildOutcome(**raw)
