"""Trial traces: one agent config run (or resumed) on one release, with its own scorecard in its run folder.

Every kind of agent config runs here: baselines, `openai` (OpenAI-compatible endpoints, whose settings and key
come in as an Endpoint, never through the config) and `mcp` (an external program). A trial the endpoint or the
program fails is an infra_error record: kept, counted in `outcomes` and in the scorecard, never dropped.
A recorded run (`evalsuite import-run` into the release's runs folder) is an agent of the release too: nothing runs,
its folder is read and reported with its provenance, its regraded and recorded pass^k and its disagreements.
"""
from __future__ import annotations

from collections import Counter

from evalsuite.core.hashing import json_sha256
from evalsuite.core.markdown import Markdown
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import StageOutput
from evalsuite.releases.release import Release
from evalsuite.releases.runs import rescore, run_release
from evalsuite.scoring.cost import money
from evalsuite.scoring.render import capped_line, recording_section
from evalsuite.scoring.runlog import SCORECARD_MD, TRACES, imported_runs, is_imported, read_records
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.trials.agents.endpoint import Endpoint, endpoint
from evalsuite.trials.harness import default_workers
from evalsuite.trials.settings import EngineSettings


def run(spec: SuiteSpec, paths: Paths, version: str, agent: str, workers: int | None = None,
        model_endpoint: Endpoint | None = None, engine: EngineSettings | None = None) -> StageOutput:
    configs = {a.name: a for a in spec.agents}
    if agent not in configs and is_imported(paths.agent_run(version, agent)):
        return imported(paths, version, agent)
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


def imported_agents(paths: Paths, version: str) -> list[str]:
    """The recorded runs imported into a release's runs folder, by agent name."""
    return [p.name for p in imported_runs(paths.runs / version)]


def imported(paths: Paths, version: str, agent: str) -> StageOutput:
    """A recorded run as a trial run's metadata: nothing is run; what the import found, with its provenance."""
    out = paths.agent_run(version, agent)
    card, records = rescore(out), read_records(out)
    r = card.recording
    p = r.provenance
    digest = json_sha256([card.agents[0].identity_sha256, sorted((t.task_id, t.trial, t.outcome) for t in records)])
    return StageOutput(digest, {
        "agent": agent, "kind": "recorded", "suite_version": version, "trials": len(records), "tasks": r.tasks,
        "recording": p.file, "recording_sha256": p.sha256, "source": p.source, "license": p.license, "model": p.model,
        "format": p.format, "pass^1 regraded": round(r.regraded[0].pass_hat, 4),
        **({"pass^1 recorded": round(r.recorded[0].pass_hat, 4)} if r.recorded else {}),
        "disagreements": len(r.disagreements), "recorded_run": Markdown("\n".join(recording_section(r))),
        "identity_sha256": card.agents[0].identity_sha256, "traces": out / TRACES, "scorecard": out / SCORECARD_MD})


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
