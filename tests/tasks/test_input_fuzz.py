"""Property tests of task files: any bytes, any record is either accepted because it is valid (by an oracle
written here) or refused in one line naming the file; never another exception."""
from __future__ import annotations

import codecs
import datetime as dt
import inspect
import json
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from input_support import fuzz, one_line_naming

from evalsuite.audit.validation import validate_file, validate_files
from evalsuite.core.io import MAX_DEPTH
from evalsuite.domains.tau2_retail import DOMAIN as RETAIL
from evalsuite.tasks.taskfile import TaskFileError, read_tasks

ROOT = Path(__file__).resolve().parents[2]
RETAIL_TASKS = [json.loads(line)
                for line in (ROOT / "suites" / "tau2_retail" / "tasks.jsonl").read_text().splitlines()[:10]]
RETAIL_TASK = next(t for t in RETAIL_TASKS if t["reference_solution"])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def ap_task(ap) -> dict:
    """An AP task whose goal checks an invoice: a table with a money column (total)."""
    task = json.loads(next(t for t in ap.tasks if t.goal_state.assertions).model_dump_json())
    assert task["goal_state"]["assertions"][0]["table"] == "invoices"
    return task


_count = iter(range(10**9))


def write(folder: Path, data: bytes, suffix: str = ".jsonl") -> Path:
    path = folder / f"tasks{next(_count)}{suffix}"
    path.write_bytes(data)
    return path


def lines(*tasks: dict) -> bytes:
    return "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks).encode()


def answer(path: Path) -> list[str] | None:
    """validate_file's problem lines, or None if the file is accepted; read_tasks must agree on the schema,
    and every line must be one line naming the file."""
    try:
        problems = [str(p) for p in validate_file(path)]
    except TaskFileError as exc:
        one_line_naming(str(exc), path)
        with pytest.raises(TaskFileError):
            read_tasks(path)
        return [str(exc)]
    for line in problems:
        one_line_naming(line, path)
    if not problems:
        read_tasks(path)  # a file the validator accepts reads
    return problems or None


# ---------------------------------------------------------------- bytes and encodings

@fuzz(150)
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".jsonl", ".json"]))
def test_any_bytes_are_accepted_only_if_they_are_utf8_json_records(folder, data, suffix):
    got = answer(write(folder, data, suffix))
    if got is None:  # the oracle: accepted bytes are UTF-8 JSON
        text = data.decode("utf-8-sig")
        assert all(json.loads(line) is not None for line in text.split("\n") if line.strip()) or suffix == ".json"


@fuzz(60)
@given(text=st.text(min_size=1, max_size=40), codec=st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16",
                                                                     "utf-16-be", "cp1252"]))
def test_a_task_file_is_read_as_utf8_and_any_other_encoding_is_named(folder, ap_task, text, codec):
    body = lines({**ap_task, "category": text}).decode()
    try:
        data = body.encode(codec)
    except UnicodeEncodeError:
        assume(False)
    got = answer(write(folder, data))
    try:  # the oracle: the bytes read as UTF-8 give back the very JSON text written
        same = data.decode("utf-8-sig") == body and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        decodes = True
    except UnicodeDecodeError:
        same = decodes = False
    if same:
        assert got is None, got
    if not decodes or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        assert got is not None and "not UTF-8 text" in got[0]
    # other bytes that happen to be UTF-8 (latin-1 'Â\x80' is U+0080) are judged as the text they decode to


def test_an_empty_file_is_refused(folder):
    for data, suffix in ((b"", ".jsonl"), (b"\n \n", ".jsonl"), (b"[]", ".json")):
        path = write(folder, data, suffix)
        assert answer(path) == [f"{path}: no task records"]


# ---------------------------------------------------------------- nesting

