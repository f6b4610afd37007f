"""Paired comparison of two agents on the same release: per-task differences, a paired task bootstrap, a verdict.

Why paired: both agents ran the same tasks, and most of the spread in a score
comes from which tasks are hard. Resampling task ids once and applying each
resample to both agents cancels that shared spread, so a real difference shows
up with far fewer tasks than two separate intervals would need. Resampling the
same ids for both is the same as bootstrapping the per-task differences A - B,
which is what metrics.task_bootstrap is given here.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from pathlib import Path
from statistics import NormalDist
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from evalsuite.core.markdown import md_table
from evalsuite.scoring.metrics import pass_hat_k, task_bootstrap
from evalsuite.scoring.render import interval_cell
from evalsuite.scoring.runlog import read_records
from evalsuite.trials.tracelog import TrialRecord

RELEASE_IDENTITY = ("suite", "suite_version", "task_set_sha256")
UNDECIDED = "not distinguishable at this sample size"
ComparisonVerdict = Literal["A better", "B better", "not distinguishable at this sample size"]
NEEDED_METHOD = ("n ≈ (1.96 · sd / |diff|)², sd the standard deviation of the per-task differences: a normal "
                 "approximation of the tasks a 95% interval needs to exclude 0 if this difference and spread held; "
                 "∞ when the difference is 0")


class CompareError(ValueError):
    """Two sets of trials that cannot be compared (different releases, no shared tasks, unknown agent)."""


class PairedDiff(BaseModel):
    """Mean pass^k of A and B on the shared tasks, their difference A - B and its paired interval."""

    model_config = ConfigDict(frozen=True)

    k: int
    a: float
    b: float
    diff: float
    low: float
    high: float
    verdict: ComparisonVerdict
    tasks_needed: int | None  # None: the observed difference is 0, no sample size would separate the agents


class MeasureDiff(BaseModel):
    """One separate measure (evalsuite.grading.measures), per-task means of A and B on the tasks both measured, their
    difference A - B and its paired task-bootstrap interval. `verdict` says which is higher, not which is better:
    fewer violations and less latency are the better side of theirs."""

    model_config = ConfigDict(frozen=True)

    measure: str
    tasks: int
    a: float
    b: float
    diff: float
    low: float
    high: float
    verdict: Literal["A higher", "B higher", "not distinguishable at this sample size"]


# per trial, as a number: each measure a comparison pairs per task (evalsuite.grading.measures says what they are);
# "handoff right": handed off exactly where the task admits a handoff
MEASURES: dict[str, Callable[[TrialRecord], float]] = {
    "outcome": lambda r: float(r.measures.outcome),
    "grounded": lambda r: float(r.measures.grounded),
    "authority violations": lambda r: float(r.measures.authority_violations),
    "handoff right": lambda r: float(r.measures.handed_off == r.measures.handoff_admissible),
    "latency (s)": lambda r: r.seconds,
    "tool calls": lambda r: float(r.measures.tool_calls),
    "model calls": lambda r: float(len(r.usage.model_calls)) if r.usage else 0.0,
    "tokens": lambda r: float(r.usage.tokens_in + r.usage.tokens_out) if r.usage else 0.0,
}


class Comparison(BaseModel):
    """A against B on the tasks both attempted, at pass^1 and pass^k; resamples and seed reproduce the intervals."""

    suite: str
    suite_version: str
    agent_a: str
    agent_b: str
    tasks: int
    resamples: int
    seed: int
    pass_1: PairedDiff
    pass_k: PairedDiff
    measures: list[MeasureDiff] = []  # empty when either side's trials were recorded without measures
    needed_method: str = NEEDED_METHOD


def counts(records: Sequence[TrialRecord], agent: str) -> dict[str, tuple[int, int]]:
    """task_id -> (trials, successes) of one agent."""
    out: dict[str, tuple[int, int]] = {}
    for r in (r for r in records if r.agent == agent):
        n, c = out.get(r.task_id, (0, 0))
        out[r.task_id] = (n + 1, c + int(r.passed))
    if not out:
        raise CompareError(f"no trials of agent {agent!r}")
    return out


def release_of(records: Sequence[TrialRecord]) -> tuple[str, str, str]:
    """The one (suite, suite_version, task_set_sha256) of a set of records; several is an error."""
    found = {tuple(getattr(r, f) for f in RELEASE_IDENTITY) for r in records}
    if len(found) != 1:
        raise CompareError(f"records span {len(found)} releases (suite, version, task set): {sorted(found)[:2]}")
    return found.pop()


def compare_records(records_a: Sequence[TrialRecord], agent_a: str, records_b: Sequence[TrialRecord], agent_b: str,
                    k: int | None = None, resamples: int = 2000, seed: int = 0, variants: bool = False) -> Comparison:
    """Compare agent_a in records_a with agent_b in records_b; both must be trials of one release, unless
    `variants`: two releases of one suite's variants (a dossier customization applied to one), their tasks paired
    by id, and the comparison names both."""
    rel_a, rel_b = release_of(records_a), release_of(records_b)
    if rel_a != rel_b and not variants:
        raise CompareError(f"different releases: {agent_a} ran {rel_a[0]} {rel_a[1]} (task set {rel_a[2][:12]}), "
                           f"{agent_b} ran {rel_b[0]} {rel_b[1]} (task set {rel_b[2][:12]})")
    out = compare_counts(counts(records_a, agent_a), counts(records_b, agent_b), k, resamples, seed)
    suite, version = ((rel_a[0], rel_a[1]) if rel_a == rel_b else
                      (f"{rel_a[0]} (A) vs {rel_b[0]} (B)", f"{rel_a[1]} vs {rel_b[1]}"))
    return Comparison(suite=suite, suite_version=version, agent_a=agent_a, agent_b=agent_b, **out,
                      measures=measure_diffs(records_a, agent_a, records_b, agent_b, resamples, seed))


def per_task(records: Sequence[TrialRecord], agent: str, value: Callable[[TrialRecord], float]) -> dict[str, float]:
    """task_id -> the mean of one measure over the agent's measured trials of the task."""
    sums: dict[str, list[float]] = {}
    for r in records:
        if r.agent == agent and r.measures is not None:
            sums.setdefault(r.task_id, []).append(value(r))
    return {t: sum(v) / len(v) for t, v in sums.items()}


