"""The leaderboard of a suite: every agent on every scored release, newest release first; within a release best
pass^k first, or cheapest per trial or per success first (`sort_by`). leaderboard.png plots pass^k against cost
per success for the newest release, so the cheapest of equally good agents stands out."""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from evalsuite.core.hashing import json_sha256
from evalsuite.core.home import home_dir
from evalsuite.core.io import atomic_write, write_json, write_with
from evalsuite.core.markdown import image_markdown, md_table
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import StageOutput
from evalsuite.scoring.compare import UNDECIDED
from evalsuite.scoring.cost import money
from evalsuite.scoring.render import interval_cell
from evalsuite.scoring.runlog import COMPARE_JSON, SCORECARD_JSON
from evalsuite.sourcing.spec import SpecError, SuiteSpec, load_spec

SortBy = Literal["pass_k", "cost_per_trial", "cost_per_success"]
SORTS: tuple[str, ...] = SortBy.__args__  # type: ignore[attr-defined]


class LeaderRow(BaseModel):
    suite_version: str
    agent: str
    tasks: int
    trials: int
    pass_hat_1: float
    pass_hat_1_low: float
    pass_hat_1_high: float
    k: int
    pass_hat_k: float
    infra_errors: int
    tied_with: str | None = None  # the agent ranked just above, when the paired comparison cannot separate them
    currency: str | None = None
    cost_per_trial: Decimal | None = None  # None: the agent reports no tokens, or its model has no price
    cost_per_success: Decimal | None = None


def _ties(rows: list[LeaderRow], card_file: Path) -> list[LeaderRow]:
    """Mark each agent whose pass^k the paired comparison (compare.json, if present) cannot tell from the one above."""
    path = card_file.parent / COMPARE_JSON
    if not rows or not path.is_file():
        return rows
    undecided = {frozenset((c["agent_a"], c["agent_b"])) for c in json.loads(path.read_text())
                 if c["pass_k"]["verdict"] == UNDECIDED}
    return [rows[0], *(r.model_copy(update={"tied_with": up.agent})
                       if frozenset((r.agent, up.agent)) in undecided else r for up, r in zip(rows, rows[1:]))]


def _order(rows: list[LeaderRow], sort_by: str) -> list[LeaderRow]:
    """Best pass^k first; by cost: cheapest first, unknown costs last, pass^k breaking ties."""
    if sort_by == "pass_k":
        return sorted(rows, key=lambda r: -r.pass_hat_k)
    return sorted(rows, key=lambda r: (getattr(r, sort_by) is None, getattr(r, sort_by) or 0, -r.pass_hat_k))


def _rows(card: dict) -> list[LeaderRow]:
    """One row per agent of a scorecard, best pass^k first."""
    k = min(len(a["curve"]) for a in card["agents"])
    rows = [LeaderRow(suite_version=card["suite_version"], agent=a["agent"], tasks=a["tasks"], trials=a["trials"],
                      pass_hat_1=a["curve"][0]["pass_hat"], pass_hat_1_low=a["curve"][0]["pass_hat_low"],
                      pass_hat_1_high=a["curve"][0]["pass_hat_high"], k=k, pass_hat_k=a["curve"][k - 1]["pass_hat"],
                      infra_errors=a["outcomes"]["infra_error"], **_cost(a.get("cost"))) for a in card["agents"]]
    return _order(rows, "pass_k")


def _cost(cost: dict | None) -> dict:
    if not cost:
        return {}
    return {"currency": cost["currency"], "cost_per_trial": cost["cost_per_trial"],
            "cost_per_success": cost["cost_per_success"]}


def table(rows: list[LeaderRow]):
    return md_table(["release", "agent", "tasks", "trials", "pass^1 [95%]", "pass^k", "cost per trial",
                     "cost per success", "infra errors", "ties"],
                    [[r.suite_version, r.agent, r.tasks, r.trials,
                      interval_cell(r.pass_hat_1, r.pass_hat_1_low, r.pass_hat_1_high),
                      f"pass^{r.k} = {r.pass_hat_k:.3f}", money(r.cost_per_trial, r.currency or ""),
                      money(r.cost_per_success, r.currency or ""), r.infra_errors,
                      f"≈ tied with {r.tied_with}" if r.tied_with else ""] for r in rows])


def plot(rows: list[LeaderRow], path: Path) -> None:
    """pass^k against cost per success, one labelled point per agent priced (the newest release's rows)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    priced = [r for r in rows if r.cost_per_success is not None]
    for r in priced:
        ax.scatter([float(r.cost_per_success)], [r.pass_hat_k])  # float: drawing only, the table is exact
        ax.annotate(r.agent, (float(r.cost_per_success), r.pass_hat_k), textcoords="offset points", xytext=(4, 4))
    currency = priced[0].currency if priced else ""
    ax.set_xlabel(f"cost per success ({currency})" if priced else "cost per success (no agent priced)")
    ax.set_ylabel(f"pass^{rows[0].k}" if rows else "pass^k")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"{rows[0].suite_version if rows else ''}: pass^k against cost per success", fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")


def run(spec: SuiteSpec, paths: Paths, sort_by: SortBy = "pass_k") -> StageOutput:
    """Newest release first; within a release ordered by sort_by."""
    if sort_by not in SORTS:
        raise ValueError(f"sort_by: expected one of {', '.join(SORTS)}, got {sort_by!r}")
    cards = sorted(paths.runs.glob(f"*/{SCORECARD_JSON}"), key=lambda p: p.stat().st_mtime, reverse=True)
    by_card = [(_ties(_rows(json.loads(f.read_text())), f), f) for f in cards]  # ties: pass^k neighbours
    rows = [r for ranked, _ in by_card for r in _order(ranked, sort_by)]
    body = [r.model_dump(mode="json") for r in rows]
    shown = table(rows)
    write_json(paths.runs / "leaderboard.json", body)
    atomic_write(paths.runs / "leaderboard.md", f"# Leaderboard: {spec.name} (by {sort_by})\n\n{shown}\n")
    png = write_with(paths.runs / "leaderboard.png", lambda tmp: plot(by_card[0][0] if by_card else [], tmp))
    cheapest = [r for ranked, _ in by_card for r in _order(ranked, "cost_per_success")]
    return StageOutput(json_sha256(body), {"releases": len(cards), "rows": len(rows), "sorted_by": sort_by,
                                           "leaderboard": shown, "by_cost_per_success": table(cheapest),
                                           "pass^k_vs_cost": image_markdown(png, "pass^k against cost"),
                                           "file": paths.runs / "leaderboard.md", "plot": png})


def for_spec(spec_path: str | Path, home: Path | None = None, sort_by: SortBy = "pass_k") -> StageOutput:
    """`evalsuite leaderboard`: the leaderboard of a suite spec's scored releases in the home; a suite with none
    raises SpecError naming the runs folder (checked before Paths, which creates the home)."""
    suite = load_spec(spec_path)
    runs = home_dir(home) / "runs" / suite.name
    if not any(runs.glob(f"*/{SCORECARD_JSON}")):
        raise SpecError(f"{runs}: no scored release of suite {suite.name} (the scorecard asset writes one)")
    return run(suite, Paths(suite, runs.parent.parent), sort_by)
