"""The analyses a protocol may fix, as one standalone script (numpy and scipy.special only, no evalsuite).

This file is both sides of the experiment domain: the grader imports it to compute the reference numbers and to
recognise what a run computed, and its source, with one line calling `main`, is the reference solution's
submitted code, run inside the sealed boundary on `data.csv`. An analysis prints one JSON line,
{"estimate": ..., "ci_low": ..., "ci_high": ...}: the difference treatment minus control.
"""
import csv
import json
import sys

import numpy as np
from scipy.special import stdtrit  # the t quantile; scipy.stats would take seconds to import in every run

# estimand -> how its interval is made (a protocol fixes both)
INTERVALS = {"mean_difference": "welch", "median_difference": "bootstrap", "relative_lift": "bootstrap"}
ARMS = ("treatment", "control")


def point(treated, control, estimand):
    """The estimand on two arrays (treated, control)."""
    if estimand == "mean_difference":
        return float(np.mean(treated) - np.mean(control))
    if estimand == "median_difference":
        return float(np.median(treated) - np.median(control))
    if estimand == "relative_lift":
        return float(np.mean(treated) / np.mean(control) - 1.0)
    raise ValueError(f"unknown estimand {estimand!r}")


def welch(treated, control, level):
    """The Welch t interval of the difference in means."""
    vt, vc = np.var(treated, ddof=1) / len(treated), np.var(control, ddof=1) / len(control)
    se = np.sqrt(vt + vc)
    df = (vt + vc) ** 2 / (vt ** 2 / (len(treated) - 1) + vc ** 2 / (len(control) - 1))
    half = stdtrit(df, 0.5 + level / 2) * se
    diff = point(treated, control, "mean_difference")
    return float(diff - half), float(diff + half)


def bootstrap(treated, control, estimand, level, reps, seed):
    """The percentile bootstrap interval: each arm resampled with replacement `reps` times."""
    rng = np.random.default_rng(seed)
    t = treated[rng.integers(0, len(treated), (reps, len(treated)))]
    c = control[rng.integers(0, len(control), (reps, len(control)))]
    if estimand == "mean_difference":
        draws = t.mean(axis=1) - c.mean(axis=1)
    elif estimand == "median_difference":
        draws = np.median(t, axis=1) - np.median(c, axis=1)
    else:
        draws = t.mean(axis=1) / c.mean(axis=1) - 1.0
    lo, hi = np.quantile(draws, [0.5 - level / 2, 0.5 + level / 2])
    return float(lo), float(hi)


def load(path):
    """data.csv as {column: list of its text values}."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {c: [r[c] for r in rows] for c in (rows[0] if rows else {})}


def arms(data, outcome, segment=None):
    """(treated, control) values of `outcome`, of one segment or all rows (data: {column: values})."""
    keep = [segment is None or s == segment for s in data["segment"]]
    values = [(a, float(v)) for a, v, k in zip(data["arm"], data[outcome], keep) if k]
    return tuple(np.array([v for a, v in values if a == arm]) for arm in ARMS)


def analyze(data, outcome, estimand, level, reps=2000, seed=0, segment=None):
    """The estimate and its interval, as the protocol's test makes them."""
    treated, control = arms(data, outcome, segment)
    if INTERVALS[estimand] == "welch":
        lo, hi = welch(treated, control, level)
    else:
        lo, hi = bootstrap(treated, control, estimand, level, reps, seed)
    return {"estimate": point(treated, control, estimand), "ci_low": lo, "ci_high": hi}


def conclusion(estimate, ci_low, ci_high, min_effect):
    """The decision rule: supported when the interval excludes no effect and the estimate reaches the smallest
    effect worth acting on; not_supported when the interval excludes an effect that large; else inconclusive."""
    if ci_low > 0 and estimate >= min_effect:
        return "supported"
    if ci_high < min_effect:
        return "not_supported"
    return "inconclusive"


def main(outcome, estimand, level, reps=2000, seed=0, path="data.csv"):
    print(json.dumps(analyze(load(path), outcome, estimand, level, reps, seed)))
    sys.stdout.flush()
