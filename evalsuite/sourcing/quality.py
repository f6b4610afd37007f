"""Data-quality checks on the tables a test world is built from, run by Great Expectations.

Per table we declare keys, required columns, foreign keys, value sets and ranges;
they become GX expectations, validated in one ephemeral GX context per call. The
report keeps GX's own statistics and counts per expectation, and up to five of
the offending values of a failure; the tables may still hold personal data when
they are checked, so values of the columns the caller names personal are masked.
"""
from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from evalsuite.core.hashing import canon
from evalsuite.core.io import model_from, read_yaml
from evalsuite.sourcing.pii_scan import mask
from evalsuite.sourcing.rights import ColumnRef

if TYPE_CHECKING:
    from great_expectations.expectations import Expectation

Bound = int | float | datetime | date
SHOWN_VALUES = 5  # offending values a failure shows


class QualityConfigError(ValueError):
    """Expectations that cannot be checked against these tables at all."""


class Range(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min: Bound | None = None
    max: Bound | None = None

    @model_validator(mode="after")
    def _bounded(self) -> Range:
        if self.min is None and self.max is None:
            raise ValueError("a range needs min, max or both")
        return self


class TableExpectations(BaseModel):
    """What one table must satisfy."""

    model_config = ConfigDict(extra="forbid")

    primary_key: list[str] = Field(default_factory=list)
    # Required columns must exist and hold no nulls.
    required: list[str] = Field(default_factory=list)
    foreign_keys: dict[str, ColumnRef] = Field(default_factory=dict)
    value_sets: dict[str, list[str | int | float | bool]] = Field(default_factory=dict)
    ranges: dict[str, Range] = Field(default_factory=dict)

    def columns(self) -> set[str]:
        return {*self.primary_key, *self.required, *self.foreign_keys, *self.value_sets, *self.ranges}


class _Expectations(RootModel[dict[str, TableExpectations]]):
    """A quality file: table name -> its expectations."""


def load_expectations(path: str | Path) -> dict[str, TableExpectations]:
    """The per-table expectations in a YAML file (an empty file declares none); a problem raises a
    one-line QualityConfigError naming the file and the field."""
    data = read_yaml(path, QualityConfigError)
    return model_from(path, {} if data is None else data, _Expectations, QualityConfigError).root


class ExpectationOutcome(BaseModel):
    """One GX expectation result, reduced to counts and a few offending values (masked in personal columns)."""

    model_config = ConfigDict(extra="forbid")

    expectation_type: str
    table: str
    column: str  # compound keys: columns joined by ","
    success: bool
    element_count: int | None = None
    unexpected_count: int | None = None
    unexpected_percent: float | None = None
    missing_count: int | None = None
    exception: str | None = None
    unexpected_values: list[str] = Field(default_factory=list)  # distinct, at most SHOWN_VALUES

    def describe(self) -> str:
        what = f"{self.expectation_type} on {self.table}.{self.column}"
        if self.exception:
            return f"{what}: error: {self.exception}"
        if self.unexpected_count is not None and self.element_count is not None:
            shown = f", e.g. {', '.join(self.unexpected_values)}" if self.unexpected_values else ""
            return f"{what}: {self.unexpected_count} of {self.element_count} rows unexpected{shown}"
        return f"{what}: {'passed' if self.success else 'failed'}"


class QualityReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    success: bool
    results: list[ExpectationOutcome]
    # GX's suite statistics per table: evaluated/successful/unsuccessful expectations, success_percent.
    statistics: dict[str, dict[str, float]]

    @property
    def failures(self) -> list[ExpectationOutcome]:
        return [r for r in self.results if not r.success]

    def summary(self) -> list[str]:
        return [f.describe() for f in self.failures]


# ---------------------------------------------------------------- building expectations


def _inbound_columns(table: str, expectations: Mapping[str, TableExpectations]) -> set[str]:
    """Columns of `table` that other tables' foreign keys point at."""
    refs = (ref for exp in expectations.values() for ref in exp.foreign_keys.values())
    return {ref.split(".", 1)[1] for ref in refs if ref.split(".", 1)[0] == table}


def _bound(value: Bound | None, series: pd.Series) -> Any:
    # GX compares cell by cell: a datetime64 column holds Timestamps, which refuse plain dates.
    plain_date = isinstance(value, date) and not isinstance(value, datetime)
    if plain_date and pd.api.types.is_datetime64_any_dtype(series):
        return pd.Timestamp(value).to_pydatetime()
    return value


def _foreign_values(child: pd.Series, ref: str, tables: Mapping[str, pd.DataFrame]) -> list[Any] | None:
    """The referenced column's values, or None if it is missing (its own table reports that).

    GX serialises an expectation's arguments dozens of times per validation, so its cost
    grows with the value set; parent keys the child never uses cannot change the result
    and are left out.
    """
    table, column = ref.split(".", 1)
    if column not in tables[table].columns:
        return None
    parent = pd.Index(tables[table][column].dropna().unique())
    return parent.intersection(pd.Index(child.dropna().unique())).tolist()


def _expectations(
    df: pd.DataFrame, exp: TableExpectations, tables: Mapping[str, pd.DataFrame], inbound: set[str]
) -> list[Expectation]:
    import great_expectations as gx

    ge = gx.expectations
    present = set(df.columns)
    out: list[Expectation] = [ge.ExpectColumnToExist(column=c) for c in sorted(exp.columns() | inbound)]
    # Value checks on a missing column would only repeat the existence failure as a GX error.
    not_null = [c for c in dict.fromkeys(exp.primary_key + exp.required) if c in present]
    out += [ge.ExpectColumnValuesToNotBeNull(column=c) for c in not_null]
    if len(exp.primary_key) == 1 and exp.primary_key[0] in present:
        out.append(ge.ExpectColumnValuesToBeUnique(column=exp.primary_key[0]))
    elif len(exp.primary_key) > 1 and set(exp.primary_key) <= present:
        out.append(ge.ExpectCompoundColumnsToBeUnique(column_list=list(exp.primary_key)))
    for column, ref in sorted(exp.foreign_keys.items()):
        if column in present and (values := _foreign_values(df[column], ref, tables)) is not None:
            out.append(ge.ExpectColumnValuesToBeInSet(column=column, value_set=values))
    for column, values in sorted(exp.value_sets.items()):
        if column in present:
            out.append(ge.ExpectColumnValuesToBeInSet(column=column, value_set=list(values)))
    for column, rng in sorted(exp.ranges.items()):
        if column in present:
            low, high = _bound(rng.min, df[column]), _bound(rng.max, df[column])
            out.append(ge.ExpectColumnValuesToBeBetween(column=column, min_value=low, max_value=high))
    return out


# ---------------------------------------------------------------- running GX


def _context() -> Any:
    # Imported here: GX takes seconds to import and only quality checks need it.
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,  # no usage events leave the machine
        progress_bars=ProgressBarsConfig(globally=False),  # no tqdm bars per validation
    )
    return gx.get_context(mode="ephemeral", project_config=config)