def measure_diffs(records_a: Sequence[TrialRecord], agent_a: str, records_b: Sequence[TrialRecord], agent_b: str,
                  resamples: int = 2000, seed: int = 0) -> list[MeasureDiff]:
    """Every measure, A against B, paired on the tasks both measured (none when they share no measured task)."""
    out = []
    for name, value in MEASURES.items():
        a, b = per_task(records_a, agent_a, value), per_task(records_b, agent_b, value)
        shared = sorted(set(a) & set(b))
        if not shared:
            return []
        va, vb = np.array([a[t] for t in shared]), np.array([b[t] for t in shared])
        ci = task_bootstrap(va - vb, resamples=resamples, seed=seed)
        verdict = "A higher" if ci.low > 0 else "B higher" if ci.high < 0 else UNDECIDED
        out.append(MeasureDiff(measure=name, tasks=len(shared), a=float(va.mean()), b=float(vb.mean()),
                               diff=ci.mean, low=ci.low, high=ci.high, verdict=verdict))
    return out


def compare_counts(a: Mapping[str, tuple[int, int]], b: Mapping[str, tuple[int, int]], k: int | None = None,
                   resamples: int = 2000, seed: int = 0) -> dict:
    """The statistics of a Comparison from task_id -> (n, c) of A and B, on the tasks both attempted.

    k defaults to the fewest trials of any shared task, the largest k every task can estimate.
    """
    shared = sorted(set(a) & set(b))
    if not shared:
        raise CompareError("the two agents attempted no task in common")
    k = k or min(min(a[t][0], b[t][0]) for t in shared)
    return {"tasks": len(shared), "resamples": resamples, "seed": seed,
            "pass_1": paired_diff(a, b, shared, 1, resamples, seed),
            "pass_k": paired_diff(a, b, shared, k, resamples, seed)}


def paired_diff(a: Mapping[str, tuple[int, int]], b: Mapping[str, tuple[int, int]], tasks: Sequence[str], k: int,
                resamples: int, seed: int) -> PairedDiff:
    """Per-task unbiased pass^k of each agent, their differences, and the task bootstrap of the mean difference."""
    va = np.array([float(pass_hat_k(*a[t], k)) for t in tasks])
    vb = np.array([float(pass_hat_k(*b[t], k)) for t in tasks])
    ci = task_bootstrap(va - vb, resamples=resamples, seed=seed)
    verdict = "A better" if ci.low > 0 else "B better" if ci.high < 0 else UNDECIDED
    return PairedDiff(k=k, a=float(va.mean()), b=float(vb.mean()), diff=ci.mean, low=ci.low, high=ci.high,
                      verdict=verdict, tasks_needed=tasks_needed(va - vb))


def tasks_needed(diffs: np.ndarray) -> int | None:
    """Tasks for a 95% interval to exclude 0 at this mean and spread of differences (see NEEDED_METHOD)."""
    mean = float(diffs.mean())
    if abs(mean) < 1e-12:
        return None
    sd = float(diffs.std(ddof=1)) if diffs.size > 1 else 0.0
    z = NormalDist().inv_cdf(0.975)
    return max(1, math.ceil((z * sd / abs(mean)) ** 2))


