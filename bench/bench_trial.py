"""Milliseconds per reset, per grade, per measures and per reference trial (reset + act + grade + measures) on the
AP world, in process.

    .venv/bin/python bench/bench_trial.py [--repeats 5] [--json PATH]

Each figure is the median over every task of every repeat, with min and max, in wall time and in this
thread's CPU time (on a shared machine the wall time swells with the load; the load average is recorded).
The reference trial is `run_trial` as acceptance runs it; its inverse is the in-process trial rate of one core.
"""
from __future__ import annotations

import statistics
import sys
import tempfile

import benchlib

from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.grading.grader import grade_trial
from evalsuite.grading.measures import measure_trial
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import policy_text, run_trial


def main() -> int:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    ex = ap_example(tempfile.mkdtemp(prefix="bench-"))
    world, agent = ex.world, make_agent("reference")
    times: dict[str, list[float]] = {}

    def timed(name: str, fn):
        wall, cpu, out = benchlib.timed_cpu(fn)
        times.setdefault(name, []).append(wall)
        times.setdefault(f"{name}, CPU", []).append(cpu)
        return out

    world.reset(None)  # the first reset restores the whole image; trials after it restore rows
    for _ in range(args.repeats):
        for task in ex.tasks:
            trial = timed("reset (row restore + verify)", lambda: world.reset(task.role, policy_text=policy_text(task)))
            message = agent.run(task, AgentEnv(trial, task.trial_protocol.max_steps))
            verdict = timed("grade", lambda: grade_trial(trial, message, task.goal_state, task.role, task.forbidden))
            timed("measures (grounding, authority, handoff)", lambda: measure_trial(
                task, world.domain, verdict, trial.trace, message, policy_text(task)))
            if not timed("reference trial (reset + act + grade)", lambda: run_trial(world, task, agent)).passed:
                raise AssertionError(f"{task.task_id}: the reference trial fails")
    res = benchlib.Result("trial", benchlib.command_line())
    for name, samples in times.items():
        res.add(f"AP {name}", samples, "ms")
    cpu = statistics.median(times["reference trial (reset + act + grade), CPU"])
    res.add("AP reference trials per CPU-second, one core", [1000 / x for x in times[
        "reference trial (reset + act + grade), CPU"]], "trials/s",
        note=f"median {cpu:.3f} ms CPU per trial; 2 cores at this rate: {2000 / cpu:,.0f} trials/s")
    rows = sum(world.pristine_db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in world.domain.tables)
    res.note(f"AP world: {len(ex.tasks)} tasks, {rows} rows, {args.repeats} repeats")
    res.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
