"""The AP trials bench_trial.py times, for counting instructions: a load-independent measure of grade and measures.

    PYTHONHASHSEED=0 valgrind --tool=callgrind .venv/bin/python bench/trial_instructions.py MODE [--passes 5]

MODE is `none` (reset and the reference agent's act), `grade` (and the grade) or `both` (and the measures): run
all three, and the grade's instructions are grade's count less none's, the measures' both's less grade's. Each
pass runs every AP task once. The garbage collector is off, as a collection falls wherever allocations happen to
cross a threshold, not on the code that made them. Not run by `make bench` (no `--json`): under valgrind a run
takes minutes.
"""
from __future__ import annotations

import argparse
import gc
import sys
import tempfile

from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.grading.grader import grade_trial
from evalsuite.grading.measures import measure_trial
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import policy_text


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("mode", choices=("none", "grade", "both"))
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    gc.disable()
    ex = ap_example(tempfile.mkdtemp(prefix="bench-"))
    world, agent = ex.world, make_agent("reference")
    world.reset(None)  # the first reset restores the whole image; trials after it restore rows
    for _ in range(args.passes):
        for task in ex.tasks:
            trial = world.reset(task.role, policy_text=policy_text(task))
            message = agent.run(task, AgentEnv(trial, task.trial_protocol.max_steps))
            if args.mode == "none":
                continue
            verdict = grade_trial(trial, message, task.goal_state, task.role, task.forbidden)
            if args.mode == "both":
                measure_trial(task, world.domain, verdict, trial.trace, message, policy_text(task))
    print(f"{args.mode}: {args.passes} passes over {len(ex.tasks)} AP tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
