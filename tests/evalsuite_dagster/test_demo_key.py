"""The published demo key reaches only the bundled suites (`make demo`, `make ui` without EVALSUITE_SUITES) and only
when no key is set; any other build without a key stops before its raw records are copied, with one line naming
the variable."""
from __future__ import annotations

import os
import subprocess
import sys

import dagster_driver as driver
from pipeline_support import suite_instance
from suite_support import DEMO_KEY, ROOT, SUITE, copy_suite

from evalsuite_dagster.suite.graph import build_suite_graph
from evalsuite_dagster.suite.loading import SUITES
from examples import demo

MISSING = "de-identification key missing: set the environment variable EVALSUITE_DEID_KEY"


def make_dry_run(target: str, **env: str) -> str:
    """The commands `make TARGET` would run, with EVALSUITE_* variables only as given."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("EVALSUITE_") and k != "MAKEFLAGS"}
    run = subprocess.run(["make", "-n", "-s", target], cwd=ROOT, env=base | env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_make_ui_gives_the_demo_key_only_to_the_bundled_suites_when_no_key_is_set(tmp_path):
    assert f"EVALSUITE_DEID_KEY={DEMO_KEY} " in make_dry_run("ui")
    assert DEMO_KEY not in make_dry_run("ui", EVALSUITE_SUITES=str(tmp_path / "mine.yaml"))
    assert DEMO_KEY not in make_dry_run("ui", EVALSUITE_DEID_KEY="my-own-secret-0123456789")
    assert DEMO_KEY not in make_dry_run("demo")  # examples/demo.py decides, per suite


def test_demo_keys_a_bundled_suite_and_never_a_users_own(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALSUITE_DEID_KEY")
    demo._demo_key(build_suite_graph(copy_suite(tmp_path / "mine")))
    assert "EVALSUITE_DEID_KEY" not in os.environ
    demo._demo_key(build_suite_graph(SUITES / f"{SUITE}.yaml"))
    assert os.environ["EVALSUITE_DEID_KEY"] == DEMO_KEY
    monkeypatch.setenv("EVALSUITE_DEID_KEY", "my-own-secret-0123456789")
    demo._demo_key(build_suite_graph(SUITES / f"{SUITE}.yaml"))
    assert os.environ["EVALSUITE_DEID_KEY"] == "my-own-secret-0123456789"


def test_a_build_without_a_key_stops_before_the_seed_snapshot_in_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALSUITE_DEID_KEY")
    spec = copy_suite(tmp_path / "suite")
    with suite_instance(tmp_path, spec) as s:
        out = driver.build(s.defs, s.graph, s.instance, selection=["rights_review", "seed_snapshot",
                                                                    "deidentified_snapshot"])
    (step, reason), = out.blocked
    assert step.endswith("seed_snapshot") and MISSING in reason and "Traceback" not in reason
    run = subprocess.run([sys.executable, "-m", "evalsuite.cli", "build", str(spec), "--home", str(tmp_path / "cli")],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and MISSING in lines[0]
    assert not (tmp_path / "cli" / "releases").exists()


def test_an_extra_source_column_stops_the_first_asset_run_alone_before_it_writes(tmp_path):
    """`evalsuite build` checks the sources against the domain before any stage; an asset materialized on its own
    in Dagster starts at its stage, so the first stage's asset checks them too."""
    spec = copy_suite(tmp_path / "suite")
    csv = spec.parent / SUITE / "source" / "vendor_master.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([lines[0] + ",extra"] + [line + ",x" for line in lines[1:]]) + "\n")
    with suite_instance(tmp_path, spec) as s:
        out = driver.build(s.defs, s.graph, s.instance, selection=["rights_review"])
    (step, reason), = out.blocked
    assert step.endswith("rights_review") and "column(s) ['extra'] are not columns of table vendor_master" in reason
    assert "Traceback" not in reason and not out.materialized
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("rights.json"))
