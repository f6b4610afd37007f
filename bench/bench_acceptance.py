"""Acceptance throughput on the AP suite: N=8 reference trials + no-op + adversary per task, on all cores.

    .venv/bin/python bench/bench_acceptance.py [--repeats 3] [--workers 2] [--json PATH]

Wall time on a shared machine swells with its load: the best repeat is shown
beside the median, the load average beside both, and for the in-process
runner also trials per CPU-second of this process. Each parallel run starts
its own worker pool, so its figure includes the workers' start-up.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time

import benchlib

from evalsuite.audit.acceptance import in_process_runner, run_acceptance
from evalsuite.core.identity import RunIdentity
from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.domains.ref import WorldRef
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.harness import acceptance_runner


def main() -> None:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    args = ap.parse_args()
    ex = ap_example(tempfile.mkdtemp(prefix="bench-"))
    domain = ex.world.domain
    identity = RunIdentity(suite="ap_exceptions", suite_version="bench", task_set_sha256=task_set_sha256(ex.tasks),
                           seed_sha256=ex.world.seed_sha256, environment_image=domain.image,
                           tool_schemas_sha256=domain.tool_schemas_sha256())
    ref = WorldRef.from_world(ex.world)
    runners = {"in-process (1 core)": in_process_runner(ex.world),
               f"parallel ({args.workers} workers)": acceptance_runner(ref, identity, args.workers),
               "default (what builds use)": acceptance_runner(ref, identity)}
    res = benchlib.Result("acceptance", benchlib.command_line())
    for label, runner in runners.items():
        rates, cpu_rates = [], []
        for _ in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            report = run_acceptance(ex.tasks, Acceptance(reference_trials=8), runner)
            n = report.summary["trials_run"]
            rates.append(n / (time.perf_counter() - t0))
            cpu_rates.append(n / (time.process_time() - c0))
        target = label.startswith(("parallel", "default"))
        res.add(f"AP acceptance, {label}: {len(ex.tasks)} tasks, {n} trials", rates, "trials/s",
                target="≥ 3,000 trials/s on 2 cores" if target else None,
                met=statistics.median(rates) >= 3000 if target else None,
                note=f"{statistics.median(rates) / 3000:.0%} of the target" if target else "")
        if label.startswith("in-process"):
            res.add(f"AP acceptance, {label}, per CPU-second of this process", cpu_rates, "trials/s")
    res.write(args.json)


if __name__ == "__main__":
    main()
