"""Wall time of `make demo` after installation, and of a full build of a generated 1,000-task suite through
Dagster, with Dagster's share of it.

    .venv/bin/python bench/bench_pipeline.py [--demo-repeats 3] [--cases 1150] [--build-repeats 3]
                                             [--venv .venv] [--skip-demo] [--skip-big]
    .venv/bin/python bench/bench_pipeline.py --json PATH [--tasks 100,1000] [--size-repeats 1] [--reference-trials 2]

`make demo` runs with a fresh home folder (a new Dagster instance, nothing built), as a first run does.
The 1,000-task suite is the AP generator's export with n_cases chosen so derivation yields at least
1,000 tasks. It is built twice, each in a fresh process and a fresh home folder: once through the
Dagster asset graph (build job: observe, materialize every stage, evaluate every gate, on a SQLite
instance configured by the project's dagster.yaml), once by the same library stages without Dagster
(`evalsuite build`). Dagster's overhead is the difference, as a share of the Dagster wall time.

With --json (make bench) it builds suites of about 100 and 1,000 tasks instead (`--tasks 100,1000,10000` adds
the 10,000-task pair: about 12 minutes more on 2 idle cores, beyond make bench's budget), --size-repeats
times per size each way, with `acceptance.reference_trials` set to --reference-trials in the generated spec
(the same for both ways); `make demo` is left to --demo-repeats without --json.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from evalsuite.deid.keys import DEMO_KEY

ROOT = Path(__file__).resolve().parents[1]
KEY = DEMO_KEY

LIBRARY_BUILD = """
import json, sys
from evalsuite.pipeline.driver import build
print(build(sys.argv[1]).model_dump_json())
"""
NEW_INSTANCE = """
import dagster as dg
with dg.DagsterInstance.get() as instance:
    instance.get_runs(limit=1)
"""
DAGSTER_BUILD = """
import json, sys
sys.path.insert(0, "tests")
import dagster as dg
import dagster_driver as driver
from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.suite.loading import listed_specs, load_suites
graphs, _ = load_suites(listed_specs())
with dg.DagsterInstance.get() as instance:
    out = driver.build(build_defs(graphs), graphs[0], instance)
    assert out.success, out.blocked
    steps = {}
    for rec in instance.all_logs(out.run_id):
        ev = rec.dagster_event
        if ev is None or not rec.step_key:
            continue
        kind = ev.event_type_value
        if kind == "STEP_START":
            steps.setdefault(rec.step_key, [rec.timestamp, None])[0] = rec.timestamp
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE"):
            steps.setdefault(rec.step_key, [rec.timestamp, None])[1] = rec.timestamp
    run = instance.get_run_record_by_id(out.run_id)
    print(json.dumps({"version": out.version, "run_seconds": run.end_time - run.start_time,
                      "step_seconds": sum(e - s for s, e in steps.values() if e), "steps": len(steps)}))
