"""The suite pipeline as the Dagster assets see it, computed without Dagster.

Each asset in `assets/` calls one stage function here. A stage runs a build
step (evalsuite.pipeline.build, the harness, the scorecard), writes its artifacts under
the home folder and returns a StageOutput: the content hash that becomes the
asset's data version, and the metadata a reviewer wants without opening files.
Each gate (a blocking asset check) calls `gate(name, spec, paths)`, which reads
what the stage recorded on disk and always returns a verdict, never raises.

Task-level gates follow the suite's quarantine rule: tasks failing a gate are
quarantined; the gate blocks (ERROR) when the quarantine exceeds what the spec
allows, and only warns (WARN) while the release is still allowed.
"""
from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalsuite.pipeline import build
from evalsuite.scoring.acceptance import GATES as ACCEPTANCE_GATES
from evalsuite.scoring.acceptance import AcceptanceReport
from evalsuite.pipeline.build import GateError, Paths
from evalsuite.core.hashing import file_sha256, json_sha256
from evalsuite.core.records import TaskRecord
from evalsuite.releases.release import Release, ReleaseError
from evalsuite.sourcing.rights import load_manifest
from evalsuite.sourcing.spec import SuiteSpec



class Markdown(str):
    """Metadata to show as Markdown."""


@dataclass
class StageOutput:
    data_version: str
    metadata: dict[str, Any] = field(default_factory=dict)


def md_table(header: list[str], rows: list[list[Any]]) -> Markdown:
    def cell(v: Any) -> str:
        return str(v).replace("|", "/").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return Markdown("\n".join(lines + ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]))


# ---------------------------------------------------------------- records read by several gates

def _stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


@lru_cache(maxsize=4)
def _tasks_at(stamp: tuple[str, int, int]) -> tuple:
    return tuple(TaskRecord.model_validate_json(line) for line in Path(stamp[0]).read_text().splitlines() if line.strip())


def load_tasks(paths: Paths) -> list:
    """The derived tasks, parsed once per version of tasks.jsonl (seven gates and two stages read them)."""
    return list(_tasks_at(_stamp(paths.tasks)))


@lru_cache(maxsize=4)
def _audit_at(stamp: tuple[str, int, int]) -> tuple[dict, AcceptanceReport]:
    audit = json.loads(Path(stamp[0]).read_text())
    return audit, AcceptanceReport.model_validate({"tasks": audit["tasks"], "summary": audit["summary"]})


# ---------------------------------------------------------------- code versions

def _stage_config(stage: str, spec: SuiteSpec) -> Any:
    files = lambda keys: {k: file_sha256(spec.resolve(getattr(spec, k))) for k in keys if getattr(spec, k)}  # noqa: E731
    return {
        "rights_review": lambda: [spec.needed_uses, [file_sha256(spec.resolve(p)) for p in spec.rights], files(["deid"])],
        "seed_snapshot": lambda: files(["quality"]),
        "deidentified_snapshot": lambda: [files(["deid"]), files(["quality"])],
        "derived_tasks": lambda: spec.derivation.model_dump(mode="json"),
        "acceptance_results": lambda: spec.acceptance.model_dump(mode="json"),
        "suite_release": lambda: [spec.version_prefix, spec.simulator.model_dump(mode="json") if spec.simulator else None],
        "trial_traces": lambda: spec.trial_protocol.model_dump(mode="json"),
    }.get(stage, lambda: None)()


def code_version(stage: str, spec: SuiteSpec) -> str:
    """A short hash of the library code and spec settings a stage depends on: a change marks the asset stale."""
    from evalsuite.pipeline import code_versions

    return code_versions.code_version("evalsuite.pipeline.stages", spec.domain, [stage, _stage_config(stage, spec)])


# ---------------------------------------------------------------- build stages

def observe_sources(spec: SuiteSpec) -> StageOutput:
    rows = []
    for name, src in sorted(spec.sources.tables.items()):
        if src.path:
            path = spec.resolve(src.path)
            rows.append([name, src.path, path.stat().st_size, file_sha256(path)[:12]])
        else:
            rows.append([name, "(sql query)", "", json_sha256([src.url, src.query])[:12]])
    return StageOutput(build.source_fingerprint(spec), {"source": spec.sources.name, "tables": len(rows),
                                                        "files": md_table(["table", "file", "bytes", "sha256"], rows)})


