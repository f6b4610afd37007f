"""Milliseconds per derivation of the research_brief tasks and per trial on its world, in process: the reference
brief and every named near miss (run + grade with its six domain checks), as acceptance runs them.

    .venv/bin/python bench/bench_research_brief.py [--repeats 3] [--json PATH]

Each figure is the median over every task (or near miss) of every repeat, with min and max, wall time (on a shared
machine the wall time swells with the load; the load average is recorded). The world and tasks come from the
suite's generated export without de-identification, which changes no text the trials read.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import benchlib

from evalsuite.core.records import Environment, SuiteRef, TrialProtocol
from evalsuite.domains.decision_brief import DOMAIN
from evalsuite.domains.decision_brief.corpus import LICENSE_REF, export
from evalsuite.domains.decision_brief.derive import derive_tasks
from evalsuite.sourcing.policies import load_policy
from evalsuite.tasks.derivation import DeriveContext
from evalsuite.trials.agents.baselines import ReferenceAgent
from evalsuite.trials.trial import run_trial
from evalsuite.worlds.world import World

POLICY = Path(__file__).resolve().parents[1] / "evalsuite/domains/decision_brief/policies/research_policy_v1.md"


def main() -> int:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tables, policy = export(), load_policy(POLICY)
    ctx = DeriveContext(suite=SuiteRef(name="research_brief", version="bench"), seed=11, splits={"test": 1.0},
                        environment=Environment(image=DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256="-"),
                        protocol=TrialProtocol(trials=1), license_ref=LICENSE_REF)
    world = World.build(DOMAIN, {t: r for t, r in tables.items() if t in DOMAIN.tables},
                        Path(tempfile.mkdtemp(prefix="bench-")) / "world.sqlite")
    agent, times = ReferenceAgent(), {"derivation (34 recorded briefs)": [], "reference trial": [],
                                      "near-miss trial": []}
    for _ in range(args.repeats):
        wall, derived = benchlib.timed(lambda: derive_tasks(tables, [policy], ctx))
        times["derivation (34 recorded briefs)"].append(wall)
        for task in derived.tasks:
            wall, result = benchlib.timed(lambda: run_trial(world, task, agent))
            assert result.passed, task.task_id
            times["reference trial"].append(wall)
            for c in task.negative_controls:
                near = task.model_copy(update={"reference_solution": c.calls, "reference_answer": c.final_message})
                wall, result = benchlib.timed(lambda: run_trial(world, near, agent))
                assert not result.passed, (task.task_id, c.name)
                times["near-miss trial"].append(wall)
    res = benchlib.Result("research_brief", benchlib.command_line())
    for name, samples in times.items():
        res.add(f"research_brief {name}", samples, "ms")
    res.note(f"{len(derived.tasks)} tasks, {sum(len(t.negative_controls) for t in derived.tasks)} near misses, "
             f"{args.repeats} repeats")
    res.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
