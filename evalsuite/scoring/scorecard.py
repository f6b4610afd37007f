"""Scorecards: pass^k / pass@k per agent with task-bootstrap intervals, slices, counts, identity; people beside them.

Built only from stored trial records and the task records, so `evalsuite
score DIR` recomputes the same scorecard.json without running anything. The
JSON holds no timestamps or paths for the same reason. People's attempts
(agent configs of kind human, from `evalsuite play`) are one row of their own:
pass@1 over attempts, never pooled into an agent's pass^k.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from evalsuite.core.identity import SuiteVersion
from evalsuite.core.prices import PricedTable, load_prices
from evalsuite.core.records import TaskRecord
from evalsuite.domains.registry import lookup
from evalsuite.scoring.cost import AgentCost, agent_cost
from evalsuite.scoring.measures import AgentMeasures, agent_measures
from evalsuite.scoring.metrics import KPoint, slice_table, suite_pass_curve, wilson_interval
from evalsuite.scoring.recorded import RecordedScore
from evalsuite.scoring.reward_bases import POLICY as BASES_POLICY
from evalsuite.scoring.reward_bases import RewardBases, basis_scores
from evalsuite.scoring.security import SecurityScore, security_scores
from evalsuite.trials.spend import CapReached
from evalsuite.trials.tracelog import TrialRecord, summary_frame

MIN_TASKS_TO_RANK = 30
TRIGGER_TYPES = ("queue_item", "conversation")
SLICES = ("split", "trigger_type", "category", "required_actions", "policy_version", "persona")
RUN_IDENTITY = ["suite", "suite_version", "task_set_sha256", "seed_sha256", "environment_image",
                "tool_schemas_sha256", "simulator", "run_seed"]
OUTCOMES = ("pass", "fail", "budget_exhausted", "infra_error")
POLICY = {
    "infra_error": "A trial whose agent or worker crashed is an infra_error: kept in the denominator and counted as "
                   "a failed trial, never dropped or retried. Counts are shown per agent.",
    "budget_exhausted": "A trial that used its step budget is counted as a failed trial.",
    "intervals": "Intervals resample tasks, not trials (percentile task bootstrap, 95%); trials of one task are "
                 "correlated. Slice intervals over fewer than min_tasks_to_rank tasks are too wide to rank slices.",
    "trigger_types": "Queue-triggered and conversational tasks are always reported separately (by_trigger).",
}
HUMAN_POLICY = ("People attempt a task once: their row is pass@1 over attempts with a 95% Wilson interval, "
                "never pooled into an agent's pass^k; agents_on_same_tasks gives each agent's pass^1 on the "
                "tasks people attempted, weighted as their attempts are.")


class SliceRow(BaseModel):
    slice: str
    value: str | int | None
    tasks: int
    trials: int
    pass_hat_1: float
    low: float
    high: float
    wilson_low: float
    wilson_high: float
    too_small_to_rank: bool


class TriggerScore(BaseModel):
    trigger_type: str
    tasks: int
    trials: int
    curve: list[KPoint]  # empty when the suite has no task of this type


class AgentScore(BaseModel):
    agent: str
    agent_config: dict[str, Any]
    identity_sha256: str
    tasks: int
    trials: int
    trials_per_task_min: int
    trials_per_task_max: int
    outcomes: dict[str, int]
    tasks_with_infra_error: int
    tasks_with_budget_exhausted: int
    curve: list[KPoint]
    by_trigger: list[TriggerScore]
    slices: list[SliceRow]
    cost: AgentCost | None = None  # tokens, priced cost per trial and per success, latency (evalsuite.scoring.cost)
    measures: AgentMeasures | None = None  # outcome, grounding, authority, handoff, latency, resources, kept apart


class HumanScore(BaseModel):
    """People's attempts (`evalsuite play`), each one trial of kind human: a baseline beside the agents."""

    people: int
    attempts: int
    tasks: int
    outcomes: dict[str, int]
    pass_at_1: float
    wilson_low: float
    wilson_high: float
    median_seconds: float
    agents_on_same_tasks: dict[str, float]


class Scorecard(SuiteVersion):
    simulator: dict[str, Any] | None
    run_seed: int
    bootstrap: dict[str, Any]
    min_tasks_to_rank: int
    policy: dict[str, str]
    acceptance: dict[str, Any] | None
    agents: list[AgentScore]
    humans: HumanScore | None = None
    prices: dict[str, Any] | None = None  # the price table the costs come from: path, sha256, currency, as_of
    modes: list[str] = ["default"]  # the trial modes of the tasks scored (TrialProtocol.mode): shown on every card
    security: list[SecurityScore] = []  # under attack: utility with and without, attack success (scoring.security)
    # the run cap stopped the run (evalsuite.trials.spend): scored over the tasks whose every planned trial ran
    capped: CapReached | None = None
    response_cache: bool = False  # model responses may have come from the response cache: not a fresh measurement
    tasks_planned: int | None = None  # capped: the tasks of the plan, of which `tasks` per agent were scored
    # an imported benchmark's reward bases, per agent (scoring.bases); left out of the JSON of a suite without
    bases: RewardBases | None = Field(None, exclude_if=lambda v: v is None)
    # an imported recording (`evalsuite import-run`): its rewards beside the regrade; left out of other scorecards
    recording: RecordedScore | None = Field(None, exclude_if=lambda v: v is None)


