"""Fuzz every command with bad input: count tracebacks and wrongly accepted inputs (both should be 0).

    .venv/bin/python bench/fuzz_inputs.py --tasks 2000 --specs 500 --recordings 150 --dossiers 400

Task files go through `evalsuite task validate`, suite specs (and every file a spec names) through
`evalsuite build`, recordings through `evalsuite import-run` onto a built AP release, in process (typer's
CliRunner); process dossiers through the two build steps that judge one (see fuzz_dossiers). Each generated
input belongs to a class that is either valid or known to be invalid; an input is answered well when it is
valid and accepted (exit 0), or refused with exit 2 and output whose every line names the file. Anything else
is counted: an exception (a traceback), an invalid input accepted, or a refusal in another shape.
"""
from __future__ import annotations

import argparse
import codecs
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from suite_support import copy_suite  # noqa: E402

from evalsuite.cli import app  # noqa: E402
from evalsuite.deid.keys import DEMO_KEY  # noqa: E402
from evalsuite.scoring.runlog import RUN_JSON, TASKS, TRACES  # noqa: E402

os.environ.setdefault("EVALSUITE_DEID_KEY", DEMO_KEY)

RUNNER = CliRunner()


def _tau2_tasks() -> list[dict]:
    lines = (ROOT / "suites" / "tau2_retail" / "tasks.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[:20]]


def _ap_tasks(workdir: Path) -> list[dict]:
    from evalsuite.domains.ap_exceptions.example import ap_example

    return [t.model_dump(mode="json") for t in ap_example(workdir / "ap").tasks if t.goal_state.assertions]


# ---------------------------------------------------------------- task files: class -> (bytes, suffix, valid)

def _lines(tasks: list[dict]) -> bytes:
    return "".join(json.dumps(t) + "\n" for t in tasks).encode()


def _money(task: dict, value) -> dict:
    task = json.loads(json.dumps(task))
    for a in task["goal_state"]["assertions"]:
        if a["table"] == "invoices":
            a["expect"]["total"] = value
            return task
    task["goal_state"]["assertions"][0] = {**task["goal_state"]["assertions"][0], "table": "invoices",
                                           "expect": {"total": value}}
    return task


def _call(task: dict, edit: Callable[[dict], None]) -> dict:
    task = json.loads(json.dumps(task))
    edit(task["reference_solution"][0]["arguments"])
    return task


def _deep(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def task_cases(ap: list[dict], tau2: list[dict]) -> dict[str, Callable[[random.Random], tuple[bytes, str, bool]]]:
    def good(rng):
        return rng.choice(ap), rng.choice([t for t in tau2 if t["reference_solution"]])

    def mutate(rng):
        task = json.loads(json.dumps(rng.choice(ap + tau2)))
        node, keys = task, []
        while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
            key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
            parent, keys = node, keys + [key]
            node = node[key]
        junk = rng.choice([None, "", 2**64, -1, 1.5, float("nan"), [], {}, "x" * 3, {"unknown": 1}, True])
        if keys:
            parent[keys[-1]] = junk
        return _lines([task]), ".jsonl", None  # no oracle: only the shape of the answer is checked

    return {
        "valid": lambda rng: (_lines(list({t["task_id"]: t for t in rng.sample(ap + tau2[:5], 3)}.values())),
                              ".jsonl", True),
        "valid_json_list": lambda rng: (json.dumps(list(good(rng))).encode(), ".json", True),
        "latin1": lambda rng: (json.dumps({**rng.choice(ap), "category": "café"}, ensure_ascii=False).encode("latin-1"),
                               ".jsonl", False),
        "utf16": lambda rng: (codecs.BOM_UTF16_LE + _lines([rng.choice(ap)]).decode().encode("utf-16-le"),
                              rng.choice([".jsonl", ".json"]), False),
        "binary": lambda rng: (bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))),
                               rng.choice([".jsonl", ".json"]), False),
        "deep_json": lambda rng: (_deep(rng.choice([120, 1000, 5000, 100_000])).encode(),
                                  rng.choice([".jsonl", ".json"]), False),
        "deep_args": lambda rng: (_lines([_call(rng.choice(ap), lambda a: a.update(
            invoice_id=json.loads(_deep(rng.choice([150, 900])))))]), ".jsonl", False),
        "empty": lambda rng: (rng.choice([b"", b"\n", b"  \n\n", b"[]"]), rng.choice([".jsonl", ".json"]), False),
        "duplicate_id": lambda rng: ((lambda t: _lines([t, t]))(rng.choice(ap)), ".jsonl", False),
        "unknown_tool_arg": lambda rng: (_lines([_call(rng.choice(tau2[:3] if rng.random() < .5 else ap),
                                                       lambda a: a.update(bogus_arg=1))]), ".jsonl", False),
        "missing_tool_arg": lambda rng: (_lines([_call(rng.choice([t for t in tau2 if t["reference_solution"]]),
                                                       lambda a: a.clear())]), ".jsonl", False),
        "money_nan": lambda rng: (_lines([_money(rng.choice(ap), rng.choice(["NaN", "nan", "Infinity", "sNaN"]))]),
                                  ".jsonl", False),
        "money_float": lambda rng: (_lines([_money(rng.choice(ap), rng.choice([1234.5678901234, 0.1, 12.5, 1e30]))]),
                                    ".jsonl", False),
        "money_places": lambda rng: (_lines([_money(rng.choice(ap), rng.choice(["12.345", "1e-9", "abc", ""]))]),
                                     ".jsonl", False),
        "big_int": lambda rng: (_lines([_big(rng.choice(ap), rng)]), ".jsonl", False),
        "empty_id": lambda rng: (_lines([{**rng.choice(ap), "task_id": rng.choice(["", " ", "\t"])}]), ".jsonl", False),
        "not_object": lambda rng: (rng.choice([b"1\n", b"\"x\"\n", b"[1, 2]\n", b"null\n"]), ".jsonl", False),
        "lone_surrogate": lambda rng: (_lines([_surrogate(rng.choice(ap + tau2[:5]), rng)]), ".jsonl", False),
        "solution_path": lambda rng: (_lines([{**rng.choice(ap), "reference_solution": rng.choice(
            ["solutions/t1.json", "", "[]"])}]), ".jsonl", False),
        "mutated": mutate,
    }


