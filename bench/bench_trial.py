"""Median milliseconds per reset, per reference trial (reset + act + grade) and per grade on the AP world.

    .venv/bin/python bench/bench_trial.py [--repeats 5]

Wall time on a shared machine swells with its load, so each figure is also
given in CPU time (this thread's), and the load average is printed with them.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from evalsuite.grading.grader import grade_trial
from evalsuite.trials.agents.baselines import make_agent
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.trials.trial import policy_text, run_trial

TARGET_MS = 10.0


def _timed(fn, wall: list[float], cpu: list[float]):
    c, w = time.thread_time(), time.perf_counter()
    out = fn()
    wall.append(time.perf_counter() - w)
    cpu.append(time.thread_time() - c)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    ex = ap_example(tempfile.mkdtemp(prefix="bench-"))
    world, agent = ex.world, make_agent("reference")
    times = {k: ([], []) for k in ("reset (restore + verify hash)", "grade", "reference trial (reset+act+grade)")}
    reset, grade, trial_ = times.values()
    load = os.getloadavg()[0]
    for _ in range(args.repeats):
        for task in ex.tasks:
            trial = _timed(lambda: world.reset(task.role, policy_text=policy_text(task)), *reset)
            message = agent.run(task, AgentEnv(trial, task.trial_protocol.max_steps))
            _timed(lambda: grade_trial(trial, message, task.goal_state, task.role, task.forbidden), *grade)
            assert _timed(lambda: run_trial(world, task, agent), *trial_).passed
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    rows = sum(len(r) for r in world.initial_rows.values())
    print(f"AP world: {len(ex.tasks)} tasks, {rows} rows in {len(world.initial_rows)} tables, {args.repeats} repeats")
    print(f"load average {load:.2f} -> {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'median ms':44} {'wall':>8} {'cpu':>8}")
    for name, (wall, cpu) in times.items():
        print(f"{name:44} {ms(wall):8.3f} {ms(cpu):8.3f}")
    ok = ms(trial_[0]) < TARGET_MS
    print(f"target: reference trial median < {TARGET_MS:g} ms: {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
