"""Column work done once per distinct value (factorize, map, expand back to rows); dates kept in their own form."""
from __future__ import annotations

from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from evalsuite.deid.rules import DeidError

# Rules map the distinct values of a column, never row by row, so a million-row table
# with a hundred thousand customers costs a hundred thousand transformations.


def factorize(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Per-row codes into the list of distinct values; nulls get code -1."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return codes, uniques.tolist()


def expand(codes: np.ndarray, mapped: list[Any], like: pd.Series) -> pd.Series:
    """Per-row values from per-unique values; code -1 (null) stays null."""
    table = np.empty(len(mapped) + 1, dtype=object)
    table[: len(mapped)] = mapped
    table[-1] = None
    return pd.Series(table[codes], index=like.index, name=like.name)


def as_datetimes(series: pd.Series, where: str) -> pd.Series:
    """The column as datetime64; anything that is not dates fails naming `where` (table.column)."""
    if pd.api.types.is_datetime64_any_dtype(series):
        return series
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise DeidError(f"{where}: expected dates, got {series.dtype} values")
    texts = series.dropna()
    iso = len(texts) > 0 and isinstance(texts.iloc[0], str)
    try:
        return pd.to_datetime(series, format="ISO8601" if iso else None)
    except (ValueError, TypeError) as exc:
        raise DeidError(f"{where}: expected ISO dates: {exc}") from exc


def like_original(shifted: pd.Series, original: pd.Series) -> pd.Series:
    """Give shifted dates back in the original's form (datetime64, date objects or ISO text)."""
    if pd.api.types.is_datetime64_any_dtype(original):
        return shifted
    sample = original.dropna()
    sample = sample.iloc[0] if len(sample) else None
    codes, uniques = factorize(shifted)
    if isinstance(sample, date) and not isinstance(sample, datetime):
        return expand(codes, [ts.date() for ts in uniques], original)
    date_only = isinstance(sample, str) and len(sample.strip()) == 10
    texts = [ts.strftime("%Y-%m-%d") if date_only else ts.isoformat() for ts in uniques]
    return expand(codes, texts, original)

