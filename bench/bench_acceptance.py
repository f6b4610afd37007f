"""Acceptance throughput on the AP suite: N=8 reference trials + no-op + adversary per task, on all cores.

    .venv/bin/python bench/bench_acceptance.py [--repeats 3] [--workers 2]

Wall time on a shared machine swells with its load: the best repeat is shown
beside the median, the load average beside both, and for the in-process
runner also trials per CPU-second of this process. Each parallel run starts
its own worker pool, so its figure includes the workers' start-up.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from evalsuite.scoring.acceptance import in_process_runner, run_acceptance
from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.core.identity import RunIdentity
from evalsuite.worlds.ref import WorldRef
from evalsuite.trials.harness import acceptance_runner
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.sourcing.spec import Acceptance


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    args = ap.parse_args()
    ex = ap_example(tempfile.mkdtemp(prefix="bench-"))
    domain = ex.world.domain
    identity = RunIdentity(suite="ap_exceptions", suite_version="bench", task_set_sha256=task_set_sha256(ex.tasks),
                           seed_sha256=ex.world.seed_sha256, environment_image=domain.image,
                           tool_schemas_sha256=domain.tool_schemas_sha256())
    runners = {"in-process (1 core)": in_process_runner(ex.world),
               f"parallel ({args.workers} workers)": acceptance_runner(WorldRef.from_world(ex.world), identity, args.workers),
               "default (what builds use)": acceptance_runner(WorldRef.from_world(ex.world), identity)}
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    for label, runner in runners.items():
        rates, cpu_rates = [], []
        for _ in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            report = run_acceptance(ex.tasks, Acceptance(reference_trials=8), runner)
            n = report.summary["trials_run"]
            rates.append(n / (time.perf_counter() - t0))
            cpu_rates.append(n / (time.process_time() - c0))
        cpu = f", {statistics.median(cpu_rates):5.0f} per CPU-second" if label.startswith("in-process") else ""
        print(f"{label:24s} {len(ex.tasks)} tasks, {n} trials: median {statistics.median(rates):5.0f} trials/s, "
              f"best {max(rates):5.0f} over {args.repeats} repeats{cpu}")
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
