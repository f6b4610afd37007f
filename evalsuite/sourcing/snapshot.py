"""Snapshots: a set of tables as Parquet on disk, with canonical content hashes.

Source tables are read from CSV, Parquet or a SQL query (SQLAlchemy), then
written as a snapshot folder whose hash does not depend on file bytes, row
order or how a number was typed.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
from sqlalchemy import create_engine, text

from evalsuite.core.hashing import combine_sha256, table_sha256
from evalsuite.core.io import staged_dir, write_json
from evalsuite.sourcing.spec import SpecError, SuiteSpec, TableSource


def read_source_table(name: str, src: TableSource, spec: SuiteSpec) -> pd.DataFrame:
    """One source table, as strings and numbers exactly as delivered (no type guessing on ids)."""
    if src.url:
        engine = create_engine(src.url)
        try:
            with engine.connect() as conn:
                return pd.read_sql_query(text(src.query), conn)
        finally:
            engine.dispose()
    path = spec.resolve(src.path)
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix == ".csv":
        try:
            return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        except pd.errors.ParserError as exc:
            raise SpecError(f"{path}: sources.tables.{name}: unreadable CSV: {str(exc).splitlines()[0]}") from exc
    raise SpecError(f"{path}: sources.tables.{name}: unsupported file type {path.suffix!r} (csv, parquet or url+query)")


def read_sources(spec: SuiteSpec) -> dict[str, pd.DataFrame]:
    return {name: read_source_table(name, src, spec) for name, src in spec.sources.tables.items()}


def _cell(v):
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return None
    return v.item() if hasattr(v, "item") else v


def frame_rows(df: pd.DataFrame) -> list[dict]:
    """Rows as plain Python dicts with None for missing values (what SQL inserts want)."""
    cols = list(df.columns)
    return [dict(zip(cols, map(_cell, row))) for row in df.itertuples(index=False, name=None)]


def frame_sha256(df: pd.DataFrame, key: list[str] | None = None) -> str:
    ordered = df.sort_values(key or list(df.columns), kind="stable") if len(df) else df
    rows = [[_cell(v) for v in row] for row in ordered.astype(object).itertuples(index=False, name=None)]
    return table_sha256(list(df.columns), rows)


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
