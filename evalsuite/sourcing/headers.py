"""A source file's column names, read from its CSV header or Parquet schema without reading its rows; and where a
CSV goes wrong, found by reading it again slowly. Used when the spec is read and when the seed is."""
from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def file_columns(path: Path, where: str, error: type[Exception]) -> list[str]:
    """A CSV or Parquet file's column names, from its header or schema alone (the rows are not read); a file
    that cannot be read raises `error` as one line starting with `where`."""
    if path.suffix == ".parquet":
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as exc:  # pyarrow's errors for a file that is not Parquet
            raise error(f"{where}: not a readable Parquet file: {first_line(exc)}") from exc
        index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
        return [c for c in schema.names if c not in index]  # a pandas index read_parquet restores, not a column
    if path.suffix == ".csv":
        return csv_header(path, where, error)
    raise error(f"{where}: unsupported file type {path.suffix!r} (csv, parquet or url+query)")


def csv_header(path: Path, where: str, error: type[Exception]) -> list[str]:
    """The column names, which must be distinct (a duplicate would make one column shadow another)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:  # a byte-order mark is not part of the first name
            columns = next(csv.reader(fh), None)
    except UnicodeDecodeError as exc:
        raise error(f"{where}: unreadable CSV: {bad_line(path) or exc}") from exc
    except csv.Error as exc:
        raise error(f"{where}: unreadable CSV: line 1: {exc}") from exc
    if not columns:
        raise error(f"{where}: unreadable CSV: no header line (the file is empty)")
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise error(f"{where}: unreadable CSV: line 1: column(s) {repeated} named more than once")
    return columns


def bad_line(path: Path) -> str | None:
    """Where a CSV the block reader refused goes wrong: the first line that is not UTF-8, or whose row has
    another number of fields than the header. Read again slowly, only when reading failed."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return (f"line {number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                        "export it as UTF-8")
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            width = len(next(reader, []))
            for row in reader:
                if row and len(row) != width:
                    return f"line {reader.line_num}: {len(row)} fields where the header has {width}"
        except csv.Error as exc:
            return f"line {reader.line_num}: {exc}"
    return None


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