def pairwise(records: Sequence[TrialRecord], agents: Sequence[str], resamples: int = 2000,
             seed: int = 0) -> list[Comparison]:
    """Every pair of agents in one run's records, in the order given."""
    return [compare_records(records, x, records, y, resamples=resamples, seed=seed)
            for x, y in combinations(agents, 2)]


def verdict_text(c: Comparison, d: PairedDiff) -> str:
    """The verdict with agent names, and the tasks that would be needed when undecided."""
    if d.verdict == "A better":
        return f"{c.agent_a} better"
    if d.verdict == "B better":
        return f"{c.agent_b} better"
    needed = "∞ (difference 0)" if d.tasks_needed is None else f"~{d.tasks_needed}"
    return f"{UNDECIDED} (tasks needed: {needed})"


def _metric_rows(c: Comparison) -> list[list[str]]:
    """pass^1, and pass^k when k > 1: A, B, A - B with its interval, the verdict."""
    return [[f"pass^{d.k}", f"{d.a:.3f}", f"{d.b:.3f}", interval_cell(d.diff, d.low, d.high), verdict_text(c, d)]
            for d in _diffs(c)]


def _diffs(c: Comparison) -> tuple[PairedDiff, ...]:
    """pass^1, and pass^K when K > 1."""
    return (c.pass_1, c.pass_k) if c.pass_k.k != 1 else (c.pass_1,)


def to_markdown(comparisons: Sequence[Comparison]) -> str:
    """Every pair in one table, a row per pair and k (pass^1, and pass^K when K > 1), four short columns: the
    Dagster UI's value column is narrow. The shared tasks, each side's pass^k and the tasks an undecided verdict
    needs are in compare.json and on the evidence site's scorecard page."""
    return md_table(["A − B", "k", "pass^k A − B [95% paired]", "verdict"],
                    [[f"{c.agent_a} − {c.agent_b}", str(d.k), interval_cell(d.diff, d.low, d.high),
                      "undecided" if d.verdict == UNDECIDED else d.verdict]
                     for c in comparisons for d in _diffs(c)])


def console_table(c: Comparison):
    """One comparison as a rich table for the terminal, the agents named in the title."""
    from rich.table import Table

    table = Table("metric", f"A {c.agent_a}", f"B {c.agent_b}", "A − B [95% paired]", "verdict",
                  title=f"A = {c.agent_a} vs B = {c.agent_b} on {c.tasks} shared tasks of {c.suite} {c.suite_version}")
    for row in _metric_rows(c):
        table.add_row(*row)
    if not c.measures:
        return table
    from rich.console import Group

    measures = Table("measure (per-task mean)", "A", "B", "A − B [95% paired]", "higher",
                     title=f"Measures kept apart, on {c.measures[0].tasks} tasks both measured")
    for m in c.measures:
        measures.add_row(m.measure, f"{m.a:.3f}", f"{m.b:.3f}", interval_cell(m.diff, m.low, m.high),
                         {"A higher": "A", "B higher": "B"}.get(m.verdict, "undecided"))
    return Group(table, measures)


def pick_agents(records_a: Sequence[TrialRecord], records_b: Sequence[TrialRecord] | None,
                agents: Sequence[str]) -> tuple[str, str]:
    """The two agents to compare: as named (A from the first run, B from the second), else the only agent of
    each of two runs, else the only two agents of one run."""
    if agents:
        if len(agents) != 2:
            raise CompareError(f"name two agents (--agent A --agent B), got {len(agents)}")
        return agents[0], agents[1]
    names_a = sorted({r.agent for r in records_a})
    if records_b is None:
        if len(names_a) != 2:
            raise CompareError(f"the run has {len(names_a)} agents ({', '.join(names_a)}): name two with --agent")
        return names_a[0], names_a[1]
    names_b = sorted({r.agent for r in records_b})
    if len(names_a) != 1 or len(names_b) != 1:
        raise CompareError(f"runs have agents [{', '.join(names_a)}] and [{', '.join(names_b)}]: "
                           "name one of each with --agent A --agent B")
    return names_a[0], names_b[0]


def compare_runs(run_a: Path, run_b: Path | None = None, agents: Sequence[str] = (), k: int | None = None,
                 resamples: int = 2000, seed: int = 0, variants: bool = False) -> Comparison:
    """`evalsuite compare`: two agents of two run folders (or both of one) on the tasks both ran. Agents that
    cannot be picked, or a k beyond the trials of a task, raise CompareError."""
    records_a = read_records(run_a)
    records_b = read_records(run_b) if run_b else None
    try:
        a, b = pick_agents(records_a, records_b, agents)
        return compare_records(records_a, a, records_b or records_a, b, k=k, resamples=resamples, seed=seed,
                               variants=variants)
    except CompareError:
        raise
    except ValueError as exc:  # a k beyond the trials of a task
        raise CompareError(str(exc)) from exc
