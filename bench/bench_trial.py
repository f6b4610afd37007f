"""Median milliseconds per reset, per reference trial (reset + act + grade) and per grade on the AP world.

    .venv/bin/python bench/bench_trial.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from evalsuite.agents import make_agent
from evalsuite.agents.base import AgentEnv
from evalsuite.examples import ap_example
from evalsuite.grading import grade
from evalsuite.trial import policy_text, run_trial


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    ex = ap_example(tempfile.mkdtemp(prefix="bench-"))
    world, agent = ex.world, make_agent("reference")
    resets, trials, grades = [], [], []
    for _ in range(args.repeats):
        for task in ex.tasks:
            t0 = time.perf_counter()
            trial = world.reset(task.role, policy_text=policy_text(task))
            resets.append(time.perf_counter() - t0)
            message = agent.run(task, AgentEnv(trial, task.trial_protocol.max_steps))
            t1 = time.perf_counter()
            grade(world.schemas, world.initial_rows, trial.changed_rows(), trial.trace, message, task.goal_state, task.role, task.forbidden)
            grades.append(time.perf_counter() - t1)
            t2 = time.perf_counter()
            assert run_trial(world, task, agent).passed
            trials.append(time.perf_counter() - t2)
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    rows = sum(len(r) for r in world.initial_rows.values())
    print(f"AP world: {len(ex.tasks)} tasks, {rows} rows in {len(world.initial_rows)} tables, {args.repeats} repeats")
    print(f"median reset (restore + verify hash)       {ms(resets):7.3f} ms")
    print(f"median grade                               {ms(grades):7.3f} ms")
    print(f"median reference trial (reset+act+grade)   {ms(trials):7.3f} ms")


if __name__ == "__main__":
    main()
