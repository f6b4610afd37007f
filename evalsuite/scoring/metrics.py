"""Statistics for agent evaluation: pass^k, pass@k and their uncertainty.

Each task is run n times by an agent and succeeds c times. The quantities of
interest are per task (pass^k: all of k trials succeed; pass@k: at least one of
k does) and are then averaged over the suite.

Why intervals resample tasks, never trials: trials of one task are not
independent draws. Whether an agent succeeds depends mostly on *which* task it
is given, so the 100 trials of one task carry far less information than 100
trials spread over 100 tasks. The suite is a sample from the population of
tasks we care about, and the uncertainty we must report is how much the score
would move with a different sample of tasks. A task-level bootstrap (resample
whole tasks with replacement, recompute the suite mean) measures exactly that.
Resampling trials, or a binomial interval over all trials pooled, treats
n x tasks trials as independent and gives intervals that are far too narrow.

No normal approximation (mean +/- z*se) is used anywhere: suites are small and
scores sit near 0 or 1, where such intervals leave [0, 1] and undercover. The
Wilson score interval and the percentile bootstrap behave well there.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from statistics import NormalDist
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

__all__ = [
    "BootstrapCI",
    "KPoint",
    "pass_hat_k",
    "pass_at_k",
    "wilson_interval",
    "task_bootstrap",
    "suite_pass_curve",
    "slice_table",
]


class BootstrapCI(BaseModel):
    """A suite mean with its task-bootstrap percentile interval.

    resamples and seed are kept so a reported interval can be reproduced.
    """

    model_config = ConfigDict(frozen=True)

    mean: float
    low: float
    high: float
    resamples: int
    seed: int
    method: Literal["task_bootstrap_percentile"] = "task_bootstrap_percentile"


class KPoint(BaseModel):
    """One point of the suite's pass^k / pass@k curve, with task-bootstrap bounds."""

    model_config = ConfigDict(frozen=True)

    k: int
    pass_hat: float
    pass_hat_low: float
    pass_hat_high: float
    pass_at: float
    pass_at_low: float
    pass_at_high: float


def _check_counts(n: int, c: int, k: int) -> None:
    """Reject counts for which the unbiased estimators are undefined."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got k={k}")
    if k > n:
        raise ValueError(f"k={k} exceeds the number of trials n={n}")
    if c < 0:
        raise ValueError(f"successes c must be non-negative, got c={c}")
    if c > n:
        raise ValueError(f"successes c={c} exceed the number of trials n={n}")


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def pass_hat_k(n: int, c: int, k: int) -> Fraction:
    """pass^k (tau-bench): chance that k trials drawn without replacement all succeed.

    C(c, k) / C(n, k) is the unbiased estimate from n trials with c successes;
    it is kept as an exact Fraction so reference values compare exactly.
    """
    _check_counts(n, c, k)
    return Fraction(math.comb(c, k), math.comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    """pass@k: chance that at least one of k trials succeeds, 1 - C(n-c, k) / C(n, k).

    Unbiased estimate (Chen et al. 2021), exact as a Fraction.
    """
    _check_counts(n, c, k)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def wilson_interval(successes: int, total: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Chosen over the normal (Wald) interval because it stays inside [0, 1] and
    keeps its coverage at small totals and rates near 0 or 1. It always contains
    successes / total; its bounds are exactly 0 at no successes and 1 at all.
    """
    if total <= 0:
        raise ValueError(f"total must be positive, got total={total}")
    if not 0 <= successes <= total:
        raise ValueError(f"successes must be in [0, total={total}], got {successes}")
    _check_confidence(confidence)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    # At 0 or all successes the exact bound is 0 or 1; computed, it lands a rounding error inside
    # (5.6e-17, 0.9999999999999999) and the interval would exclude its own point estimate.
    low = 0.0 if successes == 0 else centre - half
    high = 1.0 if successes == total else centre + half
    return low, high