def _surrogate(task: dict, rng: random.Random) -> dict:
    """A lone UTF-16 surrogate (valid JSON escape, no Unicode character) in an id or a text field."""
    task = json.loads(json.dumps(task))
    text = rng.choice(["\ud800", "x\udfff", "\udc80y"])
    where = rng.choice(["task_id", "category", "reference_answer", "action_id"])
    if where == "action_id" and task["reference_solution"]:
        task["reference_solution"][0]["action_id"] = text
    else:
        task["task_id" if where == "action_id" else where] = text
    return task


def _big(task: dict, rng: random.Random) -> dict:
    task = json.loads(json.dumps(task))
    where = rng.choice(["trials", "row_count", "key"])
    if where == "trials":
        task["trial_protocol"]["trials"] = 2**70
    elif where == "row_count":
        task["goal_state"]["assertions"][0]["row_count"] = 2**64
    else:
        assertion = task["goal_state"]["assertions"][0]
        assertion["key"] = {**assertion["key"], next(iter(assertion["key"])): -2**63 - 1}
    return task


# ---------------------------------------------------------------- suite specs: class -> edit(spec) -> the file broken

def _yaml_edit(path: Path, edit: Callable[[dict], object]) -> Path:
    raw = yaml.safe_load(path.read_text())
    edit(raw)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
QUALITY_BOMB = BOMB + "vendor_master: {value_sets: {currency: *i}}\n"


def _suite(spec: Path) -> Path:
    return spec.parent / "ap_exceptions"


def _aux(name: str, *bodies: bytes | str):
    def edit(spec: Path, rng: random.Random) -> Path:
        body = rng.choice(bodies)
        path = _suite(spec) / name
        path.write_bytes(body.encode() if isinstance(body, str) else body)
        return path
    return edit


def _spec_edit(fn: Callable[[dict, random.Random], object]):
    return lambda spec, rng: _yaml_edit(spec, lambda raw: fn(raw, rng))


def _source(*urls: str):
    return _spec_edit(lambda raw, rng: raw["sources"]["tables"].__setitem__(
        "vendor_master", {"url": rng.choice(urls), "query": "select * from vendor_master"}))


def _drop_table(spec, rng):
    _yaml_edit(spec, lambda raw: raw["sources"]["tables"].pop(rng.choice(["vendor_master", "invoices"])))
    return _suite(spec) / "quality.yaml"


def _encoded(spec, rng):
    text = spec.read_text() + "# café\n"
    spec.write_bytes(rng.choice([codecs.BOM_UTF16_LE + text.encode("utf-16-le"), text.encode("latin-1"),
                                 text.encode("utf-16-be"), bytes(rng.randrange(256) for _ in range(200))]))
    return spec


def _bad_date(spec, rng):
    rights = _suite(spec) / "rights.yaml"
    day = rng.choice(["2027-02-30", "2027-13-01", "2026-04-31"])
    rights.write_text(rights.read_text().replace("expires: 2027-12-31", f"expires: {day}"))
    return rights


def _policy_bad(spec, rng):
    pol = _suite(spec) / "bad_policy.md"
    pol.write_bytes(rng.choice([b"\xff\xfe\x00junk", "---\neffective_from: 2026-02-30\n---\n## AP-1 X\nx\n".encode(),
                                b"---\n[1, 2]\n---\n## AP-1 X\nx\n", b"---\ndoc: ''\nversion: v\n"
                                b"effective_from: 2026-01-01\n---\n## AP-1 X\nx\n", b"no front matter\n"]))
    _yaml_edit(spec, lambda raw: raw["policies"].append("ap_exceptions/bad_policy.md"))
    return pol