@fuzz(40)
@given(depth=st.integers(1, 3000))
def test_nesting_is_bounded_and_never_overflows_the_parser(folder, depth):
    nested = "[" * depth + "]" * depth  # written as text: too deep for Python to build at the top of the range
    body = json.dumps(RETAIL_TASK).replace('"arguments": {', '"arguments": {"x": ' + nested + ", ", 1).encode()
    total = 4 + depth  # record, reference_solution, the call, arguments, then the nested lists
    got = answer(write(folder, body))
    if total > MAX_DEPTH:
        assert got is not None and f"nested deeper than {MAX_DEPTH} levels" in got[0]
    else:  # within the bound the record is judged on its merits: "x" is no argument of the tool
        assert got is not None and "arguments.x: " in got[0] and "unexpected argument" in got[0]


# ---------------------------------------------------------------- numbers, ids, duplicates

NUMBERS = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True))


def unbounded(v) -> bool:
    if isinstance(v, float):
        return v != v or v in (float("inf"), float("-inf"))
    return not -2**63 <= v < 2**63


def leaf_paths(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaf_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaf_paths(v, (*path, i))
    else:
        yield path


@fuzz(120)
@given(data=st.data(), number=NUMBERS)
def test_a_number_anywhere_is_refused_if_nothing_can_hold_it(folder, ap_task, data, number):
    task = json.loads(json.dumps(ap_task))
    path = data.draw(st.sampled_from(list(leaf_paths(task))))
    node = task
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = number
    got = answer(write(folder, json.dumps(task).encode() + b"\n"))
    if unbounded(number):
        assert got is not None
        field = ".".join(map(str, path))
        # a field of a union is named with the member it failed as
        assert any(f":{field}: " in re.sub(r"\.list\[\w+\]", "", line) for line in got), (field, got)


@pytest.mark.parametrize("path, number", [
    (("reference_solution", 0, "arguments", "order_id"), 2**70),
    (("reference_solution", 0, "arguments", "order_id"), 2**63),
    (("reference_solution", 0, "arguments", "order_id"), float("nan")),
    (("reference_solution", 0, "arguments", "order_id"), -2**63 - 1),
    (("reference_solution", 0, "arguments", "order_id"), float("-inf")),
])
def test_a_number_the_schema_lets_through_is_still_refused_by_field(folder, path, number):
    """Integer fields and untyped tool arguments take any number; nothing downstream can hold these."""
    task = json.loads(json.dumps(RETAIL_TASK))
    node = task
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = number
    file = write(folder, json.dumps(task).encode() + b"\n")
    field = ".".join(map(str, path))
    assert answer(file) == [f"{file}:{task['task_id']}:{field}: {number} "
                            + ("is not a number a suite can compare" if isinstance(number, float)
                               else "does not fit a 64-bit integer")]
    with pytest.raises(TaskFileError, match=rf":1: {field}: "):
        read_tasks(file)


@pytest.mark.parametrize("task_id", ["", " ", "\t", "a\nb", "a/b", None, 7])
def test_an_unusable_task_id_is_refused_and_shown_as_its_record_number(folder, ap_task, task_id):
    path = write(folder, lines({**ap_task, "task_id": task_id}))
    got = answer(path)
    assert got and all(line.startswith(f"{path}:#1:task_id: ") for line in got)


@fuzz(30)
@given(n=st.integers(2, 4), split=st.booleans())
def test_a_task_id_twice_in_a_suite_is_refused_within_a_file_and_across_files(folder, ap_task, n, split):
    other = {**ap_task, "split": "train"}
    if split:  # the same suite in two files (say one per split): validated together, the repeat is found
        files = [write(folder, lines(ap_task)) for _ in range(n - 1)] + [write(folder, lines(other))]
        problems = [str(p) for p in validate_files(files)]
        assert len(problems) == n - 1
        assert all("duplicate task id in suite 'ap_exceptions'" in p and f"{files[0]} record 1" in p
                   for p in problems)
    else:
        path = write(folder, lines(*[ap_task] * (n - 1), other))
        assert answer(path) == [f"{path}:{ap_task['task_id']}:task_id: duplicate task id in suite 'ap_exceptions' "
                                f"(first at record 1)"] * (n - 1)
        with pytest.raises(TaskFileError, match=r":2: task_id: duplicate task id"):
            read_tasks(path)


def test_the_same_id_in_two_suites_is_no_duplicate(folder, ap_task):
    other = {**ap_task, "suite": {**ap_task["suite"], "name": "another"}}
    assert validate_files([write(folder, lines(ap_task)), write(folder, lines(other))]) == []


# ---------------------------------------------------------------- money

def money_oracle(value) -> bool:
    """Exact money with at most two decimals: an integer, or a decimal string written plainly."""
    if isinstance(value, bool) or isinstance(value, float):
        return False
    if isinstance(value, int):
        return True
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return False
    return amount.is_finite() and format(amount, "f") == value and -amount.as_tuple().exponent <= 2


MONEY = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**62, 2**62), st.booleans(),
    st.decimals(allow_nan=True, allow_infinity=True, places=None).map(str),
    st.decimals(min_value=-10**9, max_value=10**9, places=3).map(str),
    st.sampled_from(["12.50", "12.5", "0.00", "-0.01", "012.00", "1e2", " 12.50", "12.50 ", "+1", "1_000", "NaN",
                     "sNaN", "Infinity", "", ".5", "5.", "12.345", "１２"]),
    st.text(max_size=8))