def rights_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    decision = build.review_rights(spec, paths)
    manifests = [load_manifest(spec.resolve(p)) for p in spec.rights]
    licenses = md_table(["source", "license", "licensor", "expires", "permitted uses"],
                        [[m.source, m.license_ref, m.licensor, m.expires or "never", ", ".join(sorted(m.permitted_uses))]
                         for m in manifests])
    reasons = "\n".join(f"- {r}" for r in decision.reasons) or "none"
    return StageOutput(json_sha256(decision.model_dump(mode="json", exclude={"reviewed_on"})), {
        "license_decision": decision.status, "reasons": Markdown(reasons), "licenses": licenses,
        "needed_uses": ", ".join(decision.needed_uses), "manifest_sha256": decision.manifest_sha256,
        "reviewed_on": decision.reviewed_on.isoformat(), "record": paths.rights})


def _rows_table(rows: dict[str, int]) -> Markdown:
    return md_table(["table", "rows"], [[n, c] for n, c in sorted(rows.items())])


def seed_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    seed = build.build_seed(spec, paths)
    q = seed.quality
    return StageOutput(seed.sha256, {
        "sha256": seed.sha256, "rows": sum(seed.rows.values()), "row_counts": _rows_table(seed.rows),
        "quality_passed": q.success if q else "no expectations declared",
        "expectations_evaluated": len(q.results) if q else 0, "snapshot": paths.seed})


def deid_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    de = build.deidentify_seed(spec, paths)
    meta: dict[str, Any] = {"sha256": de.sha256, "seed_sha256": de.seed_sha256 or "", "rows": sum(de.rows.values()),
                            "row_counts": _rows_table(de.rows), "snapshot": paths.deid}
    if de.provenance:
        meta |= {"method": de.provenance["method"], "rule_set_sha256": de.provenance["rule_set_sha256"]}
    if de.residual:
        meta |= {"cells_scanned": de.residual.cells_scanned, "residual_values": de.residual.total}
    return StageOutput(de.sha256, meta)


def policy_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    docs = build.load_policy_docs(spec)
    body = [{"doc": d.doc, "version": d.version, "effective_from": d.effective_from.isoformat(),
             "clauses": [c.id for c in d.clauses], "sha256": json_sha256(d.model_dump(mode="json"))} for d in docs]
    build._write_json(paths.policies, body)
    table = md_table(["doc", "version", "effective from", "clauses", "sha256"],
                     [[b["doc"], b["version"], b["effective_from"], len(b["clauses"]), b["sha256"][:12]] for b in body])
    return StageOutput(json_sha256(body), {"documents": len(body), "policies": table, "index": paths.policies})


def derive_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    der = build.derive(spec, paths)
    tasks = load_tasks(paths)
    splits = Counter(t.split for t in tasks)
    categories = Counter(t.category for t in tasks)
    return StageOutput(der.task_set_sha256, {
        "tasks": der.tasks, "task_set_sha256": der.task_set_sha256, "world_seed_sha256": der.seed_sha256,
        "splits": md_table(["split", "tasks"], sorted(splits.items())),
        "categories": md_table(["category", "tasks"], sorted(categories.items())),
        "skipped_cases": md_table(["reason", "cases"], sorted(der.skipped.items())) if der.skipped else Markdown("none"),
        "problems": len(der.problems), "tasks_file": paths.tasks})


def acceptance_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    report = build.accept(spec, paths)  # the harness picks one process or a pool by the trial count
    s = report.summary
    return StageOutput(file_sha256(paths.acceptance / "audit.json"), {
        "tasks": s["tasks"], "accepted": s["accepted"], "quarantined": s["quarantined"],
        "releasable": s["releasable"], "summary": dict(s),
        "gates": md_table(["gate", "tasks failing"], [[g, len(report.gate(g))] for g in ACCEPTANCE_GATES]),
        "quarantined_tasks": quarantine_table(report), "audit": paths.acceptance / "audit.md"})


