"""Snapshots: a set of tables as Parquet on disk, with canonical content hashes.

Source tables are read from CSV, Parquet or a SQL query (SQLAlchemy), then
written as a snapshot folder whose hash does not depend on file bytes, row
order or how a number was typed. CSV is read block by block into Arrow
columns (text as delivered, never typed), and hashes are computed a block of
rows at a time, so a million-row export costs its columns, not a Python
object per cell.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from evalsuite.core.hashing import TableHash, combine_sha256
from evalsuite.core.io import staged_dir, write_json
from evalsuite.sourcing.headers import bad_line, csv_header, first_line
from evalsuite.sourcing.spec import SpecError, SuiteSpec, TableSource
from evalsuite.worlds.world import Columns

# Bytes of CSV parsed per block, and rows hashed per block; tests make them small.
CSV_BLOCK_BYTES = 8 << 20
HASH_BLOCK_ROWS = 20_000


def read_source_table(name: str, src: TableSource, spec: SuiteSpec) -> pd.DataFrame:
    """One source table, as strings and numbers exactly as delivered (no type guessing on ids)."""
    if src.url:
        return read_query(name, src, spec)
    path = spec.resolve(src.path)
    if path.suffix == ".parquet":
        try:
            return pd.read_parquet(path)
        except (OSError, pa.ArrowException) as exc:  # pyarrow's errors for a file that is not Parquet
            raise SpecError(f"{path}: sources.tables.{name}: not a readable Parquet file: {first_line(exc)}") from exc
    if path.suffix == ".csv":
        return read_csv(path, f"{path}: sources.tables.{name}")
    raise SpecError(f"{path}: sources.tables.{name}: unsupported file type {path.suffix!r} (csv, parquet or url+query)")


def read_query(name: str, src: TableSource, spec: SuiteSpec) -> pd.DataFrame:
    """A SQL source: the spec's query on its database; a failing connection or query is one line naming both."""
    engine = create_engine(src.url)
    try:
        with engine.connect() as conn:
            return pd.read_sql_query(text(src.query), conn)
    except (SQLAlchemyError, pd.errors.DatabaseError) as exc:  # pandas wraps the SQLAlchemy error it got
        cause = exc
        while (inner := getattr(cause, "orig", None) or cause.__cause__) is not None:
            cause = inner  # down to the database's own message
        cause = first_line(cause)
        raise SpecError(f"{spec.spec_file or spec.name}: sources.tables.{name}: "
                        f"query on {engine.url.render_as_string()} failed: {cause}") from exc
    finally:
        engine.dispose()


def read_csv(path: Path, where: str) -> pd.DataFrame:
    """A UTF-8 CSV export read in blocks: every column text, empty fields missing; a bad row or byte is one
    SpecError naming its line (never its content: it may be personal data)."""
    columns = csv_header(path, where, SpecError)
    options = pa_csv.ConvertOptions(column_types={c: pa.string() for c in columns}, strings_can_be_null=True,
                                    null_values=[""], quoted_strings_can_be_null=True)
    block = CSV_BLOCK_BYTES
    while True:
        try:
            reader = pa_csv.open_csv(path, read_options=pa_csv.ReadOptions(block_size=block, encoding="utf8"),
                                     parse_options=pa_csv.ParseOptions(newlines_in_values=True),
                                     convert_options=options)
            return pa.Table.from_batches(list(reader), schema=reader.schema).to_pandas()
        except pa.ArrowInvalid as exc:
            # A row longer than a block (long free text) needs larger blocks; anything else is the file's fault.
            if "straddl" in str(exc) and block < path.stat().st_size:
                block *= 4
                continue
            raise SpecError(f"{where}: unreadable CSV: {bad_line(path) or _without_values(exc)}") from exc


def _without_values(exc: Exception) -> str:
    # Arrow quotes the offending row after "got N:"; keep the count, drop the row.
    return re.sub(r"(got \d+):.*", r"\1", str(exc).splitlines()[0])


def read_sources(spec: SuiteSpec) -> dict[str, pd.DataFrame]:
    return {name: read_source_table(name, src, spec) for name, src in spec.sources.tables.items()}


def _cell(v):
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return None
    return v.item() if hasattr(v, "item") else v


def frame_rows(df: pd.DataFrame) -> list[dict]:
    """Rows as plain Python dicts with None for missing values (what SQL inserts want)."""
    cols = list(df.columns)
    if not cols:
        return [{} for _ in range(len(df))]
    return [dict(zip(cols, row)) for row in zip(*(_cells(df.iloc[:, i]) for i in range(len(cols))))]


