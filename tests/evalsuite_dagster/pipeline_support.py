"""Helpers for the Dagster pipeline tests: instances, and a suite built through Dagster."""
from __future__ import annotations

import os
import shutil
import socket
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
from browser_support import browser_page
from suite_support import ROOT, SUITE
from webserver_support import get

from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.graph import SuiteGraph, build_suite_graph


@dataclass
class Suite:
    """A suite copy wired into its own Definitions, home folder and Dagster instance."""

    spec: Path
    home: Path
    graph: SuiteGraph
    defs: dg.Definitions
    instance: dg.DagsterInstance

    def releases(self) -> list[str]:
        folder = self.home / "releases" / SUITE
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []

    def reload(self) -> Suite:
        """Definitions rebuilt from the (edited) spec, on the same home and instance."""
        graph = build_suite_graph(self.spec)
        return Suite(self.spec, self.home, graph, build_defs([graph], home=self.home), self.instance)


@contextmanager
def suite_instance(tmp: Path, spec: Path):
    (tmp / "dagster").mkdir(parents=True, exist_ok=True)
    with dg.instance_for_test(temp_dir=str(tmp / "dagster")) as instance:
        graph = build_suite_graph(spec)
        yield Suite(spec, tmp / "home", graph, build_defs([graph], home=tmp / "home"), instance)


def open_project_instance(dagster_home: Path) -> dg.DagsterInstance:
    """An instance configured by the project's own dagster.yaml, as `make demo` and `make ui` use it."""
    dagster_home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    return dg.DagsterInstance.from_config(str(dagster_home))


def latest(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None = None):
    """The latest materialization of an asset (or of one partition)."""
    if partition is None:
        event = instance.get_latest_materialization_event(key)
        return event.asset_materialization if event else None
    records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]),
                                              limit=1).records
    return records[0].asset_materialization if records else None


def service_or_skip(addr: tuple[str, int], what: str, needed_by: str) -> None:
    """Skip unless a service answers at addr; under CI, which runs it, its absence is a failure, not a skip."""
    try:
        socket.create_connection(addr, timeout=1).close()
    except OSError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no {what} answers on {addr[0]}:{addr[1]} ({exc}); {needed_by}")


LATEST = """query ($keys: [AssetKeyInput!]!) { assetsLatestInfo(assetKeys: $keys) {
    assetKey { path } latestMaterialization { runId } latestRun { id status tags { key value } } } }"""


def held_back_view(base: str, assets: list[str], reason: str) -> tuple[dict, str]:
    """What a person sees of a build held back, on a served webserver: each asset's latest run and
    materialization (GraphQL), and the text of derived_tasks' page once it says never materialized and `reason`."""
    keys = [{"path": [SUITE, a]} for a in assets]
    latest = get(f"{base}/graphql", {"query": LATEST, "variables": {"keys": keys}})["data"]["assetsLatestInfo"]
    with browser_page() as page:
        page.goto(f"{base}/assets/{SUITE}/derived_tasks", wait_until="domcontentloaded")
        page.get_by_text("Never materialized").first.wait_for(timeout=60_000)
        page.get_by_text(reason).first.wait_for(timeout=60_000)
        text = page.inner_text("body")
    return {i["assetKey"]["path"][1]: i for i in latest}, text


def load_bundled() -> dg.Definitions:
    """The bundled suites' code location as workspace.yaml loads it: the Dagster project in assets/."""
    from evalsuite_dagster.definitions import defs

    return defs()