def quarantine_table(report: AcceptanceReport, limit: int = 100) -> Markdown:
    q = [t for t in report.tasks if t.quarantined]
    if not q:
        return Markdown("No task quarantined.")
    table = md_table(["task", "reasons"], [[t.task_id, "; ".join(t.reasons)] for t in q[:limit]])
    return Markdown(table + (f"\n\n…and {len(q) - limit} more (see audit.md)" if len(q) > limit else ""))


def release_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    rel = Release(build.release(spec, paths))
    m = rel.manifest
    return StageOutput(m.version, {
        "version": m.version, "release": rel.path, "tasks": m.n_tasks, "task_set_sha256": m.task_set_sha256,
        "seed_sha256": m.seed_sha256, "environment_image": m.environment_image,
        "tool_schemas_sha256": m.tool_schemas_sha256, "policy_versions": ", ".join(m.policy_versions),
        "license_decision": m.rights_decision["status"], "quarantined": len(m.quarantined),
        "quarantined_tasks": md_table(["task", "reasons"], [[q.task_id, "; ".join(q.reasons)] for q in m.quarantined])
        if m.quarantined else Markdown("No task quarantined.")})


# ---------------------------------------------------------------- trials, scorecard, leaderboard

def release_dir(paths: Paths, suite: str, version: str) -> Path:
    return paths.releases / suite / version


def agent_run_dir(paths: Paths, version: str, agent: str) -> Path:
    return paths.runs / version / "agents" / agent


def trials_stage(spec: SuiteSpec, paths: Paths, version: str, agent: str, workers: int | None = None) -> StageOutput:
    """Run (or resume) one agent config on one release; its traces and its own scorecard go to its run folder."""
    from evalsuite.trials.harness import default_workers
    from evalsuite.releases.runs import run_release

    if agent not in {a.name for a in spec.agents}:
        raise ValueError(f"agent {agent!r} is not among the agents of suite {spec.name}")
    rel = Release(release_dir(paths, spec.name, version))
    out = agent_run_dir(paths, version, agent)
    n_trials = sum(t.trial_protocol.trials for t in rel.tasks())
    card = run_release(rel, [agent], out, workers=workers or default_workers(n_trials),
                       progress=False)
    from evalsuite.scoring.scorecard import load_records

    records = load_records(out)
    outcomes = Counter(r.outcome for r in records)
    a = card.agents[0]
    digest = json_sha256([a.identity_sha256, sorted((r.task_id, r.trial, r.outcome) for r in records)])
    return StageOutput(digest, {
        "agent": agent, "suite_version": version, "trials": len(records), "tasks": a.tasks,
        "passed": sum(r.passed for r in records), "outcomes": dict(outcomes),
        "pass^1": round(a.curve[0].pass_hat, 4), "identity_sha256": a.identity_sha256, "traces": out / "traces.jsonl"})


def scorecard_stage(spec: SuiteSpec, paths: Paths, version: str) -> StageOutput:
    """One scorecard over every agent of the spec that has traces for this release."""
    from evalsuite.scoring.scorecard import build_scorecard, load_records, write_scorecard

    rel = Release(release_dir(paths, spec.name, version))
    agents = [a.name for a in spec.agents if (agent_run_dir(paths, version, a.name) / "traces.jsonl").is_file()]
    if not agents:
        raise ReleaseError(f"no trial traces for release {version} of {spec.name}")
    records = [r for a in agents for r in load_records(agent_run_dir(paths, version, a))]
    card = build_scorecard(records, rel.tasks(), rel.manifest.acceptance)
    files = write_scorecard(card, paths.runs / version)
    missing = sorted({a.name for a in spec.agents} - set(agents))
    return StageOutput(file_sha256(files["json"]), {
        "suite_version": version, "agents": ", ".join(agents), "agents_without_traces": ", ".join(missing) or "none",
        "tasks": card.agents[0].tasks, "pass^k": passk_table(card), "pass^k_plot": image_markdown(files["png"]),
        "scorecard": files["md"], "plot": files["png"]})