def iter_frame_rows(df: pd.DataFrame) -> Iterator[dict]:
    """frame_rows a block at a time: a large table is never one list of dicts."""
    if not len(df.columns):
        yield from ({} for _ in range(len(df)))
    for block in iter_frame_columns(df):
        yield from (dict(zip(block.names, row)) for row in zip(*block.values))


def iter_frame_columns(df: pd.DataFrame) -> Iterator[Columns]:
    """frame_rows' values a block of rows at a time, column by column: a large table is inserted without ever being
    one list of dicts, nor a dict per row."""
    names = list(df.columns)
    for start in range(0, len(df), HASH_BLOCK_ROWS):
        block = df.iloc[start:start + HASH_BLOCK_ROWS]
        yield Columns(names, [_cells(block.iloc[:, i]) for i in range(block.shape[1])])


class FrameRows(Mapping[str, list[dict]]):
    """Tables as frame_rows, each converted when first looked up: a deriver that never reads a large
    background table never pays for it."""

    def __init__(self, frames: Mapping[str, pd.DataFrame]):
        self._frames, self._rows = dict(frames), {}

    def __getitem__(self, name: str) -> list[dict]:
        if name not in self._rows:
            self._rows[name] = frame_rows(self._frames[name])
        return self._rows[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._frames)

    def __len__(self) -> int:
        return len(self._frames)


def frame_sha256(df: pd.DataFrame, key: list[str] | None = None) -> str:
    """The table hash of a frame: rows sorted by `key` (default every column), hashed a block at a time."""
    ordered = _sorted(df, key or list(df.columns)) if len(df) else df
    digest = TableHash(list(df.columns))
    if not len(df.columns):
        digest.add_rows([()] * len(df))
    for start in range(0, len(ordered) if len(df.columns) else 0, HASH_BLOCK_ROWS):
        block = ordered.iloc[start:start + HASH_BLOCK_ROWS]
        digest.add_values([_hashed_cells(block.iloc[:, i]) for i in range(block.shape[1])])
    return digest.hexdigest()


def _hashed_cells(series: pd.Series) -> list | pa.Array:
    """_cells, or for text the Arrow array itself: hashing takes plain text from Arrow as it is, where a Python
    string per value and back to Arrow was about 1 s of a 1M-row build's CPU."""
    if not isinstance(series.dtype, pd.StringDtype):
        return _cells(series)
    text = pa.array(series)  # a block that straddles chunks of the column comes as a ChunkedArray
    return text.combine_chunks() if isinstance(text, pa.ChunkedArray) else text


def _sorted(df: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """df.sort_values(key, kind="stable"), missing values last; a key of text only is sorted by Arrow (UTF-8 bytes
    order as code points do, stably, nulls last), in a fraction of pandas' time and memory for a million rows."""
    if not all(df[c].dtype == object or isinstance(df[c].dtype, pd.StringDtype) for c in key):
        return df.sort_values(key, kind="stable")  # categories sort in their own order, numbers as numbers
    try:
        columns = [pa.array(df[c], pa.string()) for c in key]
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):  # numbers, dates, mixed values, lone surrogates
        return df.sort_values(key, kind="stable")
    names = [str(i) for i in range(len(key))]
    order = pc.sort_indices(pa.table(dict(zip(names, columns))), sort_keys=[(n, "ascending") for n in names],
                            null_placement="at_end")
    return df.take(order.to_numpy())


def _cells(series: pd.Series) -> list:
    """The column's values as _cell gives them; text columns (most of a CSV export) without a call per cell."""
    if isinstance(series.dtype, pd.StringDtype):
        return series.to_numpy(dtype=object, na_value=None).tolist()
    return [_cell(v) for v in series.astype(object)]


def snapshot_sha256(tables: dict[str, pd.DataFrame], keys: dict[str, list[str]] | None = None) -> str:
    return combine_sha256({n: frame_sha256(df, (keys or {}).get(n)) for n, df in tables.items()})


def write_snapshot(tables: dict[str, pd.DataFrame], dest: str | Path, meta: dict | None = None) -> str:
    """Write every table as Parquet into `dest` atomically (it replaces an older snapshot whole); returns the hash."""
    digest = snapshot_sha256(tables)
    with staged_dir(dest) as tmp:
        for name, df in tables.items():
            df.to_parquet(tmp / f"{name}.parquet", index=False)
        rows = {n: len(d) for n, d in tables.items()}
        write_json(tmp / "snapshot.json", {"sha256": digest, "tables": rows, **(meta or {})})
    return digest


def read_snapshot(src: str | Path) -> dict[str, pd.DataFrame]:
    src = Path(src)
    if not (src / "snapshot.json").is_file():
        raise FileNotFoundError(f"{src}: not a snapshot (no snapshot.json)")
    return {p.stem: pq.read_table(p).to_pandas() for p in sorted(src.glob("*.parquet"))}