def _extra_column(spec, rng):
    """A column the domain's table does not have, added to one of the AP world's CSV exports."""
    csv = _suite(spec) / "source" / f"{rng.choice(['vendor_master', 'invoices', 'payments', 'po_lines'])}.csv"
    lines = csv.read_text().splitlines()
    name = rng.choice(["extra", "Notes", "vendor_id_2"])
    csv.write_text("\n".join([f"{lines[0]},{name}"] + [f"{line},x" for line in lines[1:]]) + "\n")
    return csv


def _duplicate_key(spec, rng):
    """A key given twice in one mapping: YAML says keys are unique; a loader keeping the last hides the first."""
    path, twice = rng.choice([(spec, "name: other\n"), (spec, "domain: ap_exceptions\n"),
                              (_suite(spec) / "rights.yaml", "licensor: someone else\n"),
                              (_suite(spec) / "deid.yaml", "key_env: OTHER_KEY\n")])
    path.write_text(path.read_text() + twice)
    return path


SHORT_KEY = "EVALSUITE_DEID_KEY"  # the environment variable the AP suite's rules name


def _short_key(spec, rng):
    """A de-identification key too short to protect anything (restored after the case by fuzz_specs)."""
    os.environ[SHORT_KEY] = rng.choice(["short", "x" * 15, ""])
    return Path(SHORT_KEY)


def _no_expiry(spec, rng):
    rights = _suite(spec) / "rights.yaml"
    rights.write_text(rights.read_text().replace("expires: 2027-12-31\n", ""))
    return rights


def _deep_yaml(spec, rng):
    depth = rng.choice([150, 5000])
    spec.write_text("name: " + "[" * depth + "]" * depth + "\n")
    return spec


def _mutate(spec, rng):
    """A random key of the spec set to a random value: no oracle, only the shape of the answer is judged."""
    def edit(raw, rng):
        node = raw
        while True:
            key = rng.choice(list(node))
            if isinstance(node[key], dict) and node[key] and rng.random() < 0.6:
                node = node[key]
                continue
            node[key] = rng.choice([None, "", 2**70, -1, 0.5, [], {}, "x", {"bogus": 1}, True, "2027-02-30"])
            return
    _yaml_edit(spec, lambda raw: edit(raw, rng))
    return None


def spec_cases() -> dict[str, Callable[[Path, random.Random], Path | None]]:
    """Each edits a copy of the AP suite and returns the file it broke (None: the suite is still valid)."""
    return {
        "valid": lambda spec, rng: None,
        "encoding_spec": _encoded,
        "invalid_date_rights": _bad_date,
        "sqlite_missing_file": _source("sqlite:///does/not/exist.db", "sqlite:////nowhere/x.sqlite"),
        "unparseable_url": _source("::not a url", "", "http//x"),
        "missing_driver": _source("postgresql://u@localhost/db", "mysql://u@h/db", "mssql+pyodbc://h/db"),
        "unknown_dialect": _source("nosuchdb://x", "oracle+nothing://h"),
        "unknown_domain": _spec_edit(lambda raw, rng: raw.__setitem__("domain", rng.choice(["payroll", "", "AP"]))),
        "quality_not_mapping": _aux("quality.yaml", "- a\n- b\n", "42\n", "just text\n", "vendor_master: [1]\n"),
        "quality_bomb": _aux("quality.yaml", BOMB, QUALITY_BOMB, "a: &a [*a]\n"),
        "quality_unknown_table": _drop_table,
        "version_prefix": _spec_edit(lambda raw, rng: raw.__setitem__("version_prefix", rng.choice(
            ["../../x", "a/b", "", "R", "r" * 20]))),
        "misspelt_key": _spec_edit(lambda raw, rng: raw["sources"].__setitem__("tabels", raw["sources"].pop("tables"))),
        "empty_table_name": _spec_edit(lambda raw, rng: raw["sources"]["tables"].__setitem__(
            rng.choice(["", "a b", "../x"]), raw["sources"]["tables"].pop("payments"))),
        "big_int": _spec_edit(lambda raw, rng: raw["derivation"].__setitem__("seed", 2**70)),
        "rights_bad": _aux("rights.yaml", b"\x00\xff\xfe binary", "[1, 2]\n", "source: 1\nlicense_ref: []\n"
                           "licensor: x\npermitted_uses: 3\npersonal_data: maybe\ndeidentification_required: 2\n", BOMB,
                           ""),
        "deid_bad": _aux("deid.yaml", "just a string\n", "tables: {vendor_master: {columns: {email: {rule: nope}}}}\n",
                         b"\x89PNG\r\n\x1a\n\x00\x00", BOMB, "tables: {vendor_master: {columns: {email: {rule: "
                         "pseudonym, length: 99999999999999999999999}}}}\n"),
        "policy_bad": _policy_bad,
        "deep_yaml": _deep_yaml,
        "tasks_file_missing": _spec_edit(lambda raw, rng: raw.setdefault("derivation", {}).__setitem__(
            "tasks", "nope.jsonl")),
        "mutated": _mutate,
        "extra_csv_column": _extra_column,
        "needed_uses_spelling": _spec_edit(lambda raw, rng: raw.__setitem__("needed_uses", [rng.choice(
            ["Build_Environments", " derive_tasks", "DERIVE_TASKS", "redistribute ", "derive tasks"])])),
        "unknown_table": _spec_edit(lambda raw, rng: raw["sources"]["tables"].__setitem__(
            rng.choice(["bogus", "vendors", "invoice"]), raw["sources"]["tables"]["payments"])),
        "duplicate_key": _duplicate_key,
        "max_steps_huge": _spec_edit(lambda raw, rng: raw["trial_protocol"].__setitem__(
            rng.choice(["max_steps", "trials"]), rng.choice([10**18, 10**6, 100_000]))),
        "bad_schedule": _spec_edit(lambda raw, rng: raw.__setitem__("schedule", rng.choice(
            ["every tuesday", "61 * * * *", "* * *", "0 6 * * 8", "0 0 30 2 *", "", "0 6 * * 1 2027"]))),
        "bad_splits": _spec_edit(lambda raw, rng: raw["derivation"].__setitem__("splits", rng.choice(
            [{"train": -1.0, "test": 2.0}, {"train": 0.5, "test": 0.6}, {"train": 0.5, "tset": 0.5},
             {"train": 1.5, "test": -0.5}, {}]))),
        "short_deid_key": _short_key,
        "licence_no_expiry": _no_expiry,
        "licence_perpetual": lambda spec, rng: _yaml_edit(_suite(spec) / "rights.yaml",
                                                          lambda raw: raw.__setitem__("expires", None)) and None,
    }


