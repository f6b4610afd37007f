"""Source tables read and hashed a block at a time: the same rows and hashes as whole, and bad rows named by line."""
from __future__ import annotations

import hashlib
import json
from datetime import datetime

import numpy as np
import pandas as pd
import pytest
from input_support import refused
from suite_support import ROOT

from evalsuite.core.hashing import canonical_row
from evalsuite.sourcing import snapshot
from evalsuite.sourcing.spec import SpecError, load_spec

# The seed snapshot hash of the bundled AP export: the release versions of every suite built so far depend on it.
BUNDLED_SEED_SHA256 = "0358b19615d540e6732482e69ecc6fd226abeb3b3f044ac8227b07fe0bb1812a"

ROWS = [
    ["PAY-00001", "INV-1", "10.50", "Zoë \"the\" payer, Ltd", ""],
    ["PAY-00002", "INV-2", "", "line one\nline two", "2026-01-02"],
    ["PAY-00003", "INV-1", "0.10", "", "2026-01-03"],
]


def write_export(path, rows: int = 400) -> None:
    """A payments-like CSV with quoting, embedded newlines and commas, non-ASCII text and empty fields."""
    frame = pd.DataFrame([ROWS[i % 3][:1] + [f"{ROWS[i % 3][0]}-{i}"] + ROWS[i % 3][1:] for i in range(rows)],
                         columns=["payment_id", "ref", "invoice_id", "amount", "memo", "paid_on"])
    frame.to_csv(path, index=False, encoding="utf-8")


def read(path) -> pd.DataFrame:
    return snapshot.read_csv(path, f"{path}: sources.tables.payments")


def in_small_blocks(monkeypatch) -> None:
    monkeypatch.setattr(snapshot, "CSV_BLOCK_BYTES", 256)
    monkeypatch.setattr(snapshot, "HASH_BLOCK_ROWS", 7)


def test_a_source_larger_than_a_block_reads_and_hashes_as_it_does_whole(tmp_path, monkeypatch):
    export = tmp_path / "payments.csv"
    write_export(export)
    whole = read(export)
    whole_sha = snapshot.snapshot_sha256({"payments": whole})
    in_small_blocks(monkeypatch)
    blocks = read(export)
    pd.testing.assert_frame_equal(blocks, whole)
    assert snapshot.snapshot_sha256({"payments": blocks}) == whole_sha
    assert blocks.loc[1, "memo"] == "line one\nline two" and pd.isna(blocks.loc[0, "paid_on"])
    assert blocks["amount"].isna().tolist()[:3] == [False, True, False]


def test_text_is_kept_exactly_as_delivered_with_or_without_a_byte_order_mark(tmp_path):
    export = tmp_path / "ids.csv"
    export.write_text("\ufeffid,amount\r\n007,1.50\r\n1e3,-0\r\n", encoding="utf-8")
    frame = read(export)
    assert list(frame.columns) == ["id", "amount"]
    assert frame["id"].tolist() == ["007", "1e3"] and frame["amount"].tolist() == ["1.50", "-0"]


def test_the_bundled_export_keeps_its_snapshot_hash_in_any_block_size(monkeypatch):
    spec = load_spec(ROOT / "suites" / "ap_exceptions.yaml")
    assert snapshot.snapshot_sha256(snapshot.read_sources(spec)) == BUNDLED_SEED_SHA256
    in_small_blocks(monkeypatch)
    assert snapshot.snapshot_sha256(snapshot.read_sources(spec)) == BUNDLED_SEED_SHA256


def test_a_frame_hashes_as_the_canonical_rows_do(monkeypatch):
    """frame_sha256 in blocks equals the definition: rows sorted by key, each cell as _cell gives it (None for
    missing, plain Python scalars), each canonical row as compact JSON, in order."""
    monkeypatch.setattr(snapshot, "HASH_BLOCK_ROWS", 2)
    frame = pd.DataFrame({
        "n": [3, 1, 2, 2, 5],
        "x": [1.5, np.nan, 2.0, 25.0, -0.0],
        "s": pd.array(["b", None, "é\"\\", "a", "\u2028"], dtype="str"),
        "o": [None, 1, "a", True, 0.1],
        "d": pd.to_datetime(["2020-01-01", None, "2021-06-30T12:00", "2020-01-01", "2022-02-02"], format="ISO8601"),
        "b": [True, False, True, False, True],
    })
    ordered = frame.sort_values(["n", "x"], kind="stable").astype(object)
    digest = hashlib.sha256(json.dumps(list(frame.columns)).encode())
    for row in ordered.itertuples(index=False, name=None):
        cells = [snapshot._cell(v) for v in row]
        digest.update(b"\n" + json.dumps(canonical_row(cells), separators=(",", ":")).encode())
    assert snapshot.frame_sha256(frame, ["n", "x"]) == digest.hexdigest()