"""


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSUITE_", "DAGSTER_"))}
    return env | {"EVALSUITE_DEID_KEY": KEY} | extra


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far: on a shared machine the wall time
    swings with the other load, the CPU a build takes much less."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])}… failed ({proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return elapsed, proc


def bench_demo(venv: Path, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        home = Path(tempfile.mkdtemp(prefix="bench-demo-"))
        elapsed, _ = timed(["make", "-s", "demo", f"VENV={venv}"], cwd=ROOT, env=clean_env(EVALSUITE_HOME=str(home)))
        times.append(elapsed)
        shutil.rmtree(home, ignore_errors=True)
    return times


def make_big_suite(dest: Path, cases: int, reference_trials: int | None = None) -> Path:
    """The bundled AP suite spec over a generated export of `cases` resolved cases."""
    from evalsuite.domains.ap_exceptions.generator import write_csv

    shutil.copytree(ROOT / "suites" / "ap_exceptions", dest / "ap_exceptions")
    write_csv(str(dest / "ap_exceptions" / "source"), n_cases=cases)
    raw = yaml.safe_load((ROOT / "suites" / "ap_exceptions.yaml").read_text())
    raw["name"] = "ap_bench"
    raw["policies"] = [str((ROOT / "suites" / p).resolve()) for p in raw["policies"]]
    if reference_trials is not None:
        raw.setdefault("acceptance", {})["reference_trials"] = reference_trials
    spec = dest / "ap_bench.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def bench_big(spec: Path, py: str) -> dict:
    lib_home, dg_home = Path(tempfile.mkdtemp(prefix="bench-lib-")), Path(tempfile.mkdtemp(prefix="bench-dg-"))
    cpu = children_cpu()
    lib_s, lib = timed([py, "-c", LIBRARY_BUILD, str(spec)], cwd=ROOT, env=clean_env(EVALSUITE_HOME=str(lib_home)))
    lib_cpu, cpu = children_cpu() - cpu, children_cpu()
    dagster_home = dg_home / "dagster"
    dagster_home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    env = clean_env(EVALSUITE_HOME=str(dg_home), DAGSTER_HOME=str(dagster_home), EVALSUITE_SUITES=str(spec))
    # The instance is made first, untimed, as the first `make demo` or `make ui` makes it once for every later
    # build; making it (SQLite files, alembic stamps) is timed on its own.
    instance_s, _ = timed([py, "-c", NEW_INSTANCE], cwd=ROOT, env=env)
    cpu = children_cpu()
    dg_s, dg = timed([py, "-c", DAGSTER_BUILD], cwd=ROOT, env=env)
    dg_cpu = children_cpu() - cpu
    built, run = json.loads(lib.stdout.strip().splitlines()[-1]), json.loads(dg.stdout.strip().splitlines()[-1])
    assert built["version"] == run["version"], (built, run)  # the same release either way
    shutil.rmtree(lib_home, ignore_errors=True)
    shutil.rmtree(dg_home, ignore_errors=True)
    return {"tasks": built["accepted"] + built["quarantined"], "library_s": lib_s, "dagster_s": dg_s,
            "new_instance_s": instance_s,
            "library_cpu_s": lib_cpu, "dagster_cpu_s": dg_cpu, **run}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default=str(ROOT / ".venv"))
    ap.add_argument("--demo-repeats", type=int, default=3)
    ap.add_argument("--build-repeats", type=int, default=3)
    ap.add_argument("--cases", type=int, default=1150, help="resolved cases to generate (about 89%% become tasks)")
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--json", type=Path, help="build 100/1,000/10,000-task suites; write the result document here")
    ap.add_argument("--tasks", default="100,1000", help="with --json: suite sizes in tasks")
    ap.add_argument("--size-repeats", type=int, default=1, help="with --json: builds per size each way")
    ap.add_argument("--reference-trials", type=int, default=2, help="with --json: acceptance.reference_trials")
    args = ap.parse_args()
    if args.json:
        return bench_sizes(args)
    print(f"{os.cpu_count()} cores, python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}")
    if not args.skip_demo:
        demo = bench_demo(Path(args.venv), args.demo_repeats)
        print(f"make demo (fresh home, after installation): median {statistics.median(demo):.1f} s "
              f"over {len(demo)} runs {[round(t, 1) for t in demo]} (target < 60 s)")
    if not args.skip_big:
        spec = make_big_suite(Path(tempfile.mkdtemp(prefix="bench-big-")), args.cases)
        runs = [bench_big(spec, sys.executable) for _ in range(args.build_repeats)]
        r = {k: statistics.median(x[k] for x in runs)
             for k in ("library_s", "dagster_s", "library_cpu_s", "dagster_cpu_s", "run_seconds", "step_seconds",
                       "new_instance_s")}
        share = (r["dagster_s"] - r["library_s"]) / r["dagster_s"]
        print(f"{runs[0]['tasks']}-task suite build to release: through Dagster {r['dagster_s']:.1f} s, "
              f"library alone {r['library_s']:.1f} s; Dagster overhead {share:.1%} of the Dagster wall time "
              f"(target < 5%); on an instance already made (a new one takes {r['new_instance_s']:.1f} s more, "
              f"once, with the python start and dagster import)")
        cpu_share = (r["dagster_cpu_s"] - r["library_cpu_s"]) / r["dagster_cpu_s"]
        print(f"  CPU: through Dagster {r['dagster_cpu_s']:.1f} s, library alone {r['library_cpu_s']:.1f} s; "
              f"Dagster overhead {cpu_share:.1%} of the Dagster CPU time")
        print(f"  inside the Dagster run: {runs[0]['steps']} steps, {r['step_seconds']:.1f} s in steps of a "
              f"{r['run_seconds']:.1f} s run ({(r['run_seconds'] - r['step_seconds']) / r['run_seconds']:.1%} "
              f"between steps); version {runs[0]['version']}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


def bench_sizes(args) -> None:
    """Suites of each size built through Dagster and by the library alone; Dagster's share of the wall time."""
    sys.path.insert(0, str(Path(__file__).parent))
    import benchlib

    res = benchlib.Result("pipeline", benchlib.command_line())
    for tasks in (int(t) for t in args.tasks.split(",")):
        cases = int(tasks / 0.89) + 1  # about 89% of generated cases become tasks
        spec = make_big_suite(Path(tempfile.mkdtemp(prefix="bench-big-")), cases, args.reference_trials)
        runs = [bench_big(spec, sys.executable) for _ in range(args.size_repeats)]
        label = f"{runs[0]['tasks']:,}-task AP suite, source to release"
        res.add(f"{label}, library alone", [r["library_s"] for r in runs], "s")
        shares = [(r["dagster_s"] - r["library_s"]) / r["dagster_s"] * 100 for r in runs]
        share = statistics.median(shares)
        res.add(f"{label}, through Dagster", [r["dagster_s"] for r in runs], "s")
        res.add(f"{label}: Dagster overhead, % of the Dagster CPU time",
                [(r["dagster_cpu_s"] - r["library_cpu_s"]) / r["dagster_cpu_s"] * 100 for r in runs], "%")
        res.add(f"{label}: Dagster overhead, % of the Dagster wall time", shares, "%", target="< 5%",
                met=share < 5, note="" if share < 5 else f"{share - 5:.1f} points over")
    res.note(f"acceptance.reference_trials = {args.reference_trials} in the generated specs (both ways)")
    res.write(args.json)


if __name__ == "__main__":
    main()
