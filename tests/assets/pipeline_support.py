"""Helpers for the pipeline tests: copies of the bundled suite, instances, and a suite built through Dagster."""
from __future__ import annotations

import csv
import json
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import yaml

from assets.definitions import build_defs
from assets.suite_graph import SuiteGraph, build_suite_graph

ROOT = Path(__file__).resolve().parents[2]
SUITE = "ap_exceptions"
DEMO_KEY = "demo-key-not-a-secret-0001"


def copy_suite(dest: Path, reference_trials: int = 2, trials: int = 2, **acceptance) -> Path:
    """The bundled AP suite copied into dest (fewer trials, so tests stay fast); returns the spec path."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "suites" / SUITE, dest / SUITE)
    raw = yaml.safe_load((ROOT / "suites" / f"{SUITE}.yaml").read_text())
    raw["policies"] = [str((ROOT / "suites" / p).resolve()) for p in raw["policies"]]
    raw["acceptance"] = {**raw["acceptance"], "reference_trials": reference_trials, **acceptance}
    raw["trial_protocol"]["trials"] = trials
    spec = dest / f"{SUITE}.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def edit_spec(spec: Path, **acceptance) -> None:
    raw = yaml.safe_load(spec.read_text())
    raw["acceptance"].update(acceptance)
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))


def rewrite_csv(path: Path, edit) -> None:
    """Apply edit(rows) to a CSV export in place, keeping its columns."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    fields = list(rows[0])
    edit(rows)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def corrupt_resolution(spec: Path) -> str:
    """Point the last action of the first resolved case at an invoice that does not exist; returns its case id."""
    source = spec.parent / SUITE / "source" / "resolved_cases.csv"
    hit = {}

    def edit(rows):
        actions = json.loads(rows[0]["resolution_actions"])
        actions[-1]["arguments"]["invoice_id"] = "INV-00000"
        rows[0]["resolution_actions"] = json.dumps(actions)
        hit["case"] = rows[0]["case_id"]

    rewrite_csv(source, edit)
    return hit["case"]


def leak_email(spec: Path) -> str:
    """Paste a vendor contact's email into purchase_orders.buyer, a column not declared free text."""
    src = spec.parent / SUITE / "source"
    with open(src / "vendor_master.csv", newline="") as fh:
        email = next(r["email"] for r in csv.DictReader(fh) if r["email"])

    def edit(rows):
        rows[0]["buyer"] = email

    rewrite_csv(src / "purchase_orders.csv", edit)
    return email


def expire_license(spec: Path) -> None:
    rights = spec.parent / SUITE / "rights.yaml"
    rights.write_text(rights.read_text().replace("expires: 2027-12-31", "expires: 2020-01-01"))


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
    old = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(dagster_home)  # dagster.yaml reads its storage folder from it
    try:
        return dg.DagsterInstance.from_config(str(dagster_home))
    finally:
        if old is None:
            del os.environ["DAGSTER_HOME"]
        else:
            os.environ["DAGSTER_HOME"] = old


def latest(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None = None):
    """The latest materialization of an asset (or of one partition)."""
    if partition is None:
        event = instance.get_latest_materialization_event(key)
        return event.asset_materialization if event else None
    records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]),
                                              limit=1).records
    return records[0].asset_materialization if records else None
