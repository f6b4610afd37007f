"""Trials on Celery: per-step overhead of the Celery trial job and trials/s with 1 and 2 workers, beside in process.

    .venv/bin/python bench/bench_celery.py [--workers 1,2] [--repeats 3] [--trials 4] [--chunk 50]
                                           [--broker redis://127.0.0.1:6379/N] [--json PATH]

Builds the bundled AP suite (49 tasks) with `--trials` trials per task, starts N Celery workers
(tests/celery_workers.py: `celery -A dagster_celery.app worker --pool=solo`, one step at a time each)
on a SQLite instance in a temporary DAGSTER_HOME, waits until they are ready (their start is not timed), and
runs the reference agent's trials through `<suite>__celery_trials_job` in chunks of about `--chunk` trials,
`--repeats` times into a fresh run folder. Figures:

- trials/s: trials of the run / the run's wall time (Dagster's run start to end: planning, every chunk,
  collecting, the scorecard), per worker count; and the same trials in process (`run_release`, workers=1);
- per-step overhead: a chunk step's wall time in its worker (taken up until its success event) minus the
  seconds its trials report, i.e. what one Celery step costs beyond the trials it runs (rebuilding the job and
  the execution plan, opening the instance, the release and the world, writing the step's events and outputs).

Needs Redis on 127.0.0.1:6379 (the broker); exits 2 naming it when none answers.
"""
from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from suite_support import copy_suite  # noqa: E402  (the bundled AP suite, as the tests copy it)

from evalsuite.deid.keys import DEMO_KEY  # noqa: E402
from evalsuite.scoring.runlog import TRACES  # noqa: E402

KEY = DEMO_KEY
AGENT = "reference"
SUITE = "ap_exceptions"  # the op names of its celery job carry it


def step_overheads(instance, run_id: str, trial_seconds: dict[str, float]) -> list[float]:
    """Per run_chunk step: seconds from a worker taking it up (its "Executing steps" event) to its success event,
    minus its trials' own seconds. Time spent queued behind other chunks is not counted."""
    import dagster as dg

    started, done = {}, {}
    for rec in instance.all_logs(run_id):
        ev, key = rec.dagster_event, rec.step_key or ""
        if ev is None or not key.startswith(f"{SUITE}__run_chunk["):
            continue
        if ev.event_type == dg.DagsterEventType.ENGINE_EVENT and "in celery worker" in (ev.message or ""):
            started[key] = rec.timestamp
        elif ev.event_type == dg.DagsterEventType.STEP_SUCCESS:
            done[key] = rec.timestamp
    return [done[k] - started[k] - trial_seconds[k] for k in done if k in started]


def chunk_trial_seconds(out_dir: Path, chunk: int, tasks) -> dict[str, float]:
    """Seconds the trials of each chunk report, by step key (chunks as the job planned them)."""
    from evalsuite.trials.chunks import plan_chunks
    from evalsuite.trials.tracelog import read_traces

    seconds: dict[str, float] = {}
    for r in read_traces(out_dir / TRACES).records:
        seconds[r.task_id] = seconds.get(r.task_id, 0.0) + r.seconds
    return {f"{SUITE}__run_chunk[chunk_{c.index}]": sum(seconds[t] for t in c.task_ids)
            for c in plan_chunks(tasks, AGENT, chunk)}


def main() -> None:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--workers", default="1,2", help="worker counts to try, comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trials", type=int, default=4, help="trials per task (49 tasks)")
    ap.add_argument("--chunk", type=int, default=50, help="trials per Celery step")
    ap.add_argument("--broker", default=f"redis://127.0.0.1:6379/{random.randint(1, 15)}")
    args = ap.parse_args()
    benchlib.require_redis("bench_celery")

    os.environ.setdefault("EVALSUITE_DEID_KEY", KEY)
    import dagster as dg
    from celery_workers import local_workers
    from dagster_driver import QUIET

    from evalsuite.pipeline import driver
    from evalsuite.releases.release import Release
    from evalsuite.releases.runs import run_release
    from evalsuite.sourcing.spec import load_spec
    from evalsuite_dagster.trials.celery import celery_run_config

    result = benchlib.Result("bench_celery", benchlib.command_line())
    tmp = Path(tempfile.mkdtemp(prefix="bench-celery-"))
    try:
        spec = copy_suite(tmp / "suite", reference_trials=2, trials=args.trials)
        home = tmp / "home"
        version = driver.build(spec, home=home).version
        rel = Release(home / "releases" / "ap_exceptions" / version)
        tasks = rel.tasks()
        n = sum(t.trial_protocol.trials for t in tasks)
        config = [a for a in load_spec(spec).agents if a.name == AGENT]
        inproc = []
        for i in range(args.repeats):
            ms, _ = benchlib.timed(lambda: run_release(rel, config, tmp / f"inproc{i}", workers=1))
            inproc.append(n / (ms / 1000))
        result.add(f"in process (run_release, workers=1), {n} trials", inproc, "trials/s")
        recon = dg.build_reconstructable_job("evalsuite_dagster.trials.celery", "job_for_spec",
                                             reconstructable_args=(str(spec), str(home)))
        out_dir = home / "runs" / "ap_exceptions" / version / "agents" / AGENT
        for count in [int(w) for w in args.workers.split(",")]:
            dagster_home = tmp / f"dagster{count}"
            dagster_home.mkdir()
            shutil.copyfile(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
            rates, overheads = [], []
            with local_workers(count, dagster_home, args.broker, tmp) as workers, \
                    dg.DagsterInstance.from_config(str(dagster_home)) as instance:
                workers.ready()
                for _ in range(args.repeats):
                    shutil.rmtree(out_dir, ignore_errors=True)
                    config = celery_run_config(SUITE, version, AGENT, args.chunk, broker=args.broker) | QUIET
                    run = dg.execute_job(recon, instance=instance, run_config=config)
                    if not run.success:
                        raise SystemExit(f"error: celery trial run {run.run_id} failed")
                    rec = instance.get_run_record_by_id(run.run_id)
                    rates.append(n / (rec.end_time - rec.start_time))
                    overheads += step_overheads(instance, run.run_id,
                                                chunk_trial_seconds(out_dir, args.chunk, tasks))
            result.add(f"Celery trial job, {count} worker(s), {n} trials in chunks of ~{args.chunk}", rates,
                       "trials/s")
            result.add(f"Celery per-step overhead, {count} worker(s)", overheads, "s",
                       note="chunk step wall in its worker (taken up to success) minus its trials' own seconds")
        result.note(f"load average during the run: see load_average_before/after; broker {args.broker}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result.write(args.json)


if __name__ == "__main__":
    main()