VALID_SPECS = {"valid", "licence_perpetual"}  # classes that leave the suite valid (mutated has no oracle)


# ---------------------------------------------------------------- release/run folders: class -> (command, broken file)

FolderCase = Callable[[Path, random.Random], tuple[list[str], Path, bool | None]]


def folder_cases(release: Path, run: Path) -> dict[str, FolderCase]:
    """Each copies the built release or run folder into a case folder, breaks one file, and returns the command,
    the file its answer must name and whether the folder is still valid (None: it may be)."""
    def garbage(rng):
        return rng.choice([bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))), b"{", b"[]", b"null",
                           b'{"suite": 1}', codecs.BOM_UTF16_LE + b"{\x00}\x00", b""])

    def in_release(name: str, change: Callable[[Path, random.Random], bool | None]):
        def case(dest: Path, rng: random.Random):
            shutil.copytree(release, dest / "release")
            target = dest / "release" / name
            valid = change(target, rng)
            return (["run", str(dest / "release"), "--agent", "noop", "--out", str(dest / "run"), "--no-progress",
                     "--workers", "1"], target, valid)
        return case

    def in_run(name: str, change: Callable[[Path, random.Random], bool | None]):
        def case(dest: Path, rng: random.Random):
            shutil.copytree(run, dest / "run")
            target = dest / "run" / name
            valid = change(target, rng)
            return ["score", str(dest / "run")], target, valid
        return case

    def replace(path: Path, rng) -> bool:
        path.write_bytes(garbage(rng))
        return False

    def truncate(path: Path, rng) -> None:
        data = path.read_bytes()
        path.write_bytes(data[:rng.randrange(len(data))])
        return None

    def duplicate_line(path: Path, rng) -> bool:
        first = path.read_bytes().split(b"\n")[0]
        path.write_bytes(path.read_bytes() + first + b"\n")
        return False

    def append_garbage(path: Path, rng) -> bool:
        path.write_bytes(path.read_bytes() + garbage(rng) + b"\n")
        return False

    return {
        "release_manifest": in_release("manifest.json", replace),
        "release_manifest_cut": in_release("manifest.json", truncate),
        "release_tasks": in_release("tasks.jsonl", replace),
        "release_tasks_cut": in_release("tasks.jsonl", truncate),
        "release_tasks_twice": in_release("tasks.jsonl", duplicate_line),
        "run_json": in_run(RUN_JSON, replace),
        "run_json_cut": in_run(RUN_JSON, truncate),
        "run_tasks": in_run(TASKS, replace),
        "run_traces_garbage": in_run(TRACES, append_garbage),
        "run_traces_cut": in_run(TRACES, truncate),
    }


def import_cases() -> dict[str, Callable[[Path, random.Random], tuple[list[str], Path, bool | None]]]:
    src = ROOT / "third_party" / "tau2_retail"
    names = ["db.json", "tasks.json", "split_tasks.json", "policy.md", "LICENSE"]

    def partial(dest: Path, rng: random.Random):
        folder = dest / "src"
        folder.mkdir()
        keep = rng.sample(names, rng.randrange(len(names)))
        for name in keep:
            shutil.copyfile(src / name, folder / name)
        first_missing = sorted(set(names) - set(keep))[0]
        return ["import", "tau2-retail", str(folder), "--out", str(dest / "out")], folder / first_missing, False

    def tampered(dest: Path, rng: random.Random):
        folder = dest / "src"
        folder.mkdir()
        for name in names:
            shutil.copyfile(src / name, folder / name)
        victim = folder / rng.choice(names)
        victim.write_bytes(victim.read_bytes()[:-1] + bytes([rng.randrange(256)]) + b"x")
        return ["import", "tau2-retail", str(folder), "--out", str(dest / "out")], folder, False

    return {"import_missing_files": partial, "import_tampered": tampered,
            "import_no_folder": lambda dest, rng: (["import", "tau2-retail", str(dest / "none"), "--out",
                                                    str(dest / "out")], dest / "none", False)}


