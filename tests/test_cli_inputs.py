"""Every command answers bad input with exit 2 and one line naming the file (and the key, field or line);
never a traceback, and nothing written. Run in process with typer's CliRunner, plus two real processes."""
from __future__ import annotations

import codecs
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from input_support import fuzz, one_line_naming
from suite_support import DEMO_KEY, ROOT, copy_suite
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.scoring.runlog import RUN_JSON, TASKS

RUNNER = CliRunner()
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def refused(args: list[str], file: Path) -> str:
    """The command exits 2 with exactly one line on stderr naming `file`; returns that line."""
    result = RUNNER.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return one_line_naming(lines[0], file)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return copy_suite(tmp_path_factory.mktemp("template") / "suite")


@pytest.fixture
def suite(template, tmp_path):
    shutil.copytree(template.parent, tmp_path / "suite")
    return tmp_path / "suite" / template.name


def edit(spec: Path, change) -> Path:
    raw = yaml.safe_load(spec.read_text())
    change(raw)
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def aux(name: str, body: str | bytes):
    def spoil(spec: Path) -> Path:
        path = spec.parent / "ap_exceptions" / name
        path.write_bytes(body if isinstance(body, bytes) else body.encode())
        return path
    return spoil


def source(url: str):
    def spoil(spec: Path) -> Path:
        return edit(spec, lambda raw: raw["sources"]["tables"].__setitem__(
            "payments", {"url": url, "query": "select * from payments"}))
    return spoil


def _expires(day: str):
    def spoil(spec: Path) -> Path:
        rights = spec.parent / "ap_exceptions" / "rights.yaml"
        rights.write_text(rights.read_text().replace("expires: 2027-12-31", f"expires: {day}"))
        return rights
    return spoil


def _binary(spec: Path) -> Path:
    spec.write_bytes(b"\x00\xff\x89PNG")
    return spec


def _not_a_policy(spec: Path) -> Path:
    edit(spec, lambda raw: raw["policies"].__setitem__(0, "ap_exceptions/rights.yaml"))
    return spec.parent / "ap_exceptions" / "rights.yaml"


def _utf16(spec: Path) -> Path:
    spec.write_bytes(codecs.BOM_UTF16_LE + spec.read_text().encode("utf-16-le"))
    return spec


def _drop_table(spec: Path) -> Path:
    edit(spec, lambda raw: raw["sources"]["tables"].pop("invoices"))
    return spec.parent / "ap_exceptions" / "quality.yaml"


def _extra_column(spec: Path) -> Path:
    csv = spec.parent / "ap_exceptions" / "source" / "vendor_master.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([lines[0] + ",extra"] + [line + ",x" for line in lines[1:]]) + "\n")
    return csv


def _twice(name: str, line: str):
    def spoil(spec: Path) -> Path:
        path = spec if name == "spec" else spec.parent / "ap_exceptions" / name
        path.write_text(path.read_text() + line)
        return path
    return spoil


def _set(*keys, value):
    def spoil(spec: Path) -> Path:
        def change(raw):
            node = raw
            for k in keys[:-1]:
                node = node[k]
            node[keys[-1]] = value
        return edit(spec, change)
    return spoil


def _no_expiry(spec: Path) -> Path:
    rights = spec.parent / "ap_exceptions" / "rights.yaml"
    rights.write_text(rights.read_text().replace("expires: 2027-12-31\n", ""))
    return rights


