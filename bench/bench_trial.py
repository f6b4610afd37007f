"""Milliseconds per reset, per grade, per measures and per reference trial (reset + act + grade + measures) on the
AP world, in process.

    .venv/bin/python bench/bench_trial.py [--repeats 5] [--baseline 7bb15c3] [--rounds 3] [--json PATH]

Each figure is the median over every task of every repeat, with min and max, in wall time and in this
thread's CPU time (on a shared machine the wall time swells with the load; the load average is recorded).
The reference trial is `run_trial` as acceptance runs it; its inverse is the in-process trial rate of one core.

Issue 41 asks for grading and measures per AP trial halved against the code it measured (7bb15c3). With
`--baseline REV` (default that commit; `none` skips it) the library at REV (`git archive REV evalsuite`, into a
temporary folder) and this checkout's run this same script in turn, each in a fresh process, `--rounds` times;
the figure is each round's ratio of the medians of grade + measures CPU per trial, this checkout's over REV's.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchlib

from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.grading.grader import grade_trial
from evalsuite.grading.measures import measure_trial
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import policy_text, run_trial

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "7bb15c3"  # main when issue 41 measured grading and measures per AP trial
GRADE_AND_MEASURES = "grade + measures, CPU"


def measure(repeats: int) -> tuple[dict[str, list[float]], str]:
    """{figure: samples in ms} of `repeats` passes over the AP example's tasks, and a note on the world."""
    ex = ap_example(tempfile.mkdtemp(prefix="bench-"))
    world, agent = ex.world, make_agent("reference")
    times: dict[str, list[float]] = {}

    def timed(name: str, fn):
        wall, cpu, out = benchlib.timed_cpu(fn)
        times.setdefault(name, []).append(wall)
        times.setdefault(f"{name}, CPU", []).append(cpu)
        return out

    world.reset(None)  # the first reset restores the whole image; trials after it restore rows
    for _ in range(repeats):
        for task in ex.tasks:
            trial = timed("reset (row restore + verify)", lambda: world.reset(task.role, policy_text=policy_text(task)))
            message = agent.run(task, AgentEnv(trial, task.trial_protocol.max_steps))
            verdict = timed("grade", lambda: grade_trial(trial, message, task.goal_state, task.role, task.forbidden))
            timed("measures (grounding, authority, handoff)", lambda: measure_trial(
                task, world.domain, verdict, trial.trace, message, policy_text(task)))
            times.setdefault(GRADE_AND_MEASURES, []).append(
                times["grade, CPU"][-1] + times["measures (grounding, authority, handoff), CPU"][-1])
            if not timed("reference trial (reset + act + grade)", lambda: run_trial(world, task, agent)).passed:
                raise AssertionError(f"{task.task_id}: the reference trial fails")
    rows = sum(world.pristine_db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in world.domain.tables)
    return times, f"AP world: {len(ex.tasks)} tasks, {rows} rows, {repeats} repeats"


def in_fresh_process(library: Path, repeats: int) -> float:
    """The median grade + measures CPU per trial (ms) of this script run on the library in `library`."""
    with tempfile.TemporaryDirectory(prefix="bench-trial-") as tmp:
        out = Path(tmp) / "times.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(library), str(ROOT / "bench")])}
        subprocess.run([sys.executable, __file__, "--times-only", str(out), "--repeats", str(repeats)],
                       env=env, cwd=tmp, check=True, capture_output=True)
        return statistics.median(json.loads(out.read_text())[GRADE_AND_MEASURES])


def against_baseline(res: benchlib.Result, rev: str, rounds: int, repeats: int) -> None:
    """Rows: grade + measures CPU per trial at `rev` and here, and this checkout's over rev's, per round."""
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as base:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "evalsuite"], capture_output=True)
        if archive.returncode != 0:  # a tarball of the project, or the commit is not in this clone
            res.note(f"baseline {rev} not run: {archive.stderr.decode().strip()}")
            return
        subprocess.run(["tar", "-x", "-C", base], input=archive.stdout, check=True)
        theirs, ours = [], []
        for _ in range(rounds):
            theirs.append(in_fresh_process(Path(base), repeats))
            ours.append(in_fresh_process(ROOT, repeats))
    res.add(f"AP grade + measures CPU per trial, at {rev}", theirs, "ms")
    res.add("AP grade + measures CPU per trial, this checkout", ours, "ms")
    ratios = [o / t for o, t in zip(ours, theirs)]
    res.add(f"AP grade + measures per trial, this checkout / {rev}", ratios, "×", target="≤ 0.5×",
            met=statistics.median(ratios) <= 0.5, note=f"{rounds} rounds, each side in a fresh process in turn")


def main() -> int:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", default=BASELINE, help="the commit to compare grade + measures with, or none")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--times-only", type=Path, help=argparse.SUPPRESS)  # a baseline round's child: raw samples
    args = ap.parse_args()
    times, note = measure(args.repeats)
    if args.times_only:
        args.times_only.write_text(json.dumps(times))
        return 0
    res = benchlib.Result("trial", benchlib.command_line())
    for name, samples in times.items():
        res.add(f"AP {name}", samples, "ms")
    cpu = statistics.median(times["reference trial (reset + act + grade), CPU"])
    res.add("AP reference trials per CPU-second, one core", [1000 / x for x in times[
        "reference trial (reset + act + grade), CPU"]], "trials/s",
        note=f"median {cpu:.3f} ms CPU per trial; 2 cores at this rate: {2000 / cpu:,.0f} trials/s")
    res.note(note)
    if args.baseline != "none":
        against_baseline(res, args.baseline, args.rounds, args.repeats)
    res.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