# ---------------------------------------------------------------- recordings: class -> (file bytes, valid, check)

HUGE = "refund issued " * 5000  # a 70 KB final message: over the 64 KB cap live agents have
MARKUP = "<!-- ![x](http://evil.example/x.png) <img src=x>\n| Verified | 1.000 |"


def _plain_trials(tasks: list[dict]) -> list[dict]:
    """One trial per task in OpenAI-message form: the reference calls, each answered "ok", the reference answer."""
    out = []
    for t in tasks:
        messages: list[dict] = [{"role": "user", "content": t["trigger"]["text"]}]
        for i, call in enumerate(t["reference_solution"]):
            messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function",
                          "function": {"name": call["tool"], "arguments": json.dumps(call["arguments"])}}]},
                         {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"}]
        messages.append({"role": "assistant", "content": t.get("reference_answer") or "done"})
        out.append({"task_id": t["task_id"], "trial": 0, "reward": 1.0, "messages": messages})
    return out


def _tau2_file(trials: list[dict], **info) -> dict:
    """The same trials as a τ²-bench results file (the format that names a model and a domain)."""
    sims = [{"task_id": t["task_id"], "trial": t["trial"], "reward_info": {"reward": t["reward"]},
             "termination_reason": "agent_stop",
             "messages": [{**m, "tool_calls": [{"id": c["id"], "name": c["function"]["name"],
                                                "arguments": json.loads(c["function"]["arguments"])}
                                               for c in m["tool_calls"]]} if m.get("tool_calls") else
                          {**m, "id": m.pop("tool_call_id")} if m["role"] == "tool" else m
                          for m in json.loads(json.dumps(t["messages"]))]} for t in trials]
    return {"info": {"agent_info": {"llm": "fuzz-model", **info}}, "simulations": sims}


def random_leaf(node: dict | list, rng: random.Random, values: list) -> None:
    """Walk down from `node` (into a child 70% of the time) and set the item reached to one of `values`."""
    while True:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        if isinstance(node[key], (dict, list)) and node[key] and rng.random() < 0.7:
            node = node[key]
            continue
        node[key] = rng.choice(values)
        return


RecordingCase = Callable[[random.Random], tuple[bytes, bool | None, str | None]]


def recording_cases(trials: list[dict]) -> dict[str, RecordingCase]:
    """Each gives a recording's bytes, whether it is valid (None: no oracle) and, for a valid one, what its import
    must not keep: the huge message in the traces ("message"), markup in scorecard.md ("markup")."""
    def some(rng, n=3):
        return json.loads(json.dumps(rng.sample(trials, min(n, len(trials)))))

    def lines(ts):
        return "".join(json.dumps(t) + "\n" for t in ts).encode()

    def tau2(rng, **info):
        return json.dumps(_tau2_file(some(rng), **info)).encode()

    def edit(change):
        def case(rng):
            ts = some(rng)
            change(ts[0], rng)
            return lines(ts), False, None
        return case

    def deep_args(t, rng):
        t["messages"][1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"x": json.loads(_deep(500))})

    def huge(rng):
        ts = some(rng)
        ts[0]["messages"][-1]["content"] = HUGE
        return lines(ts), True, "message"

    def markup(rng):
        ts = some(rng)
        ts.append({**ts[0], "task_id": MARKUP})
        return lines(ts), True, "markup"

    def mutate(rng):
        ts = some(rng)
        random_leaf(ts, rng, [None, "", 2**70, -1, 1e30, float("nan"), [], {}, "x", {"bogus": 1}, True])
        return lines(ts), None, None

    return {
        "valid": lambda rng: (lines(some(rng)), True, None),
        "valid_tau2": lambda rng: (tau2(rng), True, None),
        "final_message_huge": huge,
        "markup_task_id": markup,
        "deep_json": lambda rng: (_deep(rng.choice([990, 5000])).encode(), False, None),
        "deep_arguments": edit(deep_args),
        "trial_huge": edit(lambda t, rng: t.update(trial=rng.choice([1e30, 2**70, -1]))),
        "reward_bad": edit(lambda t, rng: t.update(reward=rng.choice([float("nan"), float("inf"), 5, -1]))),
        "model_bad": lambda rng: (tau2(rng, llm=rng.choice(["gpt\x00", "x" * 300, "gpt-4o\n| Verified | 1.000 |",
                                                             "gpt <!--"])), False, None),
        "other_domain": lambda rng: (json.dumps({**_tau2_file(some(rng)), "info": {
            "agent_info": {"llm": "m"}, "environment_info": {"domain_name": "airline"}}}).encode(), False, None),
        "no_task_of_release": lambda rng: (lines([{**t, "task_id": f"nope-{i}"} for i, t in enumerate(some(rng))]),
                                           False, None),
        "trial_twice": lambda rng: (lines((lambda ts: ts + ts[:1])(some(rng))), False, None),
        "binary": lambda rng: (bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))), False, None),
        "empty": lambda rng: (rng.choice([b"", b"[]", b"{}", b"\n\n"]), False, None),
        "mutated": mutate,
    }


