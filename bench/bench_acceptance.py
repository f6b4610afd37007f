"""Acceptance throughput on the AP suite: N=8 reference trials + no-op + adversary per task, on all cores.

    .venv/bin/python bench/bench_acceptance.py [--repeats 3] [--workers 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from evalsuite.acceptance import in_process_runner, run_acceptance
from evalsuite.examples import ap_example
from evalsuite.harness import RunIdentity, WorldRef, acceptance_runner
from evalsuite.release import task_set_sha256
from evalsuite.spec import Acceptance


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
               f"parallel ({args.workers} workers)": acceptance_runner(WorldRef.from_world(ex.world), identity, args.workers)}
    for label, runner in runners.items():
        rates = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            report = run_acceptance(ex.tasks, Acceptance(reference_trials=8), runner)
            rates.append(report.summary["trials_run"] / (time.perf_counter() - t0))
        print(f"{label:24s} {len(ex.tasks)} tasks, {report.summary['trials_run']} trials: "
              f"median {statistics.median(rates):6.0f} trials/s over {args.repeats} repeats")


if __name__ == "__main__":
    main()
