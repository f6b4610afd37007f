"""The scorecard of one release: every agent of the spec that has traces for it, with the pass^k table and plot."""
from __future__ import annotations

from evalsuite.core.hashing import file_sha256
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.present import Markdown, image_markdown, md_table
from evalsuite.pipeline.stage import StageOutput
from evalsuite.releases.release import Release, ReleaseError
from evalsuite.scoring.render import passk_cell
from evalsuite.scoring.render import write_scorecard
from evalsuite.scoring.scorecard import Scorecard, build_scorecard, load_records
from evalsuite.sourcing.spec import SuiteSpec


def passk_table(card: Scorecard) -> Markdown:
    """Rows k, a column per agent: pass^k [95% task-bootstrap interval]."""
    ks = range(1, max(len(a.curve) for a in card.agents) + 1)
    return md_table(["k", *(a.agent for a in card.agents)],
                    [[f"pass^{k}", *(passk_cell(a.curve, k) for a in card.agents)] for k in ks])


def run(spec: SuiteSpec, paths: Paths, version: str) -> StageOutput:
    rel = Release(paths.release(spec.name, version))
    agents = [a.name for a in spec.agents if (paths.agent_run(version, a.name) / "traces.jsonl").is_file()]
    if not agents:
        raise ReleaseError(f"no trial traces for release {version} of {spec.name}")
    records = [r for a in agents for r in load_records(paths.agent_run(version, a))]
    card = build_scorecard(records, rel.tasks(), rel.manifest.acceptance)
    files = write_scorecard(card, paths.runs / version)
    missing = sorted({a.name for a in spec.agents} - set(agents))
    return StageOutput(file_sha256(files["json"]), {
        "suite_version": version, "agents": ", ".join(agents), "agents_without_traces": ", ".join(missing) or "none",
        "tasks": card.agents[0].tasks, "pass^k": passk_table(card), "pass^k_plot": image_markdown(files["png"], "pass^k"),
        "scorecard": files["md"], "plot": files["png"]})