def _kept(dest: Path, check: str | None) -> str | None:
    """What an accepted import kept that it must not: the huge message, or markup a Markdown viewer renders."""
    out = dest / "out"
    if check == "message" and HUGE in (out / TRACES).read_text():
        return "message over the cap kept"
    if check == "markup":
        from markdown_it import MarkdownIt

        page = MarkdownIt("commonmark").enable("table").render((out / "scorecard.md").read_text())
        if any(m in page for m in ("<!--", "<img", "<td>Verified")):
            return "markup in scorecard.md"
    return None


def fuzz_recordings(n: int, work: Path, rng: random.Random, release: Path) -> Counter:
    """Recordings through `evalsuite import-run` onto the built AP release."""
    if n == 0:
        return Counter()
    trials = _plain_trials([t.model_dump(mode="json") for t in _release_tasks(release)])
    cases = recording_cases(trials)
    outcomes: Counter = Counter()
    for name, dest in in_turn(cases, n, work, "r"):
        body, valid, check = cases[name](rng)
        f = dest / "recording.json"
        f.write_bytes(body)
        named = [] if body.startswith(b'{"info"') else ["--model", "fuzz-model"]  # a τ² file names its model
        result = RUNNER.invoke(app, ["import-run", str(f), str(release), "--license", "MIT", *named,
                                     "--out", str(dest / "out"), "--resamples", "10"])
        verdict = judge(result, f, valid)
        if result.exit_code == 0 and check:
            verdict = _kept(dest, check) or verdict
        elif result.exit_code != 0 and (dest / "out").exists():
            print(f"recording {name}: refused ({result.stderr.strip()[:160]!r}) but left {dest / 'out'}",
                  file=sys.stderr)
            verdict = "half-written"
        _tally(outcomes, "recording", name, verdict)
    return outcomes


def _release_tasks(release: Path):
    from evalsuite.releases.release import Release

    return [t for t in Release(release).tasks() if t.reference_solution]


# ---------------------------------------------------------------- dossiers: class -> edit(raw dossier) -> valid?

RETAIL = ROOT / "suites" / "retail_support.yaml"
TEXTS = [("disclosure",), ("intended_result",), ("actors", 1, "description"), ("sources", 0, "ref"),
         ("open_questions", 1, "question"), ("open_questions", 1, "answer"), ("contradictions", 0, "resolution"),
         ("contradictions", 1, "description"), ("requirements", 0, "statement"),
         ("requirements", 2, "stages", "answer"), ("requirements", 4, "stages", "answered_by", "authority"),
         ("requirements", 3, "stages", "recorded"), ("routine_cases", 0, "description")]
AUTHORITIES = [("sources", 2, "authority"), ("open_questions", 1, "owner"), ("contradictions", 0, "resolver"),
               ("contradictions", 1, "resolver"), ("requirements", 0, "stages", "answered_by", "actor"),
               ("requirements", 4, "stages", "answered_by", "actor")]


def _at(raw: dict, path: tuple):
    """The mapping holding the last key of `path`, and that key."""
    for key in path[:-1]:
        raw = raw[key]
    return raw, path[-1]


def _set(path: tuple, *values):
    def edit(raw, rng):
        node, key = _at(raw, path if path else rng.choice(TEXTS))
        node[key] = rng.choice(values)
    return edit


def _links(change: Callable[[dict, random.Random], None]):
    def edit(raw, rng):
        change(rng.choice(raw["requirements"])["links"], rng)
    return edit


def _powerless(raw, rng):
    """An answerer or owner with authority over no source, or a resolver over neither side of the contradiction."""
    where = rng.choice(AUTHORITIES[1:])
    node, key = _at(raw, where)
    node[key] = "finance" if where[0] == "contradictions" else rng.choice(["human_review"])


def _read_only_enforcement(raw, rng):
    r = rng.choice([r for r in raw["requirements"] if r["restricts_action"]])
    r["links"]["tools"] = []
    r["links"]["permissions"] = [{"role": "support_agent", "tool": rng.choice(["get_case", "get_purchase",
                                                                                "find_refund"]), "may": True}]


def _unresolved(raw, rng):
    if rng.random() < 0.5:
        q = raw["open_questions"][1]
        q.update(status="open")
        q.pop("answer")
    else:
        rng.choice(raw["contradictions"]).pop("resolution")


def _mutate_dossier(raw, rng):
    """A random leaf set to a random value: no oracle (a word in place of a description, a renamed id or the
    customizations dropped from a suite that applies none is another dossier, not a wrong one)."""
    random_leaf(raw, rng, [None, "", " ", 2**70, -1, [], {}, "x", "support_agent", "nobody", True, False,
                           "ap_exceptions", {"bogus": 1}])


