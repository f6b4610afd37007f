"""Model-bound trials on Celery: a model agent's trials on 1 and 2 workers, each on the trial engine, beside in process.

    .venv/bin/python bench/bench_celery_models.py [--in-flight 32] [--trials 16] [--chunk 128] [--median-ms 400]
                                                  [--sigma 0.25] [--repeats 2] [--in-process-repeats 1]
                                                  [--broker redis://127.0.0.1:6379] [--json PATH]

The bundled AP suite cut to its 32 tasks whose reference solution has 4 calls (`--trials` trials each), agent
`openai:local` (kind openai, model local, base_url the local endpoint: evalsuite.trials.local_model in its own
process, 127.0.0.1 only, a request budget sized to the run, a seeded lognormal latency of median `--median-ms`;
5 requests a trial). Its trials run

- in process: `run_release` with max_in_flight `--in-flight` (one process, one event loop), `--in-process-repeats`
  times;
- through `<suite>__celery_trials_job` on 1 and on 2 Celery workers (tests/celery_workers.py, `--pool=solo`, all
  three started at once before the build, their start not timed; the one-worker set and the two-worker set each
  on a Redis database of its own), chunks of about `--chunk` trials, each chunk on the worker's trial engine with
  the run config's max_in_flight `--in-flight`.

Figures (medians of `--repeats`; the defaults keep the bench within about 4 minutes on 2 cores):

- trials/s: trials / the run's wall time (Dagster's run start to end: planning, every chunk, collecting, the
  scorecard), for 1 and 2 workers and their ratio (target ≥ 1.8); the same over the chunk phase only (first chunk
  submitted to last chunk done), which leaves out the run's fixed cost (plan, collect, the executor's 1 s polls);
- per-chunk overhead: a chunk step's wall time (from when its worker could take it up, i.e. its submission or the
  worker's previous step's end, to its success event) minus the seconds its trials ran on the engine (the step's
  `trial seconds` output metadata): rebuilding the job and the execution plan, opening the release and the world,
  writing the step's events and outputs; as a share of the step's wall time (target < 5%);
- the ideal: workers x in-flight / (5 requests x mean latency) trials/s.

Needs Redis on 127.0.0.1:6379 (the broker); exits 2 naming it when none answers.
"""
from __future__ import annotations

import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from suite_support import SUITE, copy_suite, rewrite_csv  # noqa: E402

from evalsuite.deid.keys import DEMO_KEY  # noqa: E402

AGENT = "openai:local"
STEPS = 4  # tool calls of the tasks kept; a trial makes STEPS + 1 requests
REQUESTS = STEPS + 1
CASES = 36  # the first 36 resolved cases with 4 actions become 32 tasks: 2 workers get equal shares of chunks


def suite_spec(dest: Path, trials: int) -> Path:
    """The AP suite with only its 4-call cases (32 tasks), `trials` trials a task, and the model agent."""
    import yaml

    spec = copy_suite(dest, reference_trials=1, trials=trials)

    def four_calls(rows: list[dict]) -> None:
        rows[:] = [r for r in rows if len(json.loads(r["resolution_actions"])) == STEPS][:CASES]

    rewrite_csv(spec.parent / SUITE / "source" / "resolved_cases.csv", four_calls)
    raw = yaml.safe_load(spec.read_text())
    raw["agents"] = [{"name": "reference"}, {"name": AGENT, "kind": "openai", "model": "local"}]
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def point_agent_at(spec: Path, url: str) -> None:
    """The model agent's base_url in the spec (the workers read the spec when they rebuild the job)."""
    import yaml

    raw = yaml.safe_load(spec.read_text())
    raw["agents"] = [{**a, "base_url": url} if a["name"] == AGENT else a for a in raw["agents"]]
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))


