"""Source tables from SQL and Parquet: read as delivered, and a failing query or unreadable file is one line."""
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from suite_support import SUITE, copy_suite

from evalsuite.deid.keys import DEMO_KEY
from evalsuite.sourcing.snapshot import read_sources
from evalsuite.sourcing.spec import SpecError, load_spec


def _payments_from(spec, source: dict) -> None:
    raw = yaml.safe_load(spec.read_text())
    raw["sources"]["tables"]["payments"] = source
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))


@pytest.fixture
def suite(tmp_path):
    spec = copy_suite(tmp_path)
    csv = spec.parent / SUITE / "source" / "payments.csv"
    db = tmp_path / "erp.db"
    with sqlite3.connect(db) as conn:
        pd.read_csv(csv, dtype=str).to_sql("payments", conn, index=False)
    return spec, csv, db


def test_a_sql_source_reads_the_same_rows_as_its_export(suite):
    spec, csv, db = suite
    _payments_from(spec, {"url": f"sqlite:///{db}", "query": "SELECT * FROM payments"})
    got = read_sources(load_spec(spec))["payments"]
    assert got.astype(str).values.tolist() == pd.read_csv(csv, dtype=str).values.tolist()


@pytest.mark.parametrize("query, cause", [
    ("SELECT * FROM payment", "no such table: payment"),
    ("SELEC * FROM payments", 'near "SELEC": syntax error'),
])
def test_a_failing_query_is_one_line_naming_the_spec_and_table(suite, query, cause):
    spec, _, db = suite
    _payments_from(spec, {"url": f"sqlite:///{db}", "query": query})
    with pytest.raises(SpecError) as err:
        read_sources(load_spec(spec))
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{spec}: sources.tables.payments: query on sqlite:///")
    assert line.endswith(f"failed: {cause}")


def test_a_file_that_is_not_parquet_is_one_line(suite):
    spec, _, _ = suite
    bad = spec.parent / SUITE / "source" / "payments.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file")
    _payments_from(spec, {"path": f"{SUITE}/source/payments.parquet"})
    with pytest.raises(SpecError, match=r"payments\.parquet: sources\.tables\.payments: not a readable Parquet file"):
        read_sources(load_spec(spec))


def test_the_build_command_answers_a_failing_query_with_exit_2_and_one_line(suite, monkeypatch):
    spec, _, db = suite
    _payments_from(spec, {"url": f"sqlite:///{db}", "query": "SELECT * FROM payment"})
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    done = subprocess.run([sys.executable, "-m", "evalsuite.cli", "build", str(spec)], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "no such table: payment" in done.stderr
