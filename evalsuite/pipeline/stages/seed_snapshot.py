"""The seed snapshot: the source tables as Parquet with a content hash; gates source_quality, personal_data_declared."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from evalsuite.core.hashing import file_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import md_list, md_table
from evalsuite.deid.keys import load_key
from evalsuite.deid.rules import HIDING_RULES, load_rules
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Gate, GateError, GateResult, Stage, StageOutput, blocked, passed, require
from evalsuite.pipeline.stages import rights_review
from evalsuite.sourcing import pii_scan
from evalsuite.sourcing.quality import QualityReport, TableExpectations, check_tables, load_expectations
from evalsuite.sourcing.rights import load_manifest
from evalsuite.sourcing.snapshot import read_sources, write_snapshot
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.sourcing.synthetic import synthetic_lies

R = TypeVar("R", bound=BaseModel)


class SnapshotResult(BaseModel):
    """quality.json: the seed snapshot's hash and row counts, and its quality report."""

    sha256: str
    rows: dict[str, int]
    quality: QualityReport | None = None


def expectations(spec: SuiteSpec) -> dict[str, TableExpectations]:
    return load_expectations(spec.resolve(spec.quality)) if spec.quality else {}


def deid_key_ready(spec: SuiteSpec) -> None:
    """The de-identification key the spec's rules name is there and long enough (DeidKeyError otherwise): checked
    before the raw records are copied anywhere, since without it they could not be de-identified. Rules that use
    no key (keep, drop, generalise only) need none."""
    if spec.deid and (rules := load_rules(spec.resolve(spec.deid))).needs_key:
        load_key(rules)


def build_seed(spec: SuiteSpec, paths: Paths) -> SnapshotResult:
    """Read the sources, check them with great-expectations, write the seed snapshot and quality.json."""
    require(rights_review.STAGE, spec, paths)
    deid_key_ready(spec)
    tables = read_sources(spec)
    report = check_tables(tables, expectations(spec), declared_columns(spec)) if spec.quality else None
    sha = write_snapshot(tables, paths.seed, {"quality_success": report.success if report else None})
    result = SnapshotResult(sha256=sha, rows={n: len(d) for n, d in tables.items()}, quality=report)
    write_json(paths.quality, result.model_dump(mode="json"))
    return result


def rows_table(rows: dict[str, int]):
    return md_table(["table", "rows"], [[n, c] for n, c in sorted(rows.items())])


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    seed = build_seed(spec, paths)
    q = seed.quality
    return StageOutput(seed.sha256, {
        "sha256": seed.sha256, "rows": sum(seed.rows.values()), "row_counts": rows_table(seed.rows),
        "quality_passed": q.success if q else "no expectations declared",
        "expectations_evaluated": len(q.results) if q else 0, "snapshot": paths.seed})


def record_for(record: Path, model: type[R], snapshot: Path, gate: str, check: str) -> R:
    """A stage's recorded check, refused unless it exists and was made for exactly the snapshot on disk."""
    if not record.is_file():
        raise GateError(gate, f"no {check} on record for {snapshot.name}")
    result = model.model_validate_json(record.read_text())
    meta = snapshot / "snapshot.json"
    if not meta.is_file() or result.sha256 != json.loads(meta.read_text())["sha256"]:
        raise GateError(gate, f"{snapshot.name} changed after its {check}")
    return result


def source_quality(spec: SuiteSpec, paths: Paths) -> GateResult:
    seed = record_for(paths.quality, SnapshotResult, paths.seed, "source_quality", "quality check")
    q = seed.quality
    if q is None:
        return passed("source_quality", "the spec declares no expectations")
    stats = md_table(["table", "evaluated", "successful", "success %"],
                     [[t, int(s.get("evaluated_expectations", 0)), int(s.get("successful_expectations", 0)),
                       round(s.get("success_percent") or 0, 1)] for t, s in sorted(q.statistics.items())])
    meta = {"statistics": stats, "expectations": len(q.results), "failed": len(q.failures)}
    if not q.success:
        return blocked("source_quality", "; ".join(q.summary()[:3]), failures=md_list(q.summary()[:20]), **meta)
    return passed("source_quality", f"{len(q.results)} expectations met", **meta)