def build_scorecard(records: Sequence[TrialRecord] | pd.DataFrame, tasks: list[TaskRecord],
                    acceptance: dict | None, *, resamples: int = 2000, seed: int = 0,
                    min_tasks: int = MIN_TASKS_TO_RANK, prices: PricedTable | None = None) -> Scorecard:
    """Score every agent in records over exactly the given tasks (each must have at least one trial);
    people's attempts, on any of the tasks, become the humans row."""
    frame = records if isinstance(records, pd.DataFrame) else summary_frame(list(records))
    if frame.empty:
        raise ValueError("no trial records to score")
    run = _one_identity(frame)
    attrs = task_attributes(tasks)
    unknown = sorted(set(frame["task_id"]) - set(attrs["task_id"]))
    if unknown:
        raise ValueError(f"records for {len(unknown)} task(s) not in the task set, first: {unknown[0]}")
    human = frame["agent_config"].map(lambda c: json.loads(c)["kind"] == "human")
    agents = [_agent_score(agent, group, attrs, resamples, seed, min_tasks)
              for agent, group in frame[~human].groupby("agent", sort=True)]
    humans = _human_score(frame[human], frame[~human]) if human.any() else None
    bases = basis_scores(frame[~human], tasks, resamples, seed)
    prices = prices or load_prices()
    for a, (_, group) in zip(agents, frame[~human].groupby("agent", sort=True)):
        a.cost = agent_cost(group, prices)
        a.measures = agent_measures(group)
    return Scorecard(**run, bootstrap={"method": "task_bootstrap_percentile", "resamples": resamples, "seed": seed,
                                       "confidence": 0.95},
                     min_tasks_to_rank=min_tasks, policy={**POLICY, **({"humans": HUMAN_POLICY} if humans else {}),
                                                          **({"reward_bases": BASES_POLICY} if bases else {})},
                     acceptance=acceptance, agents=agents, humans=humans, bases=bases,
                     modes=sorted({t.trial_protocol.mode or "default" for t in tasks}),
                     security=security_scores(frame[~human], tasks, resamples, seed),
                     response_cache=bool(frame.get("response_cache", pd.Series(dtype=bool)).fillna(False).any()),
                     prices={"file": Path(prices.path).name, "sha256": prices.sha256,
                             "currency": prices.table.currency, "as_of": str(prices.table.as_of)})


def _human_score(people: pd.DataFrame, agents: pd.DataFrame) -> HumanScore:
    """pass@1 over attempts with a Wilson interval; each agent scored on the same attempts' tasks."""
    passed = int(people["passed"].sum())
    low, high = wilson_interval(passed, len(people))
    counts = people["outcome"].value_counts()
    per_task = agents.groupby(["agent", "task_id"])["passed"].mean()
    beside = {}
    for agent in sorted(agents["agent"].unique()):
        rates = [per_task.get((agent, t)) for t in people["task_id"]]
        if all(r is not None for r in rates):  # an agent that skipped one of these tasks has no comparable score
            beside[agent] = float(sum(rates) / len(rates))
    return HumanScore(people=people["agent"].nunique(), attempts=len(people), tasks=people["task_id"].nunique(),
                      outcomes={o: int(counts.get(o, 0)) for o in OUTCOMES}, pass_at_1=passed / len(people),
                      wilson_low=low, wilson_high=high, median_seconds=float(people["seconds"].median()),
                      agents_on_same_tasks=beside)


def sample_plan(tasks: list[TaskRecord], n: int, seed: int = 0) -> list[TaskRecord]:
    """n of the tasks for people to attempt, spread over the scorecard's slices (SLICES).

    Greedy and deterministic: each pick is the task that brings in the most slice values no pick has yet
    (a slice value without a single human attempt says nothing), then the one whose values are furthest
    below their share of the tasks; ties go by a hash of the seed and task id, so a plan is reproducible.
    """
    if n < 1:
        raise ValueError(f"a sample needs at least one task, got {n}")
    rows = map(_plain, task_attributes(tasks).to_dict("records"))
    values = {r["task_id"]: [(by, r[by]) for by in SLICES] for r in rows}
    total = Counter(v for vs in values.values() for v in vs)
    left = sorted(tasks, key=lambda t: hashlib.sha256(f"{seed}:{t.task_id}".encode()).hexdigest())
    picked: Counter = Counter()
    plan: list[TaskRecord] = []
    while left and len(plan) < n:
        k = len(plan) + 1

        def gain(t: TaskRecord) -> tuple[int, float]:
            vs = values[t.task_id]
            return sum(picked[v] == 0 for v in vs), sum(total[v] * k / len(tasks) - picked[v] for v in vs)

        best = max(left, key=gain)  # max keeps the first of equals: the hash order breaks ties
        left.remove(best)
        picked.update(values[best.task_id])
        plan.append(best)
    return plan


