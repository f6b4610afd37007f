"""The supplier delivery as received: one content hash of the raw inputs, observed rather than built."""
from __future__ import annotations

from evalsuite.core.hashing import combine_sha256, file_sha256, json_sha256
from evalsuite.core.markdown import md_table
from evalsuite.pipeline.stage import StageOutput
from evalsuite.sourcing.spec import SuiteSpec


def source_fingerprint(spec: SuiteSpec) -> str:
    """Hash of the raw inputs as delivered: file bytes, or the query text of SQL sources."""
    parts = {}
    for name, src in spec.sources.tables.items():
        parts[name] = file_sha256(spec.resolve(src.path)) if src.path else json_sha256([src.url, src.query])
    return combine_sha256(parts)


def observe(spec: SuiteSpec) -> StageOutput:
    rows = []
    for name, src in sorted(spec.sources.tables.items()):
        if src.path:
            path = spec.resolve(src.path)
            rows.append([name, src.path, path.stat().st_size, file_sha256(path)[:12]])
        else:
            rows.append([name, "(sql query)", "", json_sha256([src.url, src.query])[:12]])
    return StageOutput(source_fingerprint(spec), {"source": spec.sources.name, "tables": len(rows),
                                                  "files": md_table(["table", "file", "bytes", "sha256"], rows)})
