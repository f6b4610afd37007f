"""What a sealed analysis run costs in the experiment domain: the boundary alone (`print(1)`), the reference
analysis (numpy and scipy.special imported, a Welch or bootstrap interval computed), and one graded reference trial
(its run_analysis call plus the grader's two reruns, same data and resampled copy).

    .venv/bin/python bench/bench_experiment.py [--repeats 5] [--json PATH]

The sandbox is what EVALSUITE_AGENT_SANDBOX picks (bwrap where it works); wall time on a shared machine swells
with its load, shown beside the figures.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import benchlib

from evalsuite.core.records import Environment, SuiteRef, TrialProtocol
from evalsuite.core.sandbox import sandbox_for
from evalsuite.domains.experiment import DOMAIN
from evalsuite.domains.experiment import checks as experiment_checks
from evalsuite.domains.experiment.authoring import source_tables
from evalsuite.domains.experiment.derive import code_for, derive_tasks
from evalsuite.domains.experiment.sealed import run_code
from evalsuite.domains.experiment.tools import dataset_csv
from evalsuite.sourcing.policies import load_policy
from evalsuite.tasks.derivation import DeriveContext
from evalsuite.trials.agents.baselines import ReferenceAgent
from evalsuite.trials.trial import run_trial
from evalsuite.worlds.world import World

SUITE = Path(__file__).resolve().parents[1] / "suites" / "research_experiment"


def main() -> None:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    tables = source_tables()
    ctx = DeriveContext(suite=SuiteRef(name="research_experiment", version="bench"), protocol=TrialProtocol(),
                        seed=7, splits={"test": 1.0}, license_ref="bench",
                        environment=Environment(image=DOMAIN.image, seed_snapshot="w", seed_sha256="0" * 64))
    tasks = derive_tasks(tables, [load_policy(SUITE / "policies" / "experiment_protocol_v1.md")], ctx).tasks
    world = World.build(DOMAIN, tables, Path(tempfile.mkdtemp(prefix="bench-")) / "world.sqlite")
    res = benchlib.Result("experiment", benchlib.command_line())
    res.note(f"sandbox: {sandbox_for().mechanism}")
    p01 = next(p for p in tables["protocols"] if p["protocol_id"] == "P01")
    p06 = next(p for p in tables["protocols"] if p["protocol_id"] == "P06")
    for label, p in (("Welch, 1,000 rows", p01), ("bootstrap of medians, 2,000 resamples, 120 rows", p06)):
        data = dataset_csv([r for r in tables["observations"] if r["dataset_id"] == p["dataset_id"]])
        res.add(f"sealed reference analysis ({label})",
                [benchlib.timed(lambda: run_code(code_for(p), data))[0] for _ in range(args.repeats)], "ms")
    res.add("sealed run of print(1) (the boundary alone)",
            [benchlib.timed(lambda: run_code("print(1)\n", ""))[0] for _ in range(args.repeats)], "ms")
    task = next(t for t in tasks if t.task_id == "exp-p01")

    def graded() -> None:
        experiment_checks.rerun.cache_clear()  # every trial's reruns fresh, as in a new worker
        assert run_trial(world, task, ReferenceAgent()).passed

    res.add("graded reference trial (1 run + 2 reruns)",
            [benchlib.timed(graded)[0] for _ in range(args.repeats)], "ms")
    res.write(args.json)


if __name__ == "__main__":
    main()
