"""Properties of evalsuite.scoring.metrics that must hold for every input (hypothesis).

Small, derandomized example counts so the file stays well under 30 s and gives the same verdict on
every run (mutation testing needs that); no example database is written into the checkout.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalsuite.scoring.metrics import pass_at_k, pass_hat_k, suite_pass_curve, task_bootstrap, wilson_interval

FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None)


@st.composite
def counts(draw, max_n: int = 30):
    n = draw(st.integers(1, max_n))
    return n, draw(st.integers(0, n))


confidences = st.floats(0.01, 0.999)
per_task = st.lists(st.sampled_from([0.0, 0.125, 0.25, 1 / 3, 0.5, 0.75, 0.875, 1.0]), min_size=1, max_size=40)


# --- pass^k / pass@k ---------------------------------------------------------

@FAST
@given(counts())
def test_pass_hat_non_increasing_and_pass_at_non_decreasing_in_k(nc):
    n, c = nc
    hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(a >= b for a, b in zip(hats, hats[1:]))
    assert all(a <= b for a, b in zip(ats, ats[1:]))
    assert all(0 <= h <= a <= 1 for h, a in zip(hats, ats))


@FAST
@given(counts())
def test_pass_hat_1_equals_pass_at_1_equals_success_rate(nc):
    n, c = nc
    assert pass_hat_k(n, c, 1) == pass_at_k(n, c, 1) == Fraction(c, n)


@FAST
@given(counts(max_n=9), st.data())
def test_pass_k_equal_the_share_of_k_trial_draws(nc, data):
    """Oracle by enumeration: over every set of k of the n trials, the share where all k pass (pass^k)
    and where at least one passes (pass@k)."""
    n, c = nc
    k = data.draw(st.integers(1, n))
    trials = [True] * c + [False] * (n - c)
    draws = list(combinations(trials, k))
    assert pass_hat_k(n, c, k) == Fraction(sum(all(d) for d in draws), len(draws))
    assert pass_at_k(n, c, k) == Fraction(sum(any(d) for d in draws), len(draws))


# --- Wilson ------------------------------------------------------------------

@FAST
@given(counts(max_n=500), confidences)
def test_wilson_contains_the_point_estimate_inside_unit_interval(nc, confidence):
    n, c = nc
    low, high = wilson_interval(c, n, confidence)
    assert 0.0 <= low <= c / n <= high <= 1.0


@FAST
@given(counts(max_n=500), confidences, confidences)
def test_wilson_widens_as_the_level_rises(nc, a, b):
    n, c = nc
    lo_level, hi_level = sorted((a, b))
    narrow, wide = wilson_interval(c, n, lo_level), wilson_interval(c, n, hi_level)
    assert wide[0] <= narrow[0] + 1e-12 and narrow[1] <= wide[1] + 1e-12


# --- task bootstrap ------------------------------------------------------------

@FAST
@given(per_task, st.integers(0, 2**32 - 1), st.integers(1, 300), confidences, confidences)
def test_bootstrap_widens_weakly_as_the_level_rises(values, seed, resamples, a, b):
    lo_level, hi_level = sorted((a, b))
    narrow = task_bootstrap(values, resamples=resamples, seed=seed, confidence=lo_level)
    wide = task_bootstrap(values, resamples=resamples, seed=seed, confidence=hi_level)
    assert wide.low <= narrow.low <= narrow.high <= wide.high
    assert min(values) <= wide.low and wide.high <= max(values)


@FAST
@given(per_task, st.integers(0, 2**32 - 1), st.integers(200, 600), st.floats(0.8, 0.99))
def test_bootstrap_interval_contains_the_mean(values, seed, resamples, confidence):
    """At a usable resample count and level. (With a handful of resamples or a level near 0 a
    percentile interval can miss the mean of a skewed suite: that is the method, not a defect.)"""
    ci = task_bootstrap(values, resamples=resamples, seed=seed, confidence=confidence)
    assert ci.low <= ci.mean <= ci.high
    assert ci.mean == sum(values) / len(values) or abs(ci.mean - sum(values) / len(values)) < 1e-12


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=3), counts(max_n=6), min_size=1, max_size=8),
       st.integers(0, 1000))
def test_curve_intervals_contain_their_points_and_stay_ordered(results, seed):
    curve = suite_pass_curve(results, resamples=300, seed=seed)
    assert [p.k for p in curve] == list(range(1, min(n for n, _ in results.values()) + 1))
    for p in curve:
        assert 0.0 <= p.pass_hat_low <= p.pass_hat <= p.pass_hat_high <= 1.0
        assert 0.0 <= p.pass_at_low <= p.pass_at <= p.pass_at_high <= 1.0
        assert p.pass_hat <= p.pass_at
    assert all(a.pass_hat >= b.pass_hat for a, b in zip(curve, curve[1:]))
    assert all(a.pass_at <= b.pass_at for a, b in zip(curve, curve[1:]))
