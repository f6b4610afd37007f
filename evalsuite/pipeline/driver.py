"""The one build driver: every stage in order, each refusing unchecked inputs, stopping at the first blocking gate.

The command line calls `build`, `audit`, `run_source`, `replay_calls` and `example`; each Dagster asset calls
the same stage's `run` (the driver's loop is Dagster's graph there), and each asset check calls `registry.gate_result`.
"""
from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
from pydantic import BaseModel

from evalsuite.audit.acceptance import AcceptanceReport, Runner
from evalsuite.audit.probes import ColumnValues, PeerCheck, probe_task
from evalsuite.core.io import atomic_write, write_json
from evalsuite.core.markdown import md_table
from evalsuite.core.records import TaskRecord
from evalsuite.pipeline import preflight
from evalsuite.pipeline.locks import LockError, suite_lock
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.registry import build_stages
from evalsuite.pipeline.stage import GateError, StageOutput, require
from evalsuite.pipeline.stages import acceptance_results, derived_tasks, seed_snapshot
from evalsuite.releases.release import Release, ReleaseError
from evalsuite.sourcing.spec import SuiteSpec, load_spec
from evalsuite.worlds.world import World

if TYPE_CHECKING:
    from evalsuite.scoring.scorecard import Scorecard

OnStage = Callable[[str, StageOutput], None]  # (stage name, its output)
PeerOf = Callable[[World], PeerCheck | None]  # an imported suite's world -> its peer's grader


class Built(BaseModel):
    """What `evalsuite build` prints: the release and what it holds."""

    release: str
    version: str
    task_set_sha256: str
    accepted: int
    quarantined: int


def inputs_ready(spec: SuiteSpec) -> None:
    """The de-identification key and the sources against the domain, checked before anything is written (not even
    the suite's lock file): neither may stop a build after a stage wrote."""
    seed_snapshot.deid_key_ready(spec)
    preflight.check_sources(spec)


def run_until(spec: SuiteSpec, paths: Paths, last: str, runner: Runner | None = None,
              decide_last: bool = True, on_stage: OnStage | None = None) -> StageOutput:
    """Run the build stages in order up to and including `last`, each followed by its own gates
    (those of `last` only if `decide_last`: an audit reports failing tasks rather than stopping at them);
    `on_stage` hears of each stage as it finishes, before its gates decide. The caller has checked the
    inputs (inputs_ready) before taking the suite's lock."""
    for stage in build_stages(spec):
        if stage is acceptance_results.STAGE:
            out = acceptance_results.run(spec, paths, runner)
        else:
            out = stage.run(spec, paths)
        # Arrow's allocator keeps the pages a stage freed for Arrow to reuse; the next stages allocate mostly for
        # SQLite and Python, so a large source's buffers would stay in the process to its end.
        pa.default_memory_pool().release_unused()
        if on_stage:
            on_stage(stage.name, out)
        if stage.name == last:
            if decide_last:
                require(stage, spec, paths)
            return out
        require(stage, spec, paths)
    raise KeyError(f"unknown build stage {last!r}")