@contextmanager
def _no_fingerprints() -> Iterator[None]:
    """GX's pandas engine fingerprints every batch it loads (a pandas hash of the whole frame, md5 of it) for a
    batch marker we never read: twice per table, 1.7 s of a 1M-row build's CPU. Frames larger than its
    HASH_THRESHOLD go unfingerprinted, so the threshold is 0 while we validate; results and statistics are the
    same."""
    from great_expectations.execution_engine import pandas_execution_engine as engine

    before, engine.HASH_THRESHOLD = engine.HASH_THRESHOLD, 0
    try:
        yield
    finally:
        engine.HASH_THRESHOLD = before


def _exception(info: Mapping[str, Any] | None) -> str | None:
    """GX reports errors either flat or keyed by metric id; return the first message."""
    if not info:
        return None
    entries = [info] if "raised_exception" in info else [v for v in info.values() if isinstance(v, Mapping)]
    messages = [e.get("exception_message") or "exception" for e in entries if e.get("raised_exception")]
    return messages[0] if messages else None


def _shown(values: list[Any], masked: bool) -> list[str]:
    """Up to SHOWN_VALUES distinct offending values as text (a compound key as a tuple); nulls show nothing."""
    def show(value: Any) -> str:
        return mask(canon(value), "value") if masked else repr(canon(value))

    out: list[str] = []
    for v in values:
        if isinstance(v, Mapping):  # a compound key's values
            text = "(" + ", ".join(show(x) for x in v.values()) + ")"
        elif pd.isna(v):
            continue
        else:
            text = show(v)
        if text not in out:
            out.append(text)
    return out[:SHOWN_VALUES]


def _outcome(table: str, result: Any, personal: Collection[str]) -> ExpectationOutcome:
    kwargs = result.expectation_config.kwargs
    columns = [kwargs["column"]] if kwargs.get("column") else list(kwargs.get("column_list") or [])
    column = ",".join(columns)
    stats = result.result or {}
    masked = any(f"{table}.{c}" in personal for c in columns)
    return ExpectationOutcome(
        expectation_type=result.expectation_config.type,
        table=table,
        column=column,
        success=bool(result.success),
        element_count=stats.get("element_count"),
        unexpected_count=stats.get("unexpected_count"),
        unexpected_percent=stats.get("unexpected_percent"),
        missing_count=stats.get("missing_count"),
        exception=_exception(result.exception_info),
        unexpected_values=[] if result.success else _shown(stats.get("partial_unexpected_list") or [], masked),
    )


def check_tables(
    tables: Mapping[str, pd.DataFrame], expectations: Mapping[str, TableExpectations],
    personal: Collection[str] = (),
) -> QualityReport:
    """Validate every table that has expectations; one GX context serves all of them. Offending values of
    the `personal` columns (table.column) are shown masked."""
    import great_expectations as gx

    # Foreign-key targets are validated too, if only for the existence of the referenced column.
    targets = {ref.split(".", 1)[0] for exp in expectations.values() for ref in exp.foreign_keys.values()}
    missing = sorted((set(expectations) | targets) - set(tables))
    if missing:
        raise QualityConfigError(f"expectations name tables {missing} which are not among the tables")
    source = _context().data_sources.add_pandas("evalsuite")
    results: list[ExpectationOutcome] = []
    statistics: dict[str, dict[str, float]] = {}
    for name in sorted(set(expectations) | targets):
        df, exp = tables[name], expectations.get(name, TableExpectations())
        suite = gx.ExpectationSuite(name=f"{name}_quality")
        for expectation in _expectations(df, exp, tables, _inbound_columns(name, expectations)):
            suite.add_expectation(expectation)
        with _no_fingerprints():
            batch = (
                source.add_dataframe_asset(name)
                .add_batch_definition_whole_dataframe("all_rows")
                .get_batch(batch_parameters={"dataframe": df})
            )
            validation = batch.validate(suite, result_format="BASIC")
        statistics[name] = dict(validation.statistics)
        results += sorted((_outcome(name, r, personal) for r in validation.results), key=_order)
    return QualityReport(success=all(r.success for r in results), results=results, statistics=statistics)


def _order(outcome: ExpectationOutcome) -> tuple[str, str]:
    # GX returns results in its own order (errors first); sort for stable reports.
    return outcome.expectation_type, outcome.column