def _declarations(spec: SuiteSpec) -> dict[str, set[str]]:
    """The source's columns by what declares them: "personal" and "synthetic" (the manifests), "hidden" (a rule
    of de-identification hides their values), "ruled" (any rule) and "free_text" (scrubbed as notes)."""
    manifests = [load_manifest(spec.resolve(p)) for p in spec.rights]
    mine = [m for m in manifests if m.source == spec.sources.name]
    out = {"personal": {c for m in mine for c in m.personal_columns},
           "synthetic": {c for m in mine for c in m.synthetic_columns}, "hidden": set(), "ruled": set(),
           "free_text": set()}
    if spec.deid:
        rules = load_rules(spec.resolve(spec.deid))
        out["ruled"] = rules.ruled_columns()
        out["hidden"] = {f"{t}.{c}" for t, tr in rules.tables.items() for c, r in tr.columns.items()
                         if r.rule in HIDING_RULES}
        out["free_text"] = {f"{t}.{c}" for t, tr in rules.tables.items() for c in tr.free_text}
    return out


def declared_columns(spec: SuiteSpec) -> set[str]:
    """Columns declared to hold personal-looking data: the manifest's personal or synthetic columns, and every
    column the de-identification rules transform, keep on purpose or scrub as free text."""
    d = _declarations(spec)
    return d["personal"] | d["synthetic"] | d["ruled"] | d["free_text"]


def _synthetic_lies(spec: SuiteSpec, paths: Paths, findings: list) -> list[str]:
    """Declared-synthetic columns no rule hides whose values are personal originals (evalsuite.sourcing.synthetic)."""
    d = _declarations(spec)
    elsewhere = d["personal"] | d["free_text"] | {f.ref for f in findings}
    manifests = ", ".join(Path(p).name for p in spec.rights)
    return synthetic_lies(paths.seed, d["synthetic"] - d["hidden"], findings, elsewhere, manifests)


def personal_data_declared(spec: SuiteSpec, paths: Paths) -> GateResult:
    scan = pii_scan.scan_on_record(paths.seed, paths.pii_scan, declared_columns(spec))
    meta = {"findings": md_table(["column", "detector", "rows", "examples"],
                                 [[f.ref, f.detector, f.count, ", ".join(f.examples)] for f in scan.findings]),
            "columns_scanned": len(scan.columns), "record": str(paths.pii_scan)}
    if scan.undeclared:
        return blocked("personal_data_declared", "; ".join(f"{f.line()} in a column not declared personal"
                                                           for f in scan.blocking()), **meta)
    if lies := _synthetic_lies(spec, paths, scan.findings):
        return blocked("personal_data_declared", "; ".join(lies), **meta)
    found = sorted({f.ref for f in scan.findings})
    return passed("personal_data_declared", f"{len(scan.columns)} columns scanned; personal-looking values only in "
                  f"declared columns ({', '.join(found) or 'none found'})", scanned=", ".join(scan.columns), **meta)


STAGE = Stage(
    name="seed_snapshot", deps=("rights_review",), module=__name__, kinds=frozenset({"parquet"}), run=run,
    description="The source tables as a Parquet snapshot with a canonical content hash.",
    config=lambda spec, paths: file_sha256(spec.resolve(spec.quality)) if spec.quality else None,
    gates=(Gate("source_quality", "seed_snapshot", source_quality,
                description="The source tables meet their great-expectations suite (keys, required columns, "
                            "joins, value sets)."),
           Gate("personal_data_declared", "seed_snapshot", personal_data_declared,
                description="Every source column holding personal-looking values (e-mails, phones, IBANs, cards, "
                            "person names, postal addresses) is declared personal, synthetic or de-identified."),),
)