def step_timings(instance, run_id: str) -> list[dict]:
    """Per run_chunk step: its worker, when that worker could take it up (submitted, or the worker's previous
    step's end if later), its success, and the seconds its trials ran on the engine (its output metadata)."""
    import dagster as dg

    steps: dict[str, dict] = {}
    for rec in instance.all_logs(run_id):
        ev, key = rec.dagster_event, rec.step_key or ""
        if ev is None or not key.startswith(f"{SUITE}__run_chunk["):
            continue
        s = steps.setdefault(key, {"key": key})
        if ev.event_type == dg.DagsterEventType.ENGINE_EVENT and "Submitting celery task" in (ev.message or ""):
            s["submitted"] = rec.timestamp
        elif ev.event_type == dg.DagsterEventType.ENGINE_EVENT and "in celery worker" in (ev.message or ""):
            s["worker"] = ev.engine_event_data.metadata["Celery worker"].value
        elif ev.event_type == dg.DagsterEventType.STEP_OUTPUT:
            s["trial_seconds"] = ev.step_output_data.metadata["trial seconds"].value
        elif ev.event_type == dg.DagsterEventType.STEP_SUCCESS:
            s.setdefault("done", rec.timestamp)
    free: dict[str, float] = {}
    out = sorted(steps.values(), key=lambda s: s["done"])
    for s in out:  # in order of completion: a worker takes up its next step once its previous one is done
        s["start"] = max(s["submitted"], free.get(s["worker"], 0.0))
        free[s["worker"]] = s["done"]
    return out


def run_celery(recon, instance, config: dict, n: int) -> dict:
    """One Celery run: trials/s over the run and over its chunk phase, and each chunk's overhead and share."""
    import dagster as dg

    run = dg.execute_job(recon, instance=instance, run_config=config)
    if not run.success:
        raise SystemExit(f"error: celery trial run {run.run_id} failed: "
                         f"{[e.message for e in run.all_events if e.is_failure][:3]}")
    rec = instance.get_run_record_by_id(run.run_id)
    steps = step_timings(instance, run.run_id)
    phase = max(s["done"] for s in steps) - min(s["submitted"] for s in steps)
    walls = [s["done"] - s["start"] for s in steps]
    over = [w - s["trial_seconds"] for w, s in zip(walls, steps)]
    return {"rate": n / (rec.end_time - rec.start_time), "phase_rate": n / phase, "overheads": over,
            "shares": [o / w for o, w in zip(over, walls)], "walls": walls,
            "fixed": (rec.end_time - rec.start_time) - phase, "workers": len({s["worker"] for s in steps})}