def dossier_cases() -> dict[str, tuple[Callable[[dict, random.Random], None], bool | None]]:
    """Each edits the retail_support dossier; with whether the result is valid (None: no oracle)."""
    return {
        "valid": (lambda raw, rng: None, True),
        "blank_text": (_set((), "", " ", "\t\n"), False),
        "agent_as_authority": (lambda raw, rng: _set(rng.choice(AUTHORITIES), "support_agent")(raw, rng), False),
        "undeclared_authority": (lambda raw, rng: _set(rng.choice(AUTHORITIES), "nobody", "ceo")(raw, rng), False),
        "powerless_authority": (_powerless, False),
        "other_suite": (_set(("suite",), "ap_exceptions", "contract_review", "retail"), False),
        "read_only_enforcement": (_read_only_enforcement, False),
        "unresolved_consequential": (_unresolved, False),
        "no_clause": (_links(lambda links, rng: links.update(clauses=rng.choice([[], ["RS-99"]]))), False),
        "no_check": (_links(lambda links, rng: links.update(checks=rng.choice([[], ["no_such_check"]]))), False),
        "no_task": (_links(lambda links, rng: links.update(tasks=rng.choice([[], ["rs-c-0000-none"]]))), False),
        "duplicate_id": (lambda raw, rng: raw["requirements"].append(rng.choice(raw["requirements"])), False),
        "mutated": (_mutate_dossier, None),
    }


def fuzz_dossiers(n: int, work: Path, rng: random.Random, only: list[str] | None = None) -> Counter:
    """The retail_support dossier, edited, through the two steps of a build that judge one: process_dossier reads
    it (dossier_as_applied) and requirements_traced traces it to the suite's tasks. A dossier is answered well when
    a valid one passes both and an invalid one is refused by either, a read error in one line naming the file; a
    random mutation the gate lets through is counted as `released` (no oracle)."""
    from evalsuite.domains.registry import domain_of
    from evalsuite.pipeline.stages import policy_documents, process_dossier
    from evalsuite.sourcing.spec import load_spec
    from evalsuite.tasks.taskfile import read_tasks
    from evalsuite.tasks.traceability import trace_problems

    spec = load_spec(RETAIL)
    tasks, domain = read_tasks(ROOT / "suites" / "retail_support" / "tasks.jsonl"), domain_of(spec.domain)
    policies = policy_documents.policy_docs(spec)
    original = yaml.safe_load(spec.resolve(spec.dossier.file).read_text())
    cases = dossier_cases()
    outcomes: Counter = Counter()
    names = only or sorted(cases)
    for i in range(n):
        name = names[i % len(names)]
        edit, valid = cases[name]
        raw = json.loads(json.dumps(original, default=str))
        edit(raw, rng)
        path = work / f"d{i}.yaml"
        path.write_text(yaml.safe_dump(raw, sort_keys=False))
        mine = spec.model_copy(update={"dossier": spec.dossier.model_copy(update={"file": str(path)})})
        try:
            problems = trace_problems(process_dossier.dossier_as_applied(mine)[1], tasks, domain, policies)
        except process_dossier.DossierError as exc:
            one = str(exc).startswith(str(path)) and "\n" not in str(exc)
            verdict = ("ok" if one else f"refused badly: {str(exc)[:160]!r}") if valid is not True else \
                f"valid input refused: {str(exc)[:160]}"
        except Exception as exc:  # noqa: BLE001 - what the fuzzer counts
            verdict = f"traceback: {type(exc).__name__}: {str(exc)[:160]}"
        else:
            if problems:
                verdict = "ok" if valid is not True else f"valid input refused: {problems[0][:160]}"
            else:
                verdict = {True: "ok", None: "released", False: "wrongly accepted"}[valid]
        _tally(outcomes, "dossier", name, verdict)
        path.unlink()
    return outcomes


# ---------------------------------------------------------------- running and judging