@contextmanager
def fewer_collections(allocations: int = 50_000) -> Iterator[None]:
    """The garbage collector's first generation collected every `allocations` container allocations instead of
    CPython's 700, set back after. A large source's build makes millions of short-lived rows and tuples, and at
    700 the collector also walked the ~450,000 long-lived objects of the loaded libraries 14 times in a 1M-row
    build of bench/bench_large_source.py, 2.7 s of its 21 s of CPU (timed by gc.callbacks). Nothing the build keeps
    depends on when a cycle is collected: worlds give their memory back when closed."""
    before = gc.get_threshold()
    gc.set_threshold(allocations, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def build(spec_path: str | Path, home: Path | None = None, runner: Runner | None = None,
          on_stage: OnStage | None = None) -> Built:
    """Build a suite spec into a release; raises GateError naming the first gate that blocks, LockError when
    another build of the suite in this home holds it past the lock timeout."""
    spec = load_spec(spec_path)
    inputs_ready(spec)
    paths = Paths(spec, home)
    with suite_lock(paths), fewer_collections():
        version = run_until(spec, paths, "suite_release", runner, on_stage=on_stage).data_version
        m = Release(paths.release(spec.name, version)).manifest
    return Built(release=str(paths.release(spec.name, version)), version=version,
                 task_set_sha256=m.task_set_sha256, accepted=m.n_tasks, quarantined=len(m.quarantined))


def audit(spec_path: str | Path, out: Path, home: Path | None = None, runner: Runner | None = None,
          probes: bool = True, peer_of: PeerOf | None = None) -> AcceptanceReport:
    """Run every stage up to acceptance on any suite and write audit.json and audit.md to `out`; with `probes`,
    each task also gets `grader_probes` (and `original_check` where `peer_of` gives the peer's grader)."""
    spec = load_spec(spec_path)
    inputs_ready(spec)
    paths = Paths(spec, home)
    with suite_lock(paths):
        run_until(spec, paths, "acceptance_results", runner, decide_last=False)
        audit_text = paths.audit.read_text()
        audit_json, audit_md = json.loads(audit_text), (paths.acceptance / "audit.md").read_text()
        tasks = derived_tasks.tasks_on_disk(paths)
        with closing(World(preflight.domain_for(spec).domain, paths.world)) as world:
            if probes:
                audit_md += probe_tasks(world, tasks, audit_json, peer_of)
            audit_md += users_section(world, tasks, audit_json)
        write_json(out / "audit.json", audit_json)
        atomic_write(out / "audit.md", audit_md)
        return acceptance_results.AuditRecord.model_validate_json(audit_text)


def users_section(world: World, tasks: list[TaskRecord], audit_json: dict) -> str:
    """The user-simulator audit (scripted users probed, LLM conversations sampled for review) into the audit."""
    from evalsuite.audit.users import audit_users, to_markdown

    report = audit_users(world, tasks)
    audit_json["user_simulator"] = report.model_dump(mode="json") | {"scripted_ok": report.scripted_ok}
    return to_markdown(report)


def probe_tasks(world: World, tasks: list[TaskRecord], audit_json: dict, peer_of: PeerOf | None) -> str:
    """Add each task's grader probes to the audit's task entries; the Markdown section that lists the findings."""
    columns, peer = ColumnValues(world), peer_of(world) if peer_of else None
    entries = {t["task_id"]: t for t in audit_json["tasks"]}
    rows = []
    for task in tasks:
        ours, theirs = probe_task(world, task, columns, peer)
        entries[task.task_id]["grader_probes"] = ours.model_dump(mode="json")
        if theirs is not None:
            entries[task.task_id]["original_check"] = theirs.model_dump(mode="json")
        rows.append([task.task_id, ours.tried, _hits(ours.passed_anyway), _hits(ours.declared_irrelevant)]
                    + ([theirs.noop_passes, _hits(theirs.passed_anyway)] if theirs else []))
    head = ["task", "probes", "passed anyway (ours)", "declared irrelevant"]
    head += ["peer passes no-op", "passed anyway (peer)"] if peer else []
    return "\n\n## Grader probes\n\n" + md_table(head, rows) + "\n"


def _hits(hits) -> str:
    return ", ".join(f"#{h.call} {h.tool}.{h.argument}={h.value!r}" for h in hits) or "-"


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


def run_source(source: str | Path, agents: list[str], out: Path | None = None, *, mode: str | None = None,
               **options) -> tuple[Scorecard, Path]:
    """`evalsuite run`: score agents on a release (a suite spec is built first) into `out`, by default
    runs/<suite>/<version>, or runs/<suite>/<version>-<mode> for another trial mode (another task set);
    `options` as for releases.runs.run_release. Returns the scorecard and the run folder."""
    from evalsuite.releases.runs import run_release

    release = resolve_release(source)
    out = out or Path("runs") / release.manifest.suite / (release.manifest.version + (f"-{mode}" if mode else ""))
    return run_release(release, agents, out, mode=mode, **options), out


def replay_calls(source: str | Path, task_id: str, calls: Path, faults: Path | None = None,
                 message: str = "") -> dict:
    """`evalsuite trial replay`: the given calls (a JSON file) run on a freshly reset world of the release (a suite
    spec is built first) as the task's role, under the fault plan file if given; the report as a JSON-ready dict.
    The files are read before any build, so a bad one costs nothing."""
    from evalsuite.trials.replay import find_task, load_calls, load_faults, replay

    given, plan = load_calls(calls), load_faults(faults) if faults else None
    release = resolve_release(source)
    with closing(release.open_world()) as world:
        return replay(world, find_task(release.tasks("replay"), task_id), given, plan, message)


class ExampleRow(BaseModel):
    """One baseline agent on every task of the AP-exceptions example."""

    agent: str
    passed: int
    failed: int
    infra_errors: int
    expected: str


class ExampleRun(BaseModel):
    """What `evalsuite example` shows: the example's tasks, what derivation skipped, each baseline's outcomes."""

    tasks: int
    skipped: dict
    rows: list[ExampleRow]
    world: str
    seed_sha256: str


EXAMPLE_AGENTS = (("reference", "all pass"), ("noop", "all fail"), ("adversary", "all fail"))


def example(workdir: Path) -> ExampleRun:
    """Build the AP-exceptions example in `workdir` and run the reference, no-op and adversary agents on every task."""
    from evalsuite.domains.ap_exceptions.example import ap_example
    from evalsuite.trials.agents.factory import make_agent
    from evalsuite.trials.trial import run_trial

    ex = ap_example(workdir)
    rows = []
    for name, expected in EXAMPLE_AGENTS:
        results = [run_trial(ex.world, t, make_agent(name)) for t in ex.tasks]
        rows.append(ExampleRow(agent=name, passed=sum(r.passed for r in results), expected=expected,
                               failed=sum(r.outcome == "fail" for r in results),
                               infra_errors=sum(r.outcome == "infra_error" for r in results)))
    return ExampleRun(tasks=len(ex.tasks), skipped=dict(ex.skipped), rows=rows, world=str(ex.world.path),
                      seed_sha256=ex.world.seed_sha256)
