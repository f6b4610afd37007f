"""The one build driver: every stage in order, each refusing unchecked inputs, stopping at the first blocking gate.

The command line calls `build` and `audit`; each Dagster asset calls the same
stage's `run` (the driver's loop is Dagster's graph there), and each asset check
calls `registry.judge`.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from evalsuite.core.io import atomic_write
from evalsuite.pipeline.locks import LockError, suite_lock
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.registry import BUILD
from evalsuite.pipeline.stage import StageOutput, require
from evalsuite.pipeline.stages import acceptance
from evalsuite.pipeline.stage import GateError
from evalsuite.releases.release import Release, ReleaseError
from evalsuite.scoring.acceptance import AcceptanceReport, Runner
from evalsuite.sourcing.spec import SuiteSpec, load_spec


OnStage = Callable[[str, StageOutput], None]  # (stage name, its output)


class Built(BaseModel):
    """What `evalsuite build` prints: the release and what it holds."""

    release: str
    version: str
    task_set_sha256: str
    accepted: int
    quarantined: int


def run_until(spec: SuiteSpec, paths: Paths, last: str, runner: Runner | None = None,
              judge_last: bool = True, on_stage: OnStage | None = None) -> StageOutput:
    """Run the build stages in order up to and including `last`, each followed by its own gates
    (those of `last` only if `judge_last`: an audit reports failing tasks rather than stopping at them);
    `on_stage` hears of each stage as it finishes, before its gates are judged."""
    for stage in BUILD:
        out = acceptance.run(spec, paths, runner) if stage is acceptance.STAGE else stage.run(spec, paths)
        if on_stage:
            on_stage(stage.name, out)
        if stage.name == last:
            if judge_last:
                require(stage, spec, paths)
            return out
        require(stage, spec, paths)
    raise KeyError(f"unknown build stage {last!r}")


def build(spec_path: str | Path, home: Path | None = None, runner: Runner | None = None,
          on_stage: OnStage | None = None) -> Built:
    """Build a suite spec into a release; raises GateError naming the first gate that blocks, LockError when
    another build of the suite in this home holds it past the lock timeout."""
    spec = load_spec(spec_path)
    paths = Paths(spec, home)
    with suite_lock(paths):
        version = run_until(spec, paths, "suite_release", runner, on_stage=on_stage).data_version
        m = Release(paths.release(spec.name, version)).manifest
    return Built(release=str(paths.release(spec.name, version)), version=version,
                 task_set_sha256=m.task_set_sha256, accepted=m.n_tasks, quarantined=len(m.quarantined))


def audit(spec_path: str | Path, out: Path, home: Path | None = None, runner: Runner | None = None) -> AcceptanceReport:
    """Run every stage up to acceptance on any suite and copy audit.json and audit.md to `out`."""
    spec = load_spec(spec_path)
    paths = Paths(spec, home)
    with suite_lock(paths):
        run_until(spec, paths, "acceptance_results", runner, judge_last=False)
        for name in ("audit.json", "audit.md"):
            atomic_write(out / name, (paths.acceptance / name).read_text())
        return acceptance.AuditRecord.model_validate_json(paths.audit.read_text())


def resolve_release(source: str | Path) -> Release:
    """A release folder as is; a suite spec (.yaml) is built into a release first (a blocked gate is one line)."""
    source = Path(source)
    if source.is_dir():
        return Release(source)
    if source.suffix in (".yaml", ".yml"):
        try:
            return Release(Path(build(source).release))
        except (GateError, LockError) as exc:
            raise ReleaseError(f"{source}: {exc}") from exc
    raise ReleaseError(f"{source}: neither a release folder nor a suite spec (.yaml)")