def judge(result, file: Path, valid: bool | None) -> str:
    """`file` is the file the answer must name (for a spec with no oracle, its folder)."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"traceback: {type(result.exception).__name__}: {str(result.exception)[:160]}"
    if result.exit_code == 0:
        return "ok" if valid in (True, None) else "wrongly accepted"
    if valid is True:
        return f"valid input refused: {result.output.strip()[:200]}"
    lines = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
    if valid is None and len(lines) == 1 and lines[0].startswith("error: gate "):
        return "ok"  # a mutation the loaders accept and a gate refuses, naming the gate and its reason
    named = lines and all(str(file) in line for line in lines)
    if result.exit_code != 2 or not named or "Traceback" in result.output:
        return f"refused badly (exit {result.exit_code}): {(result.stderr or result.stdout)[:200]!r}"
    return "ok"


def in_turn(cases: dict, n: int, work: Path, prefix: str) -> Iterator[tuple[str, Path]]:
    """The case classes in turn, n in all, each with a fresh folder below `work`, removed once it is judged."""
    names = sorted(cases)
    for i in range(n):
        dest = work / f"{prefix}{i}"
        dest.mkdir()
        yield names[i % len(names)], dest
        shutil.rmtree(dest)


def _tally(outcomes: Counter, kind: str, name: str, verdict: str) -> None:
    """Count a verdict under its class (its first words only, so refusals of one kind add up); print the odd ones."""
    kept = ("ok", "wrongly", "half", "released", "message", "markup")
    outcomes[(name, verdict if verdict.startswith(kept) else verdict.split(":")[0])] += 1
    if verdict != "ok":
        print(f"{kind} {name}: {verdict}", file=sys.stderr)


def fuzz_tasks(n: int, work: Path, rng: random.Random) -> Counter:
    cases = task_cases(_ap_tasks(work), _tau2_tasks())
    outcomes: Counter = Counter()
    names = sorted(cases)
    for i in range(n):
        name = names[i % len(names)]
        body, suffix, valid = cases[name](rng)
        f = work / f"t{i}{suffix}"
        f.write_bytes(body)
        _tally(outcomes, "task", name, judge(RUNNER.invoke(app, ["task", "validate", str(f)]), f, valid))
        f.unlink()
    return outcomes


def fuzz_specs(n: int, work: Path, rng: random.Random) -> Counter:
    cases = spec_cases()
    template = copy_suite(work / "template")
    outcomes: Counter = Counter()
    names = sorted(cases)
    for i in range(n):
        name = names[i % len(names)]
        dest = work / f"s{i}"
        shutil.copytree(template.parent, dest)
        spec = dest / template.name
        key = os.environ[SHORT_KEY]
        try:
            broken = cases[name](spec, rng)
            valid = True if name in VALID_SPECS else None if name == "mutated" else False
            home = dest / "home"
            result = RUNNER.invoke(app, ["build", str(spec), "--home", str(home)])
        finally:
            os.environ[SHORT_KEY] = key
        verdict = judge(result, broken or dest, valid)
        if result.exit_code != 0 and _written(home, result):
            verdict = "half-written"
        _tally(outcomes, "spec", name, verdict)
        shutil.rmtree(dest)
    return outcomes


def _written(home: Path, result) -> bool:
    """A refused build left something behind: a release, or (when an input was refused rather than a gate
    blocking) any stage's record; the build lock is no stage's output."""
    if any(home.glob("releases/*/*")):
        return True
    if (result.stderr or result.stdout).startswith("error: gate "):
        return False
    return any(p.is_file() and p.name != "build.lock" for p in home.glob("suites/**/*"))


def built_release(work: Path) -> Path:
    """The AP suite built once into `work`: the release the folder and recording cases start from."""
    spec = copy_suite(work / "built")
    built = RUNNER.invoke(app, ["build", str(spec), "--home", str(work / "home")])
    return Path(json.loads(built.stdout.strip().splitlines()[-1])["release"])


def fuzz_folders(n: int, work: Path, rng: random.Random, release: Path) -> Counter:
    """Broken release and run folders through `run` and `score`, and broken tau2 folders through `import`."""
    if n == 0:
        return Counter()
    run = work / "run"
    done = RUNNER.invoke(app, ["run", str(release), "--agent", "noop", "--out", str(run), "--no-progress",
                               "--workers", "1", "--resamples", "10"])
    assert done.exit_code == 0, done.output
    cases = folder_cases(release, run) | import_cases()
    outcomes: Counter = Counter()
    for name, dest in in_turn(cases, n, work, "f"):
        args, broken, valid = cases[name](dest, rng)
        result = RUNNER.invoke(app, args)
        verdict = judge(result, broken if valid is False else dest, valid)
        if name.startswith("import") and (dest / "out").exists():
            verdict = "half-written"
        _tally(outcomes, "folder", name, verdict)
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--specs", type=int, default=500)
    parser.add_argument("--folders", type=int, default=260)
    parser.add_argument("--recordings", type=int, default=150)
    parser.add_argument("--dossiers", type=int, default=400)
    parser.add_argument("--dossier-cases", type=lambda text: text.split(","), default=None,
                        help="the dossier classes to cycle through, e.g. mutated (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        outcomes = fuzz_tasks(args.tasks, work, rng) + fuzz_specs(args.specs, work, rng)
        release = built_release(work) if args.folders or args.recordings else None
        outcomes += fuzz_folders(args.folders, work, rng, release)
        outcomes += fuzz_recordings(args.recordings, work, rng, release)
        outcomes += fuzz_dossiers(args.dossiers, work, rng, args.dossier_cases)
    bad = Counter()
    for (name, verdict), count in sorted(outcomes.items()):
        print(f"{name:24} {verdict:28} {count}")
        bad[verdict] += count
    print(f"\n{args.tasks} task files, {args.specs} suite specs, {args.folders} release/run/import folders, "
          f"{args.recordings} recordings, {args.dossiers} dossiers in {time.perf_counter() - started:.0f} s: "
          + ", ".join(f"{v}: {c}" for v, c in sorted(bad.items())))


if __name__ == "__main__":
    main()
