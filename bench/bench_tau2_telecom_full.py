"""The whole composed τ²-bench telecom set audited task by task: the original's ids, gold, no-op, adversary, controls.

    .venv/bin/python bench/bench_tau2_telecom_full.py [--out DIR]

Imports telecom with --full into DIR (a temporary folder by default; an imported DIR is reused) and checks its
tasks_full.jsonl (`make test` imports the sample only: the whole set costs minutes): its ids must be tasks.json's,
in order, and acceptance
(evalsuite.audit.acceptance.run_acceptance, in this process, one reference trial) must find every task's reference
(its gold replayed on both worlds) passing, the no-op, the every-write adversary and each negative control failing.
Prints the counts, the quarantined tasks and each step's wall and CPU seconds; exits 1 unless the ids are the
original's and every reference passes and every no-op fails. Not run by `make bench` (it takes minutes: 2,285 tasks
x 3 trials and more), so it takes no `--json`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from evalsuite.audit.acceptance import in_process_runner, run_acceptance
from evalsuite.domains.tau2_telecom import DOMAIN
from evalsuite.importers.tau2.telecom import FULL_TASKS, import_telecom
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.world import World

SRC = Path(__file__).resolve().parents[1] / "third_party" / "tau2_telecom"


def _step(name: str, fn):
    """Run fn, print its wall and CPU seconds, return its result."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    print(f"{name:44} {time.perf_counter() - wall:8.1f} s wall {time.process_time() - cpu:8.1f} s CPU", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="an imported telecom folder (default: import into a temp dir)")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        if not (out / FULL_TASKS).is_file():
            _step("import (compose, verify, write)", lambda: import_telecom(SRC, out, whole=True))
        tasks = _step(f"read {FULL_TASKS}", lambda: read_tasks(out / FULL_TASKS))
        original = [t["id"] for t in json.loads((SRC / "tasks.json").read_text())]
        same_ids = [t.task_id for t in tasks] == original
        world = World(DOMAIN, out / "world.sqlite")
        report = _step("acceptance, one reference trial per task",
                       lambda: run_acceptance(tasks, Acceptance(reference_trials=1), in_process_runner(world)))
    audits = report.tasks
    print(f"load average {os.getloadavg()[0]:.2f} after")
    print(f"{len(tasks)} tasks; the original's {len(original)} ids in its order: {'yes' if same_ids else 'NO'}")
    print(f"reference (gold on both worlds) passes: {sum(a.reference_passes == a.reference_trials for a in audits)}")
    print(f"no-op fails: {sum(not a.noop_passes for a in audits)}; every-write adversary fails: "
          f"{sum(not a.adversary_passes for a in audits)}; negative controls passing: "
          f"{sum(len(a.controls_passing) for a in audits)} (of {report.summary.get('alternatives_and_controls', 0)})")
    print(f"quarantined: {report.summary['quarantined']}")
    for reason, n in Counter(r.split(":")[0] for a in audits for r in a.reasons).most_common():
        print(f"  {n:5} {reason}")
    for a in audits:
        if a.quarantined:
            print(f"  {a.task_id}: {'; '.join(a.reasons)}")
    return 0 if same_ids and all(a.reference_passes and not a.noop_passes for a in audits) else 1


if __name__ == "__main__":
    sys.exit(main())