# The list: each class of bad suite input, the file its line must name, and what the line says.
SPECS = {
    "binary spec": (_binary, "not UTF-8 text"),
    "UTF-16 spec": (_utf16, "not UTF-8 text (UTF-16 byte-order mark)"),
    "calendar-invalid date": (_expires("2027-02-30"), "day is out of range for month"),
    "sqlite URL to a missing file": (source("sqlite:///no/such.db"), "sources.tables.payments.url: file not found"),
    "unparseable URL": (source("::not a url"), "sources.tables.payments: url: not a database URL"),
    "missing driver": (source("postgresql://u@localhost/db"), "the postgresql driver is not installed"),
    "unknown domain": (lambda s: edit(s, lambda raw: raw.__setitem__("domain", "payroll")), "domain: unknown domain"),
    "quality not a mapping": (aux("quality.yaml", "- a\n- b\n"), "<top level>: expected a mapping, got list"),
    "quality YAML bomb": (aux("quality.yaml", BOMB), "through aliases"),
    "version_prefix with /": (lambda s: edit(s, lambda raw: raw.__setitem__("version_prefix", "../../x")),
                              "version_prefix: String should match pattern"),
    "table the quality file still names": (_drop_table, "invoices: table 'invoices' is not among the tables"),
    "misspelt key": (lambda s: edit(s, lambda raw: raw["sources"].__setitem__("tabels", raw["sources"].pop("tables"))),
                     "sources.tabels: unknown key"),
    "rights binary": (aux("rights.yaml", b"\xff\xfe\x00\x01"), "not UTF-8 text"),
    "deid wrong types": (aux("deid.yaml", "tables: {vendor_master: {columns: {email: {rule: 7}}}}\n"),
                         "tables.vendor_master.columns.email"),
    "deid bomb": (aux("deid.yaml", BOMB), "through aliases"),
    "a policy that is none": (_not_a_policy, "front matter (doc, version, effective_from) missing"),
    # issue 25: each of these got as far as a stage (or all the way to a release) before
    "extra CSV column": (_extra_column, "sources.tables.vendor_master: column(s) ['extra'] are not columns of table "
                                        "vendor_master in domain ap_exceptions (its columns: vendor_id, name"),
    "miscased needed use": (_set("needed_uses", value=["Build_Environments"]), "needed_uses: 'Build_Environments' "
                            "is not a use; the uses are build_environments, derive_tasks, redistribute, train"),
    "padded needed use": (_set("needed_uses", value=[" derive_tasks"]), "needed_uses: ' derive_tasks' is not a use"),
    "unknown table": (_set("sources", "tables", "bogus", value={"path": "ap_exceptions/source/payments.csv"}),
                      "sources.tables.bogus: not a table of domain ap_exceptions (its tables: approval_requests"),
    "duplicate key in the spec": (_twice("spec", "name: other\n"), "malformed YAML: duplicate key 'name' (first on "
                                                                   "line 1)"),
    "duplicate key in the rights": (_twice("rights.yaml", "licensor: someone else\n"), "duplicate key 'licensor'"),
    "duplicate key in the deid rules": (_twice("deid.yaml", "key_env: OTHER\n"), "duplicate key 'key_env'"),
    "max_steps 10**18": (_set("trial_protocol", "max_steps", value=10**18),
                         "trial_protocol.max_steps: Input should be less than or equal to 1000"),
    "a million trials": (_set("trial_protocol", "trials", value=10**6), "trial_protocol.trials: Input should be less"),
    "schedule every tuesday": (_set("schedule", value="every tuesday"),
                               "schedule: 'every tuesday' is not a cron string: expected 5 fields"),
    "schedule on day 8 of the week": (_set("schedule", value="0 6 * * 8"), "day of week '8': 8 is outside 0-7"),
    "splits -1.0 and 2.0": (_set("derivation", "splits", value={"train": -1.0, "test": 2.0}),
                            "derivation.splits.train: Input should be greater than or equal to 0; "
                            "derivation.splits.test: Input should be less than or equal to 1"),
    "splits summing to 1.1": (_set("derivation", "splits", value={"train": 0.5, "test": 0.6}),
                              "derivation.splits: the split fractions must sum to 1, not 1.1"),
    "a split no task can be in": (_set("derivation", "splits", value={"train": 0.5, "tset": 0.5}),
                                  "derivation.splits.tset.[key]: Input should be 'train', 'dev', 'test' or 'held_out'"),
    "licence with no expiry stated": (_no_expiry, "rights.yaml: expires: Field required"),
}


def _two_misspelt_keys(raw: dict) -> None:
    raw["sources"]["tabels"] = raw["sources"].pop("tables")
    raw["agentz"] = raw.pop("agents", [])


def test_a_spec_with_two_unknown_keys_names_both_in_its_one_line(suite, tmp_path):
    line = refused(["build", edit(suite, _two_misspelt_keys), "--home", tmp_path / "home"], suite)
    assert "sources.tabels: unknown key" in line and "agentz: unknown key" in line
    assert "more)" not in line


@pytest.mark.parametrize("body", ["", "# nothing here yet\n", "---\n"])
def test_an_empty_spec_is_called_empty_not_a_type_name(tmp_path, body):
    spec = tmp_path / "suite.yaml"
    spec.write_text(body)
    line = refused(["build", spec, "--home", tmp_path / "home"], spec)
    assert line == f"error: {spec}: the file holds nothing (empty, or only comments); expected a mapping of keys"
    assert "NoneType" not in line


@pytest.mark.parametrize("case", sorted(SPECS))
def test_build_answers_each_bad_suite_input_in_one_line_and_writes_nothing(suite, tmp_path, monkeypatch, case):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    spoil, says = SPECS[case]
    blamed = spoil(suite)
    home = tmp_path / "home"
    line = refused(["build", suite, "--home", home], blamed)
    assert says in line
    assert not list(home.glob("suites/*/*.json")) and not (home / "releases").exists()  # no stage ran
    assert not (home / "suites").exists()  # not even the suite's lock file: the inputs are checked before it


