"""Dagster's fixed CPU cost per build, piece by piece: what the Dagster layer adds to a suite's build whatever its size.

    .venv/bin/python bench/bench_dagster_fixed.py [--repeats 3] [--json PATH]

Each round, in fresh processes, one after the other (interleaved):

- `import dagster` after the library's build driver is imported (what a Dagster build imports beyond the library);
- the code location: importing evalsuite_dagster and loading the bundled AP suite into Definitions (the code
  versions of its stages included);
- a run of the build's shape with no-op steps (13 asset steps in a chain, 12 asset checks) on a fresh SQLite
  instance configured by the project's dagster.yaml, and the same run with Dagster's consolidated SQLite event log
  (one database for every run, instead of one per run plus an index).

The stages' own work is the library's and is not here (bench_pipeline.py builds a 1,045-task suite both ways).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench")]

import benchlib  # noqa: E402

IMPORT_DAGSTER = """
import json, time
import evalsuite.pipeline.driver
start = time.process_time()
import dagster
print(json.dumps({"cpu": time.process_time() - start}))
"""
CODE_LOCATION = """
import json, sys, time
import dagster, evalsuite.pipeline.driver
start = time.process_time()
from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.loading import load_suites
graphs, _ = load_suites([sys.argv[1]])
build_defs(graphs)
print(json.dumps({"cpu": time.process_time() - start}))
"""
NO_OP_RUN = """
import json, time
import dagster as dg
steps, checks, above = [], [], None
for i in range(13):
    @dg.asset(name=f"stage{i}", deps=[above] if above else [], code_version="1")
    def stage(context):
        return dg.MaterializeResult(metadata={"rows": 1}, data_version=dg.DataVersion(str(i)))
    steps.append(stage)
    above = stage.key
    if i < 12:
        @dg.asset_check(asset=stage.key, name=f"gate{i}")
        def gate():
            return dg.AssetCheckResult(passed=True, metadata={"reason": "ok"})
        checks.append(gate)
job = dg.Definitions(assets=steps, asset_checks=checks,
                     jobs=[dg.define_asset_job("build", selection=dg.AssetSelection.all())]).resolve_job_def("build")
with dg.DagsterInstance.get() as instance:
    instance.get_runs(limit=1)  # the instance is made untimed, as a first `make demo` makes it once
    start = time.process_time()
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    run = job.execute_in_process(instance=instance, run_config=quiet)
    cpu = time.process_time() - start
    print(json.dumps({"cpu": cpu, "events": len(instance.all_logs(run.run_id))}))
"""
CONSOLIDATED = """
event_log_storage:
  module: dagster._core.storage.event_log
  class: ConsolidatedSqliteEventLogStorage
  config:
    base_dir: {env: DAGSTER_HOME}
"""


def main() -> int:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    res = benchlib.Result("bench_dagster_fixed", benchlib.command_line())
    spec = str(ROOT / "suites" / "ap_exceptions.yaml")
    got: dict[str, list[dict]] = {}
    for _ in range(args.repeats):
        got.setdefault("import", []).append(child(IMPORT_DAGSTER))
        got.setdefault("location", []).append(child(CODE_LOCATION, spec))
        got.setdefault("run", []).append(no_op_run(""))
        got.setdefault("consolidated", []).append(no_op_run(CONSOLIDATED))
    res.add("import dagster (after the library's driver)", cpu(got["import"]), "s CPU")
    res.add("code location: evalsuite_dagster imported, the AP suite's Definitions built", cpu(got["location"]),
            "s CPU")
    res.add("a build-shaped run of no-op steps (13 assets, 12 checks), default SQLite storage", cpu(got["run"]),
            "s CPU", note=f"{got['run'][0]['events']} events")
    res.add("the same run, consolidated SQLite event log", cpu(got["consolidated"]), "s CPU")
    res.add("Dagster's fixed cost per build (the first three rows)",
            [sum(got[k][i]["cpu"] for k in ("import", "location", "run")) for i in range(args.repeats)], "s CPU")
    res.write(args.json)
    return 0


def cpu(runs: list[dict]) -> list[float]:
    return [r["cpu"] for r in runs]


def no_op_run(extra_yaml: str) -> dict:
    """The no-op run on a fresh instance: the project's dagster.yaml, with `extra_yaml` appended."""
    home = Path(tempfile.mkdtemp(prefix="bench-dagster-fixed-"))
    try:
        (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text() + extra_yaml)
        return child(NO_OP_RUN, env={"DAGSTER_HOME": str(home)})
    finally:
        shutil.rmtree(home, ignore_errors=True)


def child(code: str, *argv: str, env: dict[str, str] | None = None) -> dict:
    home = tempfile.mkdtemp(prefix="bench-dagster-fixed-home-")
    try:
        proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, "EVALSUITE_HOME": home, **(env or {})}, timeout=300)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: a bench_dagster_fixed child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(main())
