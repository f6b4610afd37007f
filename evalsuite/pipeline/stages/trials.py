"""Trial traces: one agent config run (or resumed) on one release, with its own scorecard in its run folder.

Every kind of agent config runs here: baselines, `openai` (OpenAI-compatible endpoints, whose settings and key
come in as an Endpoint, never through the config) and `mcp` (an external program). A trial the endpoint or the
program fails is an infra_error record: kept, counted in `outcomes` and in the scorecard, never dropped.
"""
from __future__ import annotations

from collections import Counter

from evalsuite.core.hashing import json_sha256
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import StageOutput
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.cost import money
from evalsuite.scoring.render import capped_line
from evalsuite.scoring.runlog import TRACES, read_records
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.trials.agents.endpoint import Endpoint, endpoint
from evalsuite.trials.harness import default_workers
from evalsuite.trials.settings import EngineSettings


def run(spec: SuiteSpec, paths: Paths, version: str, agent: str, workers: int | None = None,
        model_endpoint: Endpoint | None = None, engine: EngineSettings | None = None) -> StageOutput:
    configs = {a.name: a for a in spec.agents}
    if agent not in configs:
        raise ValueError(f"agent {agent!r} is not among the agents of suite {spec.name}")
    rel = Release(paths.release(spec.name, version))
    out = paths.agent_run(version, agent)
    n_trials = sum(t.trial_protocol.trials for t in rel.tasks())
    with endpoint(model_endpoint or Endpoint()):  # agents are built inside: they take the key from here
        card = run_release(rel, [configs[agent]], out, workers=workers or default_workers(n_trials), progress=False,
                           engine=engine)
    records = read_records(out)
    a = card.agents[0]
    digest = json_sha256([a.identity_sha256, sorted((r.task_id, r.trial, r.outcome) for r in records)])
    return StageOutput(digest, {
        "agent": agent, "kind": configs[agent].kind, "suite_version": version, "trials": len(records),
        "tasks": a.tasks, "passed": sum(r.passed for r in records),
        "outcomes": dict(Counter(r.outcome for r in records)), "infra_errors": a.outcomes["infra_error"],
        "pass^1": round(a.curve[0].pass_hat, 4), **_cost(a.cost),
        "identity_sha256": a.identity_sha256, "traces": out / TRACES, **_capped(card)})


def _capped(card) -> dict:
    """A capped run says so beside its figures (the run folder's scorecard says which tasks it covers)."""
    return {"capped": capped_line(card)} if card.capped else {}


def _cost(cost) -> dict:
    """Tokens and priced cost as metadata; the exact amounts are in the run folder's scorecard.json."""
    if cost is None or not cost.trials_with_usage:
        return {"tokens": "not reported by this agent"}
    return {"model_calls": cost.model_calls, "tokens_in": cost.tokens_in, "tokens_out": cost.tokens_out,
            "cost per trial": money(cost.cost_per_trial, cost.currency),
            "cost per success": money(cost.cost_per_success, cost.currency)}


def config(spec: SuiteSpec, paths: Paths):
    return [spec.trial_protocol.model_dump(mode="json"), [a.model_dump(mode="json") for a in spec.agents]]