@pytest.mark.parametrize("key", ["k3y", "q" * 15])
def test_a_short_deid_key_is_refused_before_the_raw_records_are_copied(suite, tmp_path, monkeypatch, key):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", key)
    home = tmp_path / "home"
    line = refused(["build", suite, "--home", home], "EVALSUITE_DEID_KEY")
    assert line == "error: EVALSUITE_DEID_KEY: de-identification key too short: need at least 16 bytes"
    assert key not in line
    assert [p.name for p in home.rglob("*") if p.is_file()] in ([], ["build.lock"])  # no rights.json, no seed


def test_a_licence_stated_perpetual_builds_and_its_review_says_so(suite, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    rights = suite.parent / "ap_exceptions" / "rights.yaml"
    rights.write_text(rights.read_text().replace("expires: 2027-12-31", "expires: null"))
    home = tmp_path / "home"
    built = RUNNER.invoke(app, ["build", str(suite), "--home", str(home)])
    assert built.exit_code == 0, built.output
    decision = json.loads(next(home.glob("suites/*/rights.json")).read_text())
    assert decision["status"] == "cleared" and decision["expires"] == {"erp_ap_export": None}


def test_audit_answers_like_build(suite, tmp_path):
    _utf16(suite)
    refused(["audit", suite, "--out", tmp_path / "audit"], suite)
    assert not (tmp_path / "audit").exists()


@fuzz(25)
@given(data=st.binary(max_size=200))
def test_build_on_any_bytes_is_one_line_naming_the_spec(tmp_path, data):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(data)
    refused(["build", spec, "--home", tmp_path / "home"], spec)


# ---------------------------------------------------------------- task validate

@fuzz(40)
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".jsonl", ".json"]))
def test_task_validate_on_any_bytes_exits_2_with_lines_naming_the_file(tmp_path, data, suffix):
    path = tmp_path / f"tasks{suffix}"
    path.write_bytes(data)
    result = RUNNER.invoke(app, ["task", "validate", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2
    for line in result.stdout.strip().splitlines():
        one_line_naming(line, path)


def _task(**changes) -> bytes:
    """The first bundled tau2 task, changed; JSON escapes any lone surrogate as \\udXXX, as a hostile file would."""
    task = json.loads((ROOT / "suites" / "tau2_retail" / "tasks.jsonl").read_text().splitlines()[0])
    return (json.dumps({**task, **changes}) + "\n").encode()


@pytest.mark.parametrize("body, says", [
    ("café\n".encode("latin-1"), ":1: not UTF-8 text (byte 3: invalid continuation byte); save it as UTF-8"),
    (b"{}\n\n\xff", ":3: not UTF-8 text (byte 4: invalid start byte); save it as UTF-8"),
    (codecs.BOM_UTF16_LE + b"{}", ":1: not UTF-8 text (UTF-16 byte-order mark); save it as UTF-8"),
    (b"[" * 5000 + b"]" * 5000, ":1: invalid JSON: nested deeper than 100 levels"),
    (b"", ": no task records"),
    (_task(task_id="INV\ud800"), ":1: task_id: not Unicode text (a lone UTF-16 surrogate escape such as \\ud800); "
                                  "write the character itself or its surrogate pair"),
    (_task(category="\udfff"), ":1: category: not Unicode text"),
])
def test_task_validate_names_the_encoding_the_depth_or_the_emptiness(tmp_path, body, says):
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(body)
    result = RUNNER.invoke(app, ["task", "validate", str(path)])
    assert result.exit_code == 2 and result.stdout.startswith(f"{path}{says}") and result.stdout.count("\n") == 1


@pytest.mark.parametrize("solution", ["solutions/t1.json", ""])
def test_task_validate_refuses_a_reference_solution_given_as_a_path(tmp_path, solution):
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(_task(reference_solution=solution))
    result = RUNNER.invoke(app, ["task", "validate", str(path)])
    assert result.exit_code == 2
    assert result.stdout.startswith(f"{path}:") and "reference_solution: Input should be a valid list" in result.stdout


# ---------------------------------------------------------------- run, score, export on broken folders

MANIFESTS = {"not JSON": b'{"suite": 1', "binary": b"\xff\xfe\x00", "wrong shape": b'{"suite": "x"}',
             "a list": b"[]"}


@pytest.mark.parametrize("body", sorted(MANIFESTS))
def test_run_and_export_refuse_a_broken_release_folder(tmp_path, body):
    release = tmp_path / "release"
    release.mkdir()
    (release / "manifest.json").write_bytes(MANIFESTS[body])
    refused(["run", release, "--agent", "noop", "--out", tmp_path / "run", "--no-progress"], release / "manifest.json")
    refused(["export", release, "--purpose", "review", "--out", tmp_path / "x.jsonl"], release / "manifest.json")
    assert not (tmp_path / "run").exists() and not (tmp_path / "x.jsonl").exists()


def test_run_refuses_a_folder_that_is_no_release(tmp_path):
    line = refused(["run", tmp_path, "--agent", "noop", "--out", tmp_path / "run"], tmp_path)
    assert "not a release (no manifest.json)" in line


META = {"release": "/r", "identity": {}, "run_seed": 0, "resamples": 10, "bootstrap_seed": 0,
        "acceptance": {}, "plan": {"noop": None}}


@pytest.mark.parametrize("name, body, says", [
    (RUN_JSON, b"{", f"{RUN_JSON}:1: invalid JSON"),
    (RUN_JSON, b"\x00\xff", f"{RUN_JSON}:1: not UTF-8 text"),
    (RUN_JSON, json.dumps({**META, "plan": 3}).encode(), f"{RUN_JSON}: plan: Input should be a valid dictionary"),
    (RUN_JSON, json.dumps({k: v for k, v in META.items() if k != "plan"}).encode(),
     f"{RUN_JSON}: plan: Field required"),
    (RUN_JSON, json.dumps({**META, "schema_version": 2}).encode(),
     f"{RUN_JSON}: schema_version: written by a newer evalsuite (version 2); this one reads up to 1"),
    (TASKS, b"\xff", f"{TASKS}:1: not UTF-8 text"),
])
def test_score_refuses_a_broken_run_folder(tmp_path, name, body, says):
    run = tmp_path / "run"
    run.mkdir()
    (run / RUN_JSON).write_text(json.dumps(META))
    (run / name).write_bytes(body)
    assert says in refused(["score", run], run / name)


def test_score_refuses_a_missing_run_folder(tmp_path):
    assert "not a run folder" in refused(["score", tmp_path / "nowhere"], tmp_path / "nowhere")


# ---------------------------------------------------------------- import

TAU2 = ROOT / "third_party" / "tau2_retail"


def test_import_refuses_a_missing_folder_a_missing_file_and_a_tampered_one(tmp_path):
    out = tmp_path / "out"
    refused(["import", "tau2-retail", tmp_path / "nowhere", "--out", out], tmp_path / "nowhere")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("db.json", "tasks.json", "split_tasks.json", "LICENSE"):
        shutil.copyfile(TAU2 / name, src / name)
    assert "file not found" in refused(["import", "tau2-retail", src, "--out", out], src / "policy.md")
    (src / "policy.md").write_bytes((TAU2 / "policy.md").read_bytes() + b"\n\xff")
    assert "differ from the pinned tau2 snapshot: ['policy.md']" in refused(
        ["import", "tau2-retail", src, "--out", out], src)
    assert not out.exists()
    refused(["tau2-retail", "export-state", tmp_path / "nowhere", "--task", "1", "--out", tmp_path / "x.json"],
            tmp_path / "nowhere")


# ---------------------------------------------------------------- as a real process

@pytest.mark.parametrize("args", [["build", "{spec}"], ["task", "validate", "{tasks}"]])
def test_a_real_process_prints_one_line_and_no_traceback(tmp_path, args):
    spec, tasks = tmp_path / "spec.yaml", tmp_path / "tasks.jsonl"
    spec.write_bytes(codecs.BOM_UTF16_LE + "name: x\n".encode("utf-16-le"))
    tasks.write_bytes(b"[" * 100_000)
    argv = [a.format(spec=spec, tasks=tasks) for a in args]
    run = subprocess.run([sys.executable, "-m", "evalsuite.cli", *argv], capture_output=True, text=True, timeout=120)
    out = run.stderr if args[0] == "build" else run.stdout
    assert run.returncode == 2 and "Traceback" not in run.stderr + run.stdout
    assert len(out.strip().splitlines()) == 1
    one_line_naming(out.strip(), spec if args[0] == "build" else tasks)


def test_a_sql_source_with_a_column_the_domain_lacks_is_refused_before_any_stage(suite, tmp_path, monkeypatch):
    import sqlite3

    import pandas as pd

    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    db = tmp_path / "erp.db"
    payments = pd.read_csv(suite.parent / "ap_exceptions" / "source" / "payments.csv", dtype=str).assign(extra="x")
    with sqlite3.connect(db) as conn:
        payments.to_sql("payments", conn, index=False)
    source(f"sqlite:///{db}")(suite)
    home = tmp_path / "home"
    line = refused(["build", suite, "--home", home], suite)
    assert "sources.tables.payments: column(s) ['extra'] are not columns of table payments" in line
    assert [p.name for p in home.rglob("*") if p.is_file()] in ([], ["build.lock"])
