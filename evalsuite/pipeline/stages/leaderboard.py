"""The leaderboard of a suite: every agent on every scored release, best pass^k first within a release."""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import atomic_write, write_json
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.present import md_table
from evalsuite.pipeline.stage import StageOutput
from evalsuite.scoring.compare import COMPARE_FILE, UNDECIDED
from evalsuite.scoring.render import interval_cell
from evalsuite.sourcing.spec import SuiteSpec


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


def _ties(rows: list[LeaderRow], card_file: Path) -> list[LeaderRow]:
    """Mark each agent whose pass^k the paired comparison (compare.json, if present) cannot tell from the one above."""
    path = card_file.parent / COMPARE_FILE
    if not rows or not path.is_file():
        return rows
    undecided = {frozenset((c["agent_a"], c["agent_b"])) for c in json.loads(path.read_text())
                 if c["pass_k"]["verdict"] == UNDECIDED}
    return [rows[0], *(r.model_copy(update={"tied_with": up.agent})
                       if frozenset((r.agent, up.agent)) in undecided else r for up, r in zip(rows, rows[1:]))]


def _rows(card: dict) -> list[LeaderRow]:
    k = min(len(a["curve"]) for a in card["agents"])
    ranked = sorted(card["agents"], key=lambda a: -a["curve"][k - 1]["pass_hat"])
    return [LeaderRow(suite_version=card["suite_version"], agent=a["agent"], tasks=a["tasks"], trials=a["trials"],
                      pass_hat_1=a["curve"][0]["pass_hat"], pass_hat_1_low=a["curve"][0]["pass_hat_low"],
                      pass_hat_1_high=a["curve"][0]["pass_hat_high"], k=k, pass_hat_k=a["curve"][k - 1]["pass_hat"],
                      infra_errors=a["outcomes"]["infra_error"]) for a in ranked]


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    """Newest release first."""
    cards = sorted(paths.runs.glob("*/scorecard.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    rows = [r for f in cards for r in _ties(_rows(json.loads(f.read_text())), f)]
    body = [r.model_dump() for r in rows]
    table = md_table(["release", "agent", "tasks", "trials", "pass^1 [95%]", "pass^k", "infra errors", "ties"],
                     [[r.suite_version, r.agent, r.tasks, r.trials,
                       interval_cell(r.pass_hat_1, r.pass_hat_1_low, r.pass_hat_1_high),
                       f"pass^{r.k} = {r.pass_hat_k:.3f}", r.infra_errors,
                       f"≈ tied with {r.tied_with}" if r.tied_with else ""] for r in rows])
    write_json(paths.runs / "leaderboard.json", body)
    atomic_write(paths.runs / "leaderboard.md", f"# Leaderboard: {spec.name}\n\n{table}\n")
    return StageOutput(json_sha256(body), {"releases": len(cards), "rows": len(rows), "leaderboard": table,
                                           "file": paths.runs / "leaderboard.md"})