def passk_table(card) -> Markdown:
    """Rows k, a column per agent: pass^k [95% task-bootstrap interval]."""
    ks = range(1, max(len(a.curve) for a in card.agents) + 1)
    cell = lambda a, k: (f"{a.curve[k - 1].pass_hat:.3f} [{a.curve[k - 1].pass_hat_low:.2f}, "  # noqa: E731
                         f"{a.curve[k - 1].pass_hat_high:.2f}]") if k <= len(a.curve) else "—"
    return md_table(["k", *(a.agent for a in card.agents)], [[f"pass^{k}", *(cell(a, k) for a in card.agents)] for k in ks])


def image_markdown(png: Path) -> Markdown:
    return Markdown(f"![pass^k]({'data:image/png;base64,' + base64.b64encode(png.read_bytes()).decode()})")


class LeaderRow(BaseModel):
    suite_version: str
    agent: str
    tasks: int
    trials: int
    pass_hat_1: float
    pass_hat_1_low: float
    pass_hat_1_high: float
    k: int
    pass_hat_k: float
    infra_errors: int


def leaderboard_stage(spec: SuiteSpec, paths: Paths) -> StageOutput:
    """Every agent on every scored release, best pass^k first within a release; newest release first."""
    cards = sorted(paths.runs.glob("*/scorecard.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    rows: list[LeaderRow] = []
    for f in cards:
        card = json.loads(f.read_text())
        k = min(len(a["curve"]) for a in card["agents"])
        ranked = sorted(card["agents"], key=lambda a: -a["curve"][k - 1]["pass_hat"])
        rows += [LeaderRow(suite_version=card["suite_version"], agent=a["agent"], tasks=a["tasks"], trials=a["trials"],
                           pass_hat_1=a["curve"][0]["pass_hat"], pass_hat_1_low=a["curve"][0]["pass_hat_low"],
                           pass_hat_1_high=a["curve"][0]["pass_hat_high"], k=k, pass_hat_k=a["curve"][k - 1]["pass_hat"],
                           infra_errors=a["outcomes"]["infra_error"]) for a in ranked]
    body = [r.model_dump() for r in rows]
    table = md_table(["release", "agent", "tasks", "trials", "pass^1 [95%]", "pass^k", "infra errors"],
                     [[r.suite_version, r.agent, r.tasks, r.trials,
                       f"{r.pass_hat_1:.3f} [{r.pass_hat_1_low:.2f}, {r.pass_hat_1_high:.2f}]",
                       f"pass^{r.k} = {r.pass_hat_k:.3f}", r.infra_errors] for r in rows])
    paths.runs.mkdir(parents=True, exist_ok=True)
    build._write_json(paths.runs / "leaderboard.json", body)
    (paths.runs / "leaderboard.md").write_text(f"# Leaderboard: {spec.name}\n\n{table}\n")
    return StageOutput(json_sha256(body), {"releases": len(cards), "rows": len(rows), "leaderboard": table,
                                           "file": paths.runs / "leaderboard.md"})


# ---------------------------------------------------------------- gates

class Verdict(BaseModel):
    """One gate's result: passed, or failed blocking (ERROR) or failed within the allowed quarantine (WARN)."""

    gate: str
    passed: bool
    blocking: bool
    reason: str
    metadata: dict[str, Any] = {}


def gates_of(stage: str, spec: SuiteSpec) -> list[str]:
    acceptance = ["reference_solvable", "reference_stable", "not_trivially_passable", "resettable"]
    if spec.acceptance.require_adjudication:
        acceptance.append("adjudicated")
    return {"rights_review": ["rights_cleared"], "seed_snapshot": ["source_quality"],
            "deidentified_snapshot": ["no_residual_pii", "joins_preserved"],
            "derived_tasks": ["task_schema_valid", "assertions_cite_policy", "masked_fields_justified"],
            "acceptance_results": acceptance}.get(stage, [])


def gate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
    """Evaluate one gate from the records on disk; any error is a blocking failure that says what went wrong."""
    try:
        return _GATES.get(name, _acceptance_gate)(name, spec, paths)
    except GateError as exc:
        return Verdict(gate=name, passed=False, blocking=True, reason=exc.reason)
    except Exception as exc:  # a gate that cannot be evaluated must not pass
        return Verdict(gate=name, passed=False, blocking=True, reason=f"cannot evaluate: {type(exc).__name__}: {exc}")


def _ok(name: str, reason: str, **metadata: Any) -> Verdict:
    return Verdict(gate=name, passed=True, blocking=False, reason=reason, metadata=metadata)


def _rights_gate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
    d = build.require_rights(paths)
    return _ok(name, f"license cleared for {', '.join(d.needed_uses)}", manifest_sha256=d.manifest_sha256)


def _quality_gate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
    if not paths.quality.is_file():
        raise GateError(name, "no quality check on record for the seed snapshot")
    seed = build.SnapshotResult.model_validate_json(paths.quality.read_text())
    q = seed.quality
    if q is None:
        return _ok(name, "the spec declares no expectations")
    stats = md_table(["table", "evaluated", "successful", "success %"],
                     [[t, int(s.get("evaluated_expectations", 0)), int(s.get("successful_expectations", 0)),
                       round(s.get("success_percent") or 0, 1)] for t, s in sorted(q.statistics.items())])
    meta = {"statistics": stats, "expectations": len(q.results), "failed": len(q.failures)}
    if not q.success:
        meta["failures"] = Markdown("\n".join(f"- {f}" for f in q.summary()[:20]))
        return Verdict(gate=name, passed=False, blocking=True, reason="; ".join(q.summary()[:3]), metadata=meta)
    build.require_quality(paths)  # and for exactly the snapshot on disk
    return _ok(name, f"{len(q.results)} expectations met", **meta)


def _deid_record(paths: Paths) -> build.DeidStage:
    if not paths.deid_report.is_file():
        raise GateError("no_residual_pii", "no de-identification record for the snapshot")
    return build.DeidStage.model_validate_json(paths.deid_report.read_text())


def _residual_gate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
    r = _deid_record(paths).residual
    if r is None:
        return _ok(name, "no de-identification rules; the rights review found no personal columns")
    meta = {"cells_scanned": r.cells_scanned, "residual_values": r.total, "counts": r.counts}
    if r.findings:  # where, never the value itself
        meta["findings"] = md_table(["table", "column", "row", "kind", "looks like"],
                                    [[f.table, f.column, f.row, f.kind, f.source or ""] for f in r.findings[:50]])
    if not r.passed:
        where = sorted({f"{f.table}.{f.column}" for f in r.findings})
        return Verdict(gate=name, passed=False, blocking=True, metadata=meta,
                       reason=f"{r.total} personal value(s) left after de-identification in {', '.join(where[:5])}")
    return _ok(name, f"{r.cells_scanned} cells scanned, nothing personal left", **meta)


def _joins_gate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
    joins = _deid_record(paths).joins
    meta = {"joins": md_table(["foreign key", "rows joined before", "after"],
                              [[k, v["before"], v["after"]] for k, v in sorted(joins.items())])} if joins else {}
    broken = [k for k, v in joins.items() if v["before"] != v["after"]]
    if broken:
        return Verdict(gate=name, passed=False, blocking=True, metadata=meta,
                       reason=f"de-identification broke {len(broken)} join(s): {', '.join(broken[:5])}")
    return _ok(name, f"{len(joins)} foreign-key join(s) preserved", **meta)


def _schema_gate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
    from evalsuite.tasks.validation import validate_file

    der = build.DeriveStage.model_validate_json(paths.derivation.read_text())
    problems = der.problems + [str(p) for p in validate_file(paths.tasks)]
    if problems:
        return Verdict(gate=name, passed=False, blocking=True, reason="; ".join(problems[:3]),
                       metadata={"problems": Markdown("\n".join(f"- {p}" for p in problems[:50]))})
    return _ok(name, f"{der.tasks} task records valid against the schema and the domain")


def _task_gate(test: Callable) -> Callable[[str, SuiteSpec, Paths], Verdict]:
    def evaluate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
        tasks = load_tasks(paths)
        failing = [t.task_id for t in tasks if not test(t)]
        return _quarantine_verdict(name, spec, len(tasks), [(f, name.replace("_", " ") + " fails") for f in failing])

    return evaluate


def _quarantine_verdict(name: str, spec: SuiteSpec, total: int, failing: list[tuple[str, str]],
                        releasable: bool | None = None) -> Verdict:
    if not failing:
        return _ok(name, f"all {total} tasks pass", tasks=total)
    allowed = spec.acceptance.max_quarantined_fraction
    blocking = (len(failing) / max(total, 1) > allowed) if releasable is None else not releasable
    meta = {"tasks": total, "failing": len(failing),
            "failing_tasks": md_table(["task", "reasons"], [list(f) for f in failing[:100]])}
    verdict = "blocks the release" if blocking else "quarantined, release still allowed"
    return Verdict(gate=name, passed=False, blocking=blocking, metadata=meta,
                   reason=f"{len(failing)} of {total} task(s) fail ({verdict}; allowed {allowed:.0%}), "
                          f"first {failing[0][0]}: {failing[0][1]}")


@lru_cache(maxsize=4)
def _task_set_at(stamp: tuple[str, int, int]) -> str:
    from evalsuite.releases.release import task_set_sha256

    return task_set_sha256(list(_tasks_at(stamp)))


def _acceptance_gate(name: str, spec: SuiteSpec, paths: Paths) -> Verdict:
    audit_file = paths.acceptance / "audit.json"
    if not audit_file.is_file():
        raise GateError(name, "no acceptance results on record")
    audit, report = _audit_at(_stamp(audit_file))
    current = _task_set_at(_stamp(paths.tasks))
    if audit["task_set_sha256"] != current:
        raise GateError(name, f"acceptance results are for task set {audit['task_set_sha256'][:12]}, not {current[:12]}")
    failing = [(t.task_id, "; ".join(t.reasons)) for t in report.gate(name)]
    return _quarantine_verdict(name, spec, len(report.tasks), failing, releasable=bool(report.summary["releasable"]))


_GATES: dict[str, Callable[[str, SuiteSpec, Paths], Verdict]] = {
    "rights_cleared": _rights_gate,
    "source_quality": _quality_gate,
    "no_residual_pii": _residual_gate,
    "joins_preserved": _joins_gate,
    "task_schema_valid": _schema_gate,
    "assertions_cite_policy": _task_gate(lambda t: all(a.clause in t.policy.clause_ids for a in t.goal_state.assertions)),
    "masked_fields_justified": _task_gate(lambda t: all(m.justification.strip() for m in t.goal_state.volatile_fields_masked)),
}
assert set(ACCEPTANCE_GATES) >= {"reference_solvable", "reference_stable", "not_trivially_passable", "resettable"}


# ---------------------------------------------------------------- the drop folder

def drop_folder_state(spec: SuiteSpec, previous: dict[str, list] | None = None) -> dict[str, list]:
    """{relative path: [size, mtime_ns, sha256]} of every file in the drop folder.

    A file whose size and mtime are unchanged keeps its recorded hash; any other
    file is hashed again, so a touched but unchanged file keeps its hash.
    """
    if not spec.sources.drop_folder:
        return {}
    root = spec.resolve(spec.sources.drop_folder)
    state: dict[str, list] = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")) if root.is_dir() else []:
        rel, st = str(f.relative_to(root)), f.stat()
        old = (previous or {}).get(rel)
        same = old is not None and old[0] == st.st_size and old[1] == st.st_mtime_ns
        state[rel] = [st.st_size, st.st_mtime_ns, old[2] if same else file_sha256(f)]
    return state


def drop_folder_changes(previous: dict[str, list], current: dict[str, list]) -> list[str]:
    """Files added, removed or changed in content (not merely touched), by relative path."""
    names = sorted(set(previous) | set(current))
    return [n for n in names if (previous.get(n) or [None] * 3)[2] != (current.get(n) or [None] * 3)[2]]


def drop_folder_digest(state: dict[str, list]) -> str:
    return json_sha256({k: v[2] for k, v in state.items()})


# ---------------------------------------------------------------- the same build without Dagster

def build_suite(spec_path: str | Path, home: Path | None = None) -> dict[str, Any]:
    """Every stage in order, stopping at the first gate that blocks (GateError); what `evalsuite build` prints."""
    spec, paths = build.prepare(spec_path, home)
    build.accept(spec, paths)
    m = Release(build.release(spec, paths)).manifest
    return {"release": str(release_dir(paths, spec.name, m.version)), "version": m.version,
            "task_set_sha256": m.task_set_sha256, "accepted": m.n_tasks, "quarantined": len(m.quarantined)}