@fuzz(150)
@given(value=MONEY, part=st.sampled_from(["expect", "key"]))
def test_money_in_a_goal_is_exact_or_refused_naming_the_column(folder, ap_task, value, part):
    task = json.loads(json.dumps(ap_task))
    task["goal_state"]["assertions"][0][part]["total"] = value
    got = answer(write(folder, json.dumps(task).encode() + b"\n"))
    field = f"goal_state.assertions.0.{part}.total"
    if money_oracle(value):
        assert got is None, got
    else:
        assert got is not None and all(field in line for line in got), got


# ---------------------------------------------------------------- reference-solution arguments

RETAIL_TOOLS = sorted(RETAIL.tools)
NAMES = st.sampled_from(sorted({p for t in RETAIL.tools.values() for p in t.schema()["parameters"]["properties"]}
                               | {"bogus", "ctx", "kwargs"}))


def binds(tool: str, arguments: dict) -> bool:
    """The oracle: Python itself accepts the call (the retail tools take raw keyword arguments)."""
    try:
        inspect.signature(RETAIL.tools[tool].fn).bind(None, **arguments)
    except TypeError:
        return False
    return True


@fuzz(120)
@given(tool=st.sampled_from(RETAIL_TOOLS), names=st.sets(NAMES, max_size=8))
def test_reference_arguments_are_checked_against_the_tools_signature(folder, tool, names):
    task = json.loads(json.dumps(RETAIL_TASK))
    arguments = {n: "x" for n in sorted(names)}
    task["reference_solution"] = [{"tool": tool, "arguments": arguments}]
    got = answer(write(folder, lines(task)))
    if binds(tool, arguments):
        assert got is None, got
    else:
        assert got is not None and all(".reference_solution.0.arguments." in line.replace(":reference", ".reference")
                                       for line in got), got


@pytest.mark.parametrize("arguments, field, message", [
    ({"invoice_id": "INV-1", "bogus": 1}, "bogus", "Extra inputs are not permitted"),
    ({}, "invoice_id", "Field required"),
])
def test_reference_arguments_are_checked_against_a_tools_model(folder, ap_task, arguments, field, message):
    task = {**ap_task, "reference_solution": [{"tool": "get_invoice", "arguments": arguments}]}
    path = write(folder, lines(task))
    assert answer(path) == [
        f"{path}:{ap_task['task_id']}:reference_solution.0.arguments.{field}: get_invoice: {message}"]


def test_the_bundled_task_files_are_accepted(ap, folder):
    """The oracle's other half: real task files, both domains, pass every check above."""
    assert answer(ROOT / "suites" / "tau2_retail" / "tasks.jsonl") is None
    assert answer(write(folder, lines(*[json.loads(t.model_dump_json()) for t in ap.tasks]))) is None


def test_a_record_date_that_is_no_calendar_date_is_refused(folder, ap_task):
    task = json.loads(json.dumps(ap_task))
    task["policy"]["effective_from"] = "2026-02-30"
    with pytest.raises(ValueError):
        dt.date.fromisoformat("2026-02-30")
    got = answer(write(folder, lines(task)))
    assert got and "policy.effective_from" in got[0]
