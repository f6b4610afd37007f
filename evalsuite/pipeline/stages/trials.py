"""Trial traces: one agent config run (or resumed) on one release, with its own scorecard in its run folder."""
from __future__ import annotations

from collections import Counter

from evalsuite.core.hashing import json_sha256
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import StageOutput
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.scorecard import load_records
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.trials.harness import default_workers


def run(spec: SuiteSpec, paths: Paths, version: str, agent: str, workers: int | None = None) -> StageOutput:
    configs = {a.name: a for a in spec.agents}
    if agent not in configs:
        raise ValueError(f"agent {agent!r} is not among the agents of suite {spec.name}")
    rel = Release(paths.release(spec.name, version))
    out = paths.agent_run(version, agent)
    n_trials = sum(t.trial_protocol.trials for t in rel.tasks())
    card = run_release(rel, [configs[agent]], out, workers=workers or default_workers(n_trials), progress=False)
    records = load_records(out)
    a = card.agents[0]
    digest = json_sha256([a.identity_sha256, sorted((r.task_id, r.trial, r.outcome) for r in records)])
    return StageOutput(digest, {
        "agent": agent, "suite_version": version, "trials": len(records), "tasks": a.tasks,
        "passed": sum(r.passed for r in records), "outcomes": dict(Counter(r.outcome for r in records)),
        "pass^1": round(a.curve[0].pass_hat, 4), "identity_sha256": a.identity_sha256, "traces": out / "traces.jsonl"})


def config(spec: SuiteSpec):
    return [spec.trial_protocol.model_dump(mode="json"), [a.model_dump(mode="json") for a in spec.agents]]