def task_bootstrap(
    per_task_values: Sequence[float],
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapCI:
    """Percentile bootstrap of the mean over TASKS (see the module docstring for why).

    Each resample draws len(values) tasks with replacement; all resamples come
    from one rng.integers call (a resamples x n index matrix), so a fixed seed
    gives identical bounds on any machine with the same numpy.
    """
    values = np.asarray(per_task_values, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("per_task_values must be a non-empty 1-D sequence of per-task values")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    _check_confidence(confidence)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, values.size, size=(resamples, values.size))
    means = values[idx].mean(axis=1)
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(
        mean=float(values.mean()), low=float(low), high=float(high), resamples=resamples, seed=seed
    )


def suite_pass_curve(
    results: Mapping[str, tuple[int, int]],
    max_k: int | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> list[KPoint]:
    """Suite-mean pass^k and pass@k for k = 1..max_k, each with task-bootstrap bounds.

    results maps task_id -> (n, c). max_k defaults to the smallest n, the
    largest k every task can estimate; a task with n < k is an error rather
    than silently dropped, because dropping it would bias the curve.
    """
    if not results:
        raise ValueError("results is empty: no tasks to score")
    top = min(n for n, _ in results.values()) if max_k is None else max_k
    if top < 1:
        raise ValueError(f"max_k must be at least 1, got {top}")
    short = [t for t, (n, _) in results.items() if n < top]
    if short:
        raise ValueError(f"tasks with fewer than k={top} trials: {', '.join(map(str, short))}")
    return [_k_point(results, k, resamples, seed) for k in range(1, top + 1)]


def _k_point(results: Mapping[str, tuple[int, int]], k: int, resamples: int, seed: int) -> KPoint:
    """One curve point; the same seed pairs the pass^k and pass@k resamples."""
    hat = [pass_hat_k(n, c, k) for n, c in results.values()]
    at = [pass_at_k(n, c, k) for n, c in results.values()]
    hat_ci = task_bootstrap([float(v) for v in hat], resamples=resamples, seed=seed)
    at_ci = task_bootstrap([float(v) for v in at], resamples=resamples, seed=seed)
    return KPoint(
        k=k,
        pass_hat=float(sum(hat) / len(hat)),
        pass_hat_low=hat_ci.low,
        pass_hat_high=hat_ci.high,
        pass_at=float(sum(at) / len(at)),
        pass_at_low=at_ci.low,
        pass_at_high=at_ci.high,
    )


SLICE_COLUMNS = [
    "slice", "value", "tasks", "trials", "pass_hat_1", "low", "high",
    "wilson_low", "wilson_high", "too_small_to_rank",
]


def slice_table(
    rows: pd.DataFrame,
    by: str,
    min_tasks: int = 30,
    resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """pass^1 per value of one slice column, with intervals over tasks.

    rows has one row per task (task_id, n, c and slice columns). low/high is
    the task bootstrap of the mean pass^1; wilson_low/high is a Wilson interval
    over tasks of the share of tasks that passed every trial (c == n). Both
    treat the task as the unit: trials of one task are correlated, so pooling
    them (e.g. Wilson over all trials) would make a slice with a handful of
    heavily-repeated tasks look precise when it is not. Slices with fewer than
    min_tasks tasks are flagged too_small_to_rank: their intervals are too wide
    for an ordering of slices to mean anything.
    """
    missing = {"task_id", "n", "c", by} - set(rows.columns)
    if missing:
        raise ValueError(f"rows lacks columns: {sorted(missing)}")
    dupes = rows["task_id"][rows["task_id"].duplicated()].unique()
    if len(dupes):
        raise ValueError(f"rows must have one row per task; repeated: {list(dupes)}")
    out = [
        _slice_row(by, value, group, min_tasks, resamples, seed)
        for value, group in rows.groupby(by, dropna=False, sort=True)
    ]
    return pd.DataFrame(out, columns=SLICE_COLUMNS)


def _slice_row(by: str, value, group: pd.DataFrame, min_tasks: int, resamples: int, seed: int) -> dict:
    pairs = list(zip(group["n"].astype(int), group["c"].astype(int)))
    per_task = [float(pass_hat_k(n, c, 1)) for n, c in pairs]
    ci = task_bootstrap(per_task, resamples=resamples, seed=seed)
    w_low, w_high = wilson_interval(sum(c == n for n, c in pairs), len(pairs))
    return {
        "slice": by, "value": value, "tasks": len(pairs), "trials": sum(n for n, _ in pairs),
        "pass_hat_1": ci.mean, "low": ci.low, "high": ci.high,
        "wilson_low": w_low, "wilson_high": w_high, "too_small_to_rank": len(pairs) < min_tasks,
    }
