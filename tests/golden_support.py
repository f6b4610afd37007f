"""Digests of what trials record, to hold a speed-up to the records, hashes and verdicts of the code before it.

tests/trials/golden_records.json holds the digests computed with main's code at 7d69a51 (77ce6ad gives the same),
before the tool-call and grading speed-ups of issue 41 (`PYTHONPATH=MAIN python tests/golden_support.py` prints
them). A digest is the sha256 of the JSON of what a
user keeps of a trial: its trace, verdict, measures and reset hash (the record of run_trial, wall times left out),
and after a τ² replay the rows it changed and τ²'s own DB hash.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.domains.tau2_retail import TAU2_HASH
from evalsuite.grading.grader import grade_trial
from evalsuite.grading.measures import measure_trial
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import policy_text, run_trial
from evalsuite.worlds.world import World

GOLDEN = Path(__file__).parent / "trials" / "golden_records.json"
AP_AGENTS = ("reference", "noop", "adversary", "soloist")
# calls every τ² task also makes after its gold ones: an unknown tool, arguments of the wrong type, a missing id
TAU2_ERRORS = (ToolCall(tool="no_such_tool", arguments={}),
               ToolCall(tool="get_order_details", arguments={"order_id": ["#W1"]}),
               ToolCall(tool="get_user_details", arguments={"user_id": "nobody"}),
               ToolCall(tool="find_user_id_by_email", arguments={}))


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def ap_digests(world: World, tasks: Iterable[TaskRecord]) -> dict[str, str]:
    """Per `agent/task`: run_trial's record, its wall times left out."""
    out = {}
    for name in AP_AGENTS:
        agent = make_agent(name)
        for task in tasks:
            record = run_trial(world, task, agent).model_dump(mode="json", exclude={"seconds"})
            for event in record["trace"]:
                event.pop("seconds", None)
            out[f"{name}/{task.task_id}"] = digest(record)
    return out


def tau2_digests(world: World, tasks: Iterable[TaskRecord]) -> dict[str, str]:
    """Per task: its gold calls and TAU2_ERRORS replayed, traced, graded and measured, and the end state's hashes."""
    out, hasher = {}, TAU2_HASH.hasher(world)  # incremental, equal to the full dump (test_tau2_retail.py)
    for task in tasks:
        trial = world.reset(task.role)
        for call in [*task.solution_calls(), *TAU2_ERRORS]:
            trial.call(call.tool, call.arguments)
        message = " ".join(o.value for o in task.goal_state.required_outputs)
        verdict = grade_trial(trial, message, task.goal_state, task.role, task.forbidden)
        measures = measure_trial(task, world.domain, verdict, trial.trace, message, policy_text(task))
        out[task.task_id] = digest({"trace": [e.model_dump(mode="json") for e in trial.trace],
                                    "verdict": verdict.model_dump(mode="json"),
                                    "measures": measures.model_dump(mode="json"),
                                    "changed": changed_rows(trial), "tau2": hasher.hash(trial)})
    return out


def changed_rows(trial) -> dict[str, list]:
    """Each row the trial inserted, updated or deleted (None when deleted), by table and key."""
    return {table: [[list(k), trial.row(table, k)] for k in sorted(keys, key=repr)]
            for table, keys in sorted(trial.changed_keys().items())}


def compute(workdir: Path) -> dict[str, dict[str, str]]:
    from evalsuite.domains.ap_exceptions.example import ap_example
    from evalsuite.domains.tau2_retail import DOMAIN
    from evalsuite.importers.tau2.importer import import_tau2
    from evalsuite.importers.tau2.sources import RETAIL
    from evalsuite.tasks.taskfile import read_tasks

    ap = ap_example(workdir / "ap")
    import_tau2(RETAIL, Path(__file__).parents[1] / "third_party" / "tau2_retail", workdir / "tau2")
    tau2 = World(DOMAIN, workdir / "tau2" / "world.sqlite")
    return {"ap": ap_digests(ap.world, ap.tasks), "tau2_retail": tau2_digests(tau2, read_tasks(workdir / "tau2" /
                                                                                              "tasks.jsonl"))}


if __name__ == "__main__":
    import tempfile

    print(json.dumps(compute(Path(tempfile.mkdtemp(prefix="golden-"))), indent=1, sort_keys=True))