def main() -> None:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--in-flight", type=int, default=32, help="trials in flight per worker (and in process)")
    ap.add_argument("--trials", type=int, default=16, help="trials per task (32 tasks)")
    ap.add_argument("--chunk", type=int, default=128, help="trials per Celery step")
    ap.add_argument("--median-ms", type=float, default=400.0)
    ap.add_argument("--sigma", type=float, default=0.25)
    ap.add_argument("--repeats", type=int, default=2, help="runs of the Celery job per worker count")
    ap.add_argument("--in-process-repeats", type=int, default=1)
    ap.add_argument("--broker", default="redis://127.0.0.1:6379", help="Redis URL without database; two are used")
    args = ap.parse_args()
    benchlib.require_redis("bench_celery_models")
    os.environ.setdefault("EVALSUITE_DEID_KEY", DEMO_KEY)
    result = benchlib.Result("bench_celery_models", benchlib.command_line())
    tmp = Path(tempfile.mkdtemp(prefix="bench-celery-models-"))
    try:
        measure(args, result, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result.write(args.json)


def measure(args, result: benchlib.Result, tmp: Path) -> None:
    import dagster as dg
    from celery_workers import local_workers
    from dagster_driver import QUIET

    from evalsuite.pipeline import driver
    from evalsuite.releases.release import Release
    from evalsuite.releases.runs import run_release
    from evalsuite.sourcing.spec import load_spec
    from evalsuite.trials.local_model import serve_local_model
    from evalsuite.trials.settings import EngineSettings
    from evalsuite_dagster.trials.celery import celery_run_config

    spec = suite_spec(tmp / "suite", args.trials)
    home = tmp / "home"
    dbs = random.sample(range(1, 16), 2)
    brokers = {1: f"{args.broker}/{dbs[0]}", 2: f"{args.broker}/{dbs[1]}"}
    with ExitStack() as stack:
        sets = {}
        for count in (1, 2):  # every worker imports while the suite builds; an idle worker costs nothing
            (tmp / f"dagster{count}").mkdir()
            shutil.copyfile(ROOT / "dagster.yaml", tmp / f"dagster{count}" / "dagster.yaml")
            (tmp / f"logs{count}").mkdir()
            sets[count] = stack.enter_context(local_workers(count, tmp / f"dagster{count}", brokers[count],
                                                            tmp / f"logs{count}"))
        version = driver.build(spec, home=home).version
        rel = Release(home / "releases" / SUITE / version)
        tasks = rel.tasks()
        n = sum(t.trial_protocol.trials for t in tasks)
        budget = (args.in_process_repeats + 2 * args.repeats) * n * REQUESTS + 100
        url = stack.enter_context(serve_local_model(tasks, max_requests=budget, median_ms=args.median_ms,
                                                    sigma=args.sigma, turns=STEPS))
        point_agent_at(spec, url)
        config = [a for a in load_spec(spec).agents if a.name == AGENT]
        engine = EngineSettings(max_in_flight=args.in_flight)
        inproc = [n / (benchlib.timed(lambda: run_release(rel, config, tmp / f"inproc{i}", workers=1,
                                                          engine=engine))[0] / 1000)
                  for i in range(args.in_process_repeats)]
        recon = dg.build_reconstructable_job("evalsuite_dagster.trials.celery", "job_for_spec",
                                             reconstructable_args=(str(spec), str(home)))
        out_dir = home / "runs" / SUITE / version / "agents" / AGENT
        runs: dict[int, list[dict]] = {}
        for count in (1, 2):
            sets[count].ready()
            with dg.DagsterInstance.from_config(str(tmp / f"dagster{count}")) as instance:
                for _ in range(args.repeats):
                    shutil.rmtree(out_dir, ignore_errors=True)
                    run_config = celery_run_config(SUITE, version, AGENT, args.chunk, broker=brokers[count],
                                                   max_in_flight=args.in_flight) | QUIET
                    runs.setdefault(count, []).append(run_celery(recon, instance, run_config, n))
    report(result, args, n, inproc, runs)


def report(result: benchlib.Result, args, n: int, inproc: list[float], runs: dict[int, list[dict]]) -> None:
    mean_s = args.median_ms / 1000 * math.exp(args.sigma ** 2 / 2)
    ideal = args.in_flight / (REQUESTS * mean_s)
    k = args.in_flight
    result.add(f"in process (run_release, max_in_flight {k}), {n} trials", inproc, "trials/s",
               note=f"ideal {ideal:.3g} trials/s")
    for count, rs in runs.items():
        result.add(f"Celery, {count} worker(s) x {k} in flight, chunks of ~{args.chunk}: trials/s",
                   [r["rate"] for r in rs], "trials/s",
                   note=f"run wall time; ideal {count * ideal:.3g}; {rs[0]['workers']} worker(s) ran chunks")
        result.add(f"Celery, {count} worker(s): trials/s over the chunk phase", [r["phase_rate"] for r in rs],
                   "trials/s", note=f"the run's fixed cost (plan, collect, scorecard, executor polls) "
                                    f"{statistics.median(r['fixed'] for r in rs):.2f} s left out")
        shares = [s for r in rs for s in r["shares"]]
        result.add(f"Celery, {count} worker(s): per-chunk overhead", [o for r in rs for o in r["overheads"]], "s",
                   note=f"chunk step wall {statistics.median(w for r in rs for w in r['walls']):.2f} s (median)")
        result.add(f"Celery, {count} worker(s): per-chunk overhead / chunk wall", shares, "", target="< 0.05",
                   met=statistics.median(shares) < 0.05,
                   note="step wall minus its trials' engine seconds, over the step wall; the target is on the median "
                        "(the max is a worker's first step, which builds the job)")
    if 1 in runs and 2 in runs:
        for what, key in (("run wall", "rate"), ("chunk phase", "phase_rate")):
            ratio = [b[key] / a[key] for a, b in zip(runs[1], runs[2])]
            result.add(f"Celery 2 workers / 1 worker throughput ({what})", ratio, "×",
                       target="≥ 1.8" if key == "rate" else None, met=min(ratio) >= 1.8 if key == "rate" else None)
    result.note(f"endpoint: lognormal latency median {args.median_ms:.0f} ms, sigma {args.sigma}; 32 AP tasks of "
                f"{STEPS} calls, {REQUESTS} requests a trial; {os.cpu_count()} CPUs shared by workers, endpoint and "
                f"this process; load average before/after in the document")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"  ({time.perf_counter() - t0:.0f} s)")
