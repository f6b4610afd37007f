"""Reward bases on a scorecard: for the tasks that carry an imported benchmark's evaluation criteria, each basis
(DB, ENV_ASSERTION, COMMUNICATE, ACTION, NL_ASSERTION) and the reward they combine into, per agent, so a reader
sees whether an agent failed on the end state, on what it said, or on the judge (evalsuite.grading.reward_bases).

A basis is scored over the tasks whose reward_basis lists it and that ask something of it (an empty list passes
by definition, which says nothing of the agent); the reward over every task. Each row has its trials' pass, fail
and not-graded counts, and pass^k with task-bootstrap intervals over the tasks whose every trial was graded (a task
with a trial not graded would bias it either way, so it is left out and counted). A trial that crashed has no
bases and counts as failed on every one, as it does on the scorecard's pass^k. Trials of tasks that ask something
of a basis without counting it (a retail task's communicate_info) are shown as a diagnostic count only.
"""
from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd
from pydantic import BaseModel

from evalsuite.core.records import REWARD_BASES, EvaluationCriteria, JudgeSettings, TaskRecord
from evalsuite.scoring.metrics import KPoint, suite_pass_curve

REWARD = "reward"  # the row of the combined reward
POLICY = ("Reward bases (tasks with an imported benchmark's criteria): each basis is scored over the tasks whose "
          "reward_basis lists it and that ask something of it, the reward (their product) over every task; pass^k "
          "is over the tasks whose every trial was graded, a trial not graded (no judge endpoint) is counted and "
          "never passed, and a crashed trial fails every basis.")


class BasisRow(BaseModel):
    basis: str  # a reward basis, or "reward"
    tasks: int  # tasks whose reward_basis lists it and that ask something of it (every task, for the reward)
    trials: int
    passed: int
    failed: int
    not_graded: int
    tasks_scored: int  # tasks whose every trial was graded: the curve's tasks
    curve: list[KPoint]  # pass^k over tasks_scored; empty when none
    other_trials: int = 0  # trials of tasks where the basis is graded but not counted
    other_passed: int = 0


class AgentBases(BaseModel):
    agent: str
    rows: list[BasisRow]


class RewardBases(BaseModel):
    tasks: int  # tasks carrying criteria
    judges: list[JudgeSettings]  # the pinned NL_ASSERTION judges of those tasks
    agents: list[AgentBases]


def basis_scores(frame: pd.DataFrame, tasks: list[TaskRecord], resamples: int = 2000,
                 seed: int = 0) -> RewardBases | None:
    """Per agent, from a run's summary frame; None when no task of the set carries criteria."""
    criteria = {t.task_id: t.evaluation_criteria for t in tasks if t.evaluation_criteria is not None}
    if not criteria:
        return None
    judges = {c.judge.model_dump_json(): c.judge for c in criteria.values() if c.judge is not None}
    column = frame["bases"] if "bases" in frame else pd.Series(None, index=frame.index, dtype=object)
    rows = frame.assign(parsed=column.map(lambda v: json.loads(v) if isinstance(v, str) else None))
    rows = rows[rows["task_id"].isin(criteria)]
    asks = {b: {t for t, c in criteria.items() if _has_items(c, b)} for b in REWARD_BASES}
    counted = {b: {t for t in asks[b] if b in criteria[t].reward_basis} for b in REWARD_BASES}
    shown = {b: asks[b] - counted[b] for b in REWARD_BASES}
    agents = []
    for agent, group in rows.groupby("agent", sort=True):
        table = [_row(REWARD, group, set(criteria), lambda p: p["reward"], resamples, seed)]
        table += [_row(b, group, counted[b], _status_of(b, "counted"), resamples, seed, shown[b],
                       _status_of(b, "other")) for b in REWARD_BASES]
        agents.append(AgentBases(agent=agent, rows=[r for r in table if r.tasks or r.other_trials]))
    return RewardBases(tasks=len(criteria), judges=list(judges.values()), agents=agents)


def _has_items(criteria: EvaluationCriteria, basis: str) -> bool:
    """Whether the basis asks anything of this task: an empty list passes by definition, and a row of such passes
    would say nothing of the agent."""
    items = {"DB": True, "ENV_ASSERTION": criteria.env_assertions, "COMMUNICATE": criteria.communicate_info,
             "ACTION": criteria.actions, "NL_ASSERTION": criteria.nl_assertions}
    return bool(items[basis])


def _status_of(basis: str, part: str) -> Callable[[dict], str | None]:
    return lambda parsed: parsed[part].get(basis)


def _row(basis: str, group: pd.DataFrame, counted: set[str], status: Callable[[dict], str | None], resamples: int,
         seed: int, shown: set[str] = frozenset(), other: Callable[[dict], str | None] | None = None) -> BasisRow:
    """One basis's counts and curve; a trial without bases (it crashed) failed it."""
    mine = group[group["task_id"].isin(counted)]
    statuses = mine["parsed"].map(lambda p: "fail" if p is None else status(p))
    per_task = pd.DataFrame({"task_id": mine["task_id"], "s": statuses}).groupby("task_id")["s"]
    graded = {t: (len(s), int((s == "pass").sum())) for t, s in per_task if not (s == "not_graded").any()}
    diagnostic = group[group["task_id"].isin(shown) & group["parsed"].notna()]
    others = diagnostic["parsed"].map(other).dropna() if other is not None else pd.Series(dtype=object)
    return BasisRow(basis=basis, tasks=len(counted), trials=len(mine), passed=int((statuses == "pass").sum()),
                    failed=int((statuses == "fail").sum()), not_graded=int((statuses == "not_graded").sum()),
                    tasks_scored=len(graded), curve=suite_pass_curve(graded, resamples=resamples, seed=seed)
                    if graded else [], other_trials=len(others), other_passed=int((others == "pass").sum()))
