"""The scorecard of one release: every agent of the spec that has traces for it, with the pass^k table and plot;
recorded runs imported into the release (their own task sets, never pooled) listed beside it with theirs."""
from __future__ import annotations

from urllib.parse import quote

from evalsuite.core.hashing import file_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import Markdown, image_markdown, md_table
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import StageOutput
from evalsuite.releases.release import Release, ReleaseError
from evalsuite.scoring.compare import pairwise
from evalsuite.scoring.compare import to_markdown as compare_markdown
from evalsuite.scoring.render import cost_cells, passk_cell, passk_svg
from evalsuite.scoring.runlog import (
    COMPARE_JSON,
    SCORECARD_MD,
    TRACES,
    imported_runs,
    read_records,
    read_scorecard,
    write_scorecard,
)
from evalsuite.scoring.scorecard import Scorecard, build_scorecard
from evalsuite.sourcing.spec import SuiteSpec


def passk_table(card: Scorecard) -> Markdown:
    """A row per agent, a column per k: pass^k [95% task-bootstrap interval] (agents are many and k few, and the
    UI's value column is narrow)."""
    ks = range(1, max(len(a.curve) for a in card.agents) + 1)
    return md_table(["agent", *(f"pass^{k}" for k in ks)], [[a.agent, *(passk_cell(a.curve, k) for k in ks)]
                                                           for a in card.agents])


# The Dagster UI shows Markdown metadata in place only when it is shorter than this; longer needs a click.
INLINE_MARKDOWN = 1000


def inline_plot(card: Scorecard) -> Markdown:
    """pass^k against k, short enough for the UI to show in place (render.passk_svg); passk.png has the intervals."""
    svg = quote(passk_svg(card), safe="<>/='.,:^")  # spaces and the rest escaped: shorter than base64
    return Markdown(f"![pass^k](data:image/svg+xml,{svg})")


def agent_scores(card: Scorecard) -> dict[str, float]:
    """pass^1 and pass^K (K = the most trials per task) per agent, as numbers the UI charts across versions."""
    top = max((len(a.curve) for a in card.agents), default=1)
    out: dict[str, float] = {}
    for a in (a for a in card.agents if a.curve):
        out[f"pass^1 {a.agent}"] = a.curve[0].pass_hat
        if top > 1 and len(a.curve) == top:
            out[f"pass^{top} {a.agent}"] = a.curve[-1].pass_hat
    return out


def cost_table(card: Scorecard) -> Markdown:
    """Tokens, cost per trial and cost per success, a row per agent in the pass^k table's order (pass^k itself is
    in that table: beside the cost columns it made this one wider than the UI's value column)."""
    cells = cost_cells()
    return md_table(["agent", *cells], [[a.agent, *(c(a) for c in cells.values())] for a in card.agents])


def cost_scores(card: Scorecard) -> dict[str, float]:
    """Cost per trial and per success as numbers the Plots tab charts (display only: the exact Decimal amounts
    are in scorecard.json)."""
    out: dict[str, float] = {}
    for a in card.agents:
        if a.cost and a.cost.cost_per_trial is not None:
            out[f"cost per trial {a.agent}"] = float(a.cost.cost_per_trial)
        if a.cost and a.cost.cost_per_success is not None:
            out[f"cost per success {a.agent}"] = float(a.cost.cost_per_success)
    return out


def run(spec: SuiteSpec, paths: Paths, version: str) -> StageOutput:
    rel = Release(paths.release(spec.name, version))
    agents = [a.name for a in spec.agents if (paths.agent_run(version, a.name) / TRACES).is_file()]
    if not agents:
        raise ReleaseError(f"no trial traces for release {version} of {spec.name}")
    records = [r for a in agents for r in read_records(paths.agent_run(version, a))]
    card = build_scorecard(records, rel.tasks(), rel.manifest.acceptance)
    files = write_scorecard(card, paths.runs / version)
    pairs = pairwise(records, agents)  # beside the scorecard: the leaderboard marks ties from it
    write_json(paths.runs / version / COMPARE_JSON, [c.model_dump() for c in pairs])
    missing = sorted({a.name for a in spec.agents} - set(agents))
    return StageOutput(file_sha256(files["json"]), {
        "suite_version": version, "agents": ", ".join(agents), "agents_without_traces": ", ".join(missing) or "none",
        "tasks": card.agents[0].tasks, "pass^k_plot": inline_plot(card), "pass^k": passk_table(card),
        **agent_scores(card), "cost": cost_table(card), **cost_scores(card),
        "pass^k_plot_full": image_markdown(files["png"], "pass^k"),
        "paired_comparison": Markdown(compare_markdown(pairs) if pairs else "one agent: nothing to compare"),
        "scorecard": files["md"], "plot": files["png"], **recorded_runs(paths.runs / version)})


def recorded_runs(folder) -> dict[str, Markdown]:
    """Each imported recording of the release: its model, licence, pass^1 regraded and recorded, disagreements."""
    rows = []
    for run in imported_runs(folder):
        r = read_scorecard(run).recording
        rows.append([run.name, r.provenance.model, r.provenance.license, f"{r.tasks} / {r.trials}",
                     passk_cell(r.regraded, 1), passk_cell(r.recorded, 1) if r.recorded else "—",
                     str(len(r.disagreements)), str(run / SCORECARD_MD)])
    if not rows:
        return {}
    return {"recorded_runs": md_table(["agent", "model", "licence", "tasks / trials", "pass^1 regraded",
                                       "pass^1 recorded", "disagreements", "scorecard"], rows)}