def task_attributes(tasks: list[TaskRecord]) -> pd.DataFrame:
    """One row per task with the columns scorecards slice by."""
    rows = [{"task_id": t.task_id, "split": t.split, "trigger_type": t.trigger.type, "category": t.category,
             "required_actions": required_actions(t), "policy_version": t.policy.version,
             "persona": (t.provenance.stratum or {}).get("persona")} for t in tasks]
    frame = pd.DataFrame(rows, columns=["task_id", *SLICES])
    frame["required_actions"] = frame["required_actions"].astype("Int64")
    return frame


def required_actions(task: TaskRecord) -> int:
    """Writes in the reference solution, a step the user carries out on their own device included (dual
    control)."""
    package = lookup(task.domain)
    tools, user = package.domain.tools, package.user_domain
    kinds = lambda c: (user.tools if c.actor == "user" and user else tools).get(c.tool)  # noqa: E731
    return sum(1 for c in task.reference_solution if kinds(c) is not None and kinds(c).kind == "write")


def _one_identity(frame: pd.DataFrame) -> dict[str, Any]:
    """Trials of different suites, worlds or seeds cannot share one score."""
    out = {}
    for col in RUN_IDENTITY:
        values = frame[col].drop_duplicates().tolist()
        if len(values) != 1:
            raise ValueError(f"records mix several values of {col}: {values[:3]}")
        out[col] = values[0]
    out["simulator"] = json.loads(out["simulator"]) if out["simulator"] else None
    out["run_seed"] = int(out["run_seed"])
    return out


def _agent_score(agent: str, group: pd.DataFrame, attrs: pd.DataFrame, resamples: int, seed: int,
                 min_tasks: int) -> AgentScore:
    config, sha = _single(group, "agent_config", agent), _single(group, "identity_sha256", agent)
    dupes = group[group.duplicated(["task_id", "trial"])]
    if len(dupes):
        raise ValueError(f"agent {agent}: trial {tuple(dupes.iloc[0][['task_id', 'trial']])} appears twice")
    per_task = group.groupby("task_id").agg(n=("passed", "size"), c=("passed", "sum"),
                                            infra=("outcome", lambda s: (s == "infra_error").any()),
                                            budget=("outcome", lambda s: (s == "budget_exhausted").any()))
    rows = attrs.merge(per_task, left_on="task_id", right_index=True, how="left")
    missing = rows.loc[rows["n"].isna(), "task_id"].tolist()
    if missing:  # an unscored task would bias the mean; finish the run instead
        raise ValueError(f"agent {agent}: no trials for {len(missing)} task(s), first: {missing[0]}")
    rows = rows.astype({"n": int, "c": int})
    counts = group["outcome"].value_counts()
    return AgentScore(
        agent=agent, agent_config=json.loads(config), identity_sha256=sha, tasks=len(rows), trials=len(group),
        trials_per_task_min=int(rows["n"].min()), trials_per_task_max=int(rows["n"].max()),
        outcomes={o: int(counts.get(o, 0)) for o in OUTCOMES},
        tasks_with_infra_error=int(rows["infra"].sum()), tasks_with_budget_exhausted=int(rows["budget"].sum()),
        curve=_curve(rows, resamples, seed),
        by_trigger=[_trigger(rows, t, resamples, seed) for t in TRIGGER_TYPES],
        # a slice no task has a value of (persona: composed tasks' sampling stratum) is left out
        slices=[SliceRow(**_plain(r)) for by in SLICES if rows[by].notna().any()
                for r in slice_table(rows, by, min_tasks, resamples, seed).to_dict("records")],
    )


def _single(group: pd.DataFrame, col: str, agent: str) -> str:
    values = group[col].unique()
    if len(values) != 1:
        raise ValueError(f"agent {agent}: records mix several values of {col}")
    return str(values[0])


def _curve(rows: pd.DataFrame, resamples: int, seed: int) -> list[KPoint]:
    results = {t: (n, c) for t, n, c in zip(rows["task_id"], rows["n"], rows["c"])}
    return suite_pass_curve(results, resamples=resamples, seed=seed) if results else []


def _trigger(rows: pd.DataFrame, trigger: str, resamples: int, seed: int) -> TriggerScore:
    part = rows[rows["trigger_type"] == trigger]
    return TriggerScore(trigger_type=trigger, tasks=len(part), trials=int(part["n"].sum()),
                        curve=_curve(part, resamples, seed))


def _plain(row: dict) -> dict:
    """numpy/pandas scalars to Python ones, missing values to None, so the JSON is plain."""
    out = {}
    for k, v in row.items():
        if v is pd.NA or (isinstance(v, float) and v != v):
            v = None
        out[k] = v.item() if hasattr(v, "item") else v
    return out
