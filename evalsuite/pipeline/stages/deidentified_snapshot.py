"""The de-identified snapshot: personal data pseudonymised or replaced; gates no_residual_pii and joins_preserved."""
from __future__ import annotations

import pandas as pd
from pydantic import BaseModel

from evalsuite.core.hashing import file_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import md_table
from evalsuite.deid.residual import ResidualReport, residual_check
from evalsuite.deid.rules import load_rules
from evalsuite.deid.transform import deidentify
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Gate, GateResult, Stage, StageOutput, blocked, passed, require
from evalsuite.pipeline.stages import seed_snapshot as seed_stage
from evalsuite.sourcing.quality import TableExpectations
from evalsuite.sourcing.snapshot import read_snapshot, write_snapshot
from evalsuite.sourcing.spec import SuiteSpec


class DeidRecord(BaseModel):
    """deid.json: the de-identified snapshot's hash, its residual scan and join counts, and the seed it came from."""

    sha256: str
    rows: dict[str, int]
    residual: ResidualReport | None
    joins: dict[str, dict[str, int]]
    provenance: dict | None
    seed_sha256: str | None = None


def join_counts(tables: dict[str, pd.DataFrame], exps: dict[str, TableExpectations]) -> dict[str, int]:
    """For each foreign key, how many child rows find their parent."""
    out = {}
    for t, e in exps.items():
        for col, ref in e.foreign_keys.items():
            rt, rc = ref.split(".")
            if t in tables and rt in tables and col in tables[t]:
                child = tables[t][col].dropna()
                out[f"{t}.{col}->{ref}"] = int(child.isin(set(tables[rt][rc].dropna())).sum())
    return out


def deidentify_seed(spec: SuiteSpec, paths: Paths) -> DeidRecord:
    """De-identify the quality-checked seed; deid.json records the residual scan and join counts."""
    require(seed_stage.STAGE, spec, paths)
    seed = read_snapshot(paths.seed)
    seed_sha = seed_stage.record_for(paths.quality, seed_stage.SnapshotResult, paths.seed, "source_quality",
                                     "quality check").sha256
    if not spec.deid:
        sha = write_snapshot(seed, paths.deid, {"deidentification": None})
        record = DeidRecord(sha256=sha, rows={n: len(d) for n, d in seed.items()}, residual=None, joins={},
                            provenance=None, seed_sha256=seed_sha)
    else:
        rules = load_rules(spec.resolve(spec.deid))
        result = deidentify(seed, rules)
        residual = residual_check(seed, result.tables, rules)
        exps = seed_stage.expectations(spec)
        before, after = join_counts(seed, exps), join_counts(result.tables, exps)
        prov = result.provenance()
        sha = write_snapshot(result.tables, paths.deid, {"deidentification": prov, "residual_passed": residual.passed})
        record = DeidRecord(sha256=sha, rows={n: len(d) for n, d in result.tables.items()}, residual=residual,
                            joins={k: {"before": before[k], "after": after.get(k, 0)} for k in before},
                            provenance=prov, seed_sha256=seed_sha)
    write_json(paths.deid_report, record.model_dump(mode="json"))
    return record


def on_record(paths: Paths) -> DeidRecord:
    """The record of exactly the de-identified snapshot on disk."""
    return seed_stage.record_for(paths.deid_report, DeidRecord, paths.deid, "no_residual_pii", "residual check")


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    de = deidentify_seed(spec, paths)
    meta = {"sha256": de.sha256, "seed_sha256": de.seed_sha256 or "", "rows": sum(de.rows.values()),
            "row_counts": seed_stage.rows_table(de.rows), "snapshot": paths.deid}
    if de.provenance:
        meta |= {"method": de.provenance["method"], "rule_set_sha256": de.provenance["rule_set_sha256"]}
    if de.residual:
        meta |= {"cells_scanned": de.residual.cells_scanned, "residual_values": de.residual.total}
    return StageOutput(de.sha256, meta)


def no_residual_pii(spec: SuiteSpec, paths: Paths) -> GateResult:
    r = on_record(paths).residual
    if r is None:
        return passed("no_residual_pii", "no de-identification rules; the rights review found no personal columns")
    meta = {"cells_scanned": r.cells_scanned, "residual_values": r.total, "counts": r.counts}
    if r.findings:  # where, never the value itself
        meta["findings"] = md_table(["table", "column", "row", "kind", "looks like"],
                                    [[f.table, f.column, f.row, f.kind, f.source or ""] for f in r.findings[:50]])
    if not r.passed:
        where = sorted({f"{f.table}.{f.column}" for f in r.findings})
        return blocked("no_residual_pii", f"{r.total} personal value(s) left after de-identification in "
                                          f"{', '.join(where[:5])}", **meta)
    return passed("no_residual_pii", f"{r.cells_scanned} cells scanned, nothing personal left", **meta)


def joins_preserved(spec: SuiteSpec, paths: Paths) -> GateResult:
    joins = on_record(paths).joins
    meta = {"joins": md_table(["foreign key", "rows joined before", "after"],
                              [[k, v["before"], v["after"]] for k, v in sorted(joins.items())])} if joins else {}
    broken = [k for k, v in joins.items() if v["before"] != v["after"]]
    if broken:
        return blocked("joins_preserved", f"de-identification broke {len(broken)} join(s): {', '.join(broken[:5])}",
                       **meta)
    return passed("joins_preserved", f"{len(joins)} foreign-key join(s) preserved", **meta)


def _config(spec: SuiteSpec, paths: Paths) -> list:
    return [file_sha256(spec.resolve(p)) if p else None for p in (spec.deid, spec.quality)]


STAGE = Stage(
    name="deidentified_snapshot", deps=("seed_snapshot",), module=__name__, kinds=frozenset({"parquet"}), run=run,
    config=_config, description="The seed with personal data pseudonymised or replaced; residual scan recorded.",
    gates=(Gate("no_residual_pii", "deidentified_snapshot", no_residual_pii,
                description="No original personal value or personal-looking pattern is left after de-identification."),
           Gate("joins_preserved", "deidentified_snapshot", joins_preserved,
                description="Every foreign-key join that held before de-identification still holds after it.")),
)