def test_a_short_row_deep_in_the_file_is_refused_naming_its_line(tmp_path):
    export = tmp_path / "payments.csv"
    lines = ["payment_id,invoice_id,amount"] + [f"PAY-{i:05d},INV-{i},1.00" for i in range(1, 5000)]
    lines[4321] = "PAY-SECRET,Jane Roe"  # one field short: pandas used to fill it with nothing
    export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    message = refused(SpecError, read, export, file=export)
    assert "line 4322: 2 fields where the header has 3" in message
    assert "Jane Roe" not in message and "SECRET" not in message  # the row may be personal data


def test_a_long_row_after_a_quoted_newline_is_named_by_its_physical_line(tmp_path):
    export = tmp_path / "payments.csv"
    export.write_text('id,memo\n1,"two\nlines"\n2,ok\n3,too,many\n', encoding="utf-8")
    assert "line 5: 3 fields where the header has 2" in refused(SpecError, read, export, file=export)


def test_a_file_that_is_not_utf8_is_refused_naming_the_line_and_byte(tmp_path):
    export = tmp_path / "vendors.csv"
    export.write_bytes("id,name\n1,Ana\n2,Jos\xe9\n".encode("latin-1"))
    message = refused(SpecError, read, export, file=export)
    assert "line 3: not UTF-8 text (byte 0xe9 at column 6); export it as UTF-8" in message


def test_an_empty_file_and_a_repeated_column_are_refused(tmp_path):
    empty, twice = tmp_path / "empty.csv", tmp_path / "twice.csv"
    empty.write_text("", encoding="utf-8")
    twice.write_text("id,id\n1,2\n", encoding="utf-8")
    assert "no header line" in refused(SpecError, read, empty, file=empty)
    assert "line 1: column(s) ['id'] named more than once" in refused(SpecError, read, twice, file=twice)


def test_rows_for_the_world_come_a_block_at_a_time_with_none_for_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "HASH_BLOCK_ROWS", 3)
    frame = pd.DataFrame({"id": pd.array(["a", "b", None, "d"], dtype="str"), "n": [1, 2, 3, 4],
                          "x": [0.5, np.nan, 1.0, 2.0], "at": pd.to_datetime(["2020-01-01", "2020-01-02",
                                                                              "2020-01-03", "2020-01-04"])})
    rows = list(snapshot.iter_frame_rows(frame))
    assert rows == snapshot.frame_rows(frame)
    assert rows[2] == {"id": None, "n": 3, "x": 1.0, "at": datetime(2020, 1, 3)} and rows[1]["x"] is None
    assert type(rows[0]["n"]) is int and type(rows[0]["x"]) is float


@pytest.mark.parametrize("odd", ["plain", None, 'say "hi"', "back\\slash", "é", "tab\there", ""])
def test_a_large_text_frame_hashes_as_the_canonical_rows_do(odd):
    """Text held by Arrow is hashed from Arrow in large blocks: the same digest as the definition's."""
    ids = [f"PAY-{i:05d}" for i in range(3000)]
    frame = pd.DataFrame({"id": pd.array(ids, dtype="str"),
                          "note": pd.array([f"n{i % 7}" for i in range(2999)] + [odd], dtype="str")})
    digest = hashlib.sha256(json.dumps(list(frame.columns)).encode())
    for row in frame.sort_values(["id"], kind="stable").astype(object).itertuples(index=False, name=None):
        cells = canonical_row([snapshot._cell(v) for v in row])
        digest.update(b"\n" + json.dumps(cells, separators=(",", ":")).encode())
    assert snapshot.frame_sha256(frame, ["id"]) == digest.hexdigest()
