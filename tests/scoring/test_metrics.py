from fractions import Fraction

import pandas as pd
import pytest

from evalsuite.scoring.metrics import (
    BootstrapCI,
    KPoint,
    pass_at_k,
    pass_hat_k,
    slice_table,
    suite_pass_curve,
    task_bootstrap,
    wilson_interval,
)

# --- pass^k / pass@k -------------------------------------------------------

def test_pass_hat_k_reference_values_are_exact():
    assert pass_hat_k(8, 6, 1) == Fraction(3, 4)
    assert pass_hat_k(8, 6, 2) == Fraction(15, 28)
    assert pass_hat_k(8, 6, 4) == Fraction(15, 70)
    assert isinstance(pass_hat_k(8, 6, 4), Fraction)


def test_pass_hat_k_edges():
    assert pass_hat_k(8, 8, 8) == 1
    assert pass_hat_k(8, 3, 4) == 0  # fewer successes than k
    assert pass_hat_k(8, 0, 1) == 0


def test_pass_at_k_values():
    assert pass_at_k(8, 6, 1) == Fraction(3, 4)
    assert pass_at_k(8, 6, 2) == 1 - Fraction(1, 28)
    assert pass_at_k(8, 6, 7) == 1  # n - c < k: some success is certain
    assert pass_at_k(8, 0, 3) == 0
    assert isinstance(pass_at_k(8, 6, 2), Fraction)


@pytest.mark.parametrize("fn", [pass_hat_k, pass_at_k])
@pytest.mark.parametrize(
    "n, c, k, match",
    [
        (8, 6, 9, "exceeds"),
        (8, 6, 0, "at least 1"),
        (8, -1, 1, "non-negative"),
        (8, 9, 1, "exceed"),
    ],
)
def test_pass_k_errors(fn, n, c, k, match):
    with pytest.raises(ValueError, match=match):
        fn(n, c, k)


# --- Wilson ----------------------------------------------------------------

def test_wilson_reference_values():
    low, high = wilson_interval(4, 5)
    assert (round(low, 3), round(high, 3)) == (0.376, 0.964)
    low, high = wilson_interval(40, 50)
    assert (round(low, 3), round(high, 3)) == (0.670, 0.888)


def test_wilson_stays_in_unit_interval():
    assert wilson_interval(0, 5)[0] == pytest.approx(0.0, abs=1e-12)
    assert wilson_interval(5, 5)[1] == pytest.approx(1.0, abs=1e-12)
    assert wilson_interval(5, 5)[0] > 0.4


def test_wilson_errors():
    with pytest.raises(ValueError, match="total"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError):
        wilson_interval(6, 5)
    with pytest.raises(ValueError):
        wilson_interval(1, 5, confidence=1.0)


# --- task bootstrap --------------------------------------------------------

VALUES = [0.0, 0.1, 0.25, 0.4, 0.5, 0.55, 0.7, 0.8, 0.9, 1.0, 1.0, 0.3]


def test_bootstrap_is_deterministic_under_fixed_seed():
    a = task_bootstrap(VALUES, resamples=2000, seed=7)
    b = task_bootstrap(VALUES, resamples=2000, seed=7)
    assert a == b
    assert isinstance(a, BootstrapCI)
    assert a.method == "task_bootstrap_percentile"
    assert (a.resamples, a.seed) == (2000, 7)


def test_bootstrap_seed_changes_bounds():
    a = task_bootstrap(VALUES, seed=0)
    b = task_bootstrap(VALUES, seed=1)
    assert (a.low, a.high) != (b.low, b.high)


def test_bootstrap_interval_contains_mean():
    ci = task_bootstrap(VALUES)
    assert ci.mean == pytest.approx(sum(VALUES) / len(VALUES))
    assert ci.low < ci.mean < ci.high


def test_bootstrap_single_task_collapses():
    ci = task_bootstrap([0.7])
    assert ci.mean == ci.low == ci.high == pytest.approx(0.7)


def test_bootstrap_rejects_empty():
    with pytest.raises(ValueError):
        task_bootstrap([])


def test_bootstrap_resamples_tasks_not_trials():
    # 5 tasks x 100 trials, each task all-pass or all-fail: 300/500 trials pass.
    results = {f"t{i}": (100, c) for i, c in enumerate([0, 100, 0, 100, 100])}
    per_task = [c / n for n, c in results.values()]
    ci = task_bootstrap(per_task)
    w_low, w_high = wilson_interval(300, 500)
    # Only five independent tasks: the task interval must be far wider than
    # what 500 supposedly independent trials would claim.
    assert (ci.high - ci.low) > 5 * (w_high - w_low)


# --- suite curve -----------------------------------------------------------

def test_suite_pass_curve_points():
    results = {"a": (8, 6), "b": (8, 8), "c": (10, 2)}
    curve = suite_pass_curve(results)
    assert [p.k for p in curve] == list(range(1, 9))  # min n = 8
    assert all(isinstance(p, KPoint) for p in curve)
    k2 = curve[1]
    expected = (Fraction(15, 28) + 1 + pass_hat_k(10, 2, 2)) / 3
    assert k2.pass_hat == pytest.approx(float(expected))
    expected_at = (pass_at_k(8, 6, 2) + 1 + pass_at_k(10, 2, 2)) / 3
    assert k2.pass_at == pytest.approx(float(expected_at))
    for p in curve:
        assert 0 <= p.pass_hat_low <= p.pass_hat_high <= 1
        assert 0 <= p.pass_at_low <= p.pass_at_high <= 1
        assert p.pass_hat <= p.pass_at
    # pass^k never rises with k
    hats = [p.pass_hat for p in curve]
    assert hats == sorted(hats, reverse=True)


def test_suite_pass_curve_max_k_and_determinism():
    results = {"a": (8, 6), "b": (8, 8), "c": (10, 2)}
    assert len(suite_pass_curve(results, max_k=3)) == 3
    assert suite_pass_curve(results, seed=3) == suite_pass_curve(results, seed=3)


def test_suite_pass_curve_task_with_too_few_trials_is_named():
    with pytest.raises(ValueError, match="short_task"):
        suite_pass_curve({"a": (8, 6), "short_task": (4, 4)}, max_k=5)


def test_suite_pass_curve_empty():
    with pytest.raises(ValueError):
        suite_pass_curve({})


# --- slice table -----------------------------------------------------------

def _rows() -> pd.DataFrame:
    big = [
        {"task_id": f"big{i}", "n": 4, "c": i % 5, "split": "train"} for i in range(40)
    ]
    small = [
        {"task_id": f"small{i}", "n": 4, "c": 4 if i % 2 else 1, "split": "holdout"} for i in range(10)
    ]
    return pd.DataFrame(big + small)


def test_slice_table_flags_small_slices():
    table = slice_table(_rows(), by="split", resamples=500, seed=0)
    assert list(table.columns) == [
        "slice", "value", "tasks", "trials", "pass_hat_1", "low", "high",
        "wilson_low", "wilson_high", "too_small_to_rank",
    ]
    row = table.set_index("value")
    assert row.loc["holdout", "tasks"] == 10
    assert bool(row.loc["holdout", "too_small_to_rank"]) is True
    assert row.loc["train", "tasks"] == 40
    assert bool(row.loc["train", "too_small_to_rank"]) is False
    assert (table["slice"] == "split").all()


def test_slice_table_values():
    table = slice_table(_rows(), by="split", resamples=500, seed=0).set_index("value")
    holdout = table.loc["holdout"]
    assert holdout["trials"] == 40
    assert holdout["pass_hat_1"] == pytest.approx((5 * 1.0 + 5 * 0.25) / 10)
    # Wilson over tasks: 5 of 10 tasks passed every trial.
    assert (holdout["wilson_low"], holdout["wilson_high"]) == pytest.approx(wilson_interval(5, 10))
    assert holdout["low"] <= holdout["pass_hat_1"] <= holdout["high"]


def test_slice_table_is_deterministic():
    a = slice_table(_rows(), by="split", resamples=300, seed=5)
    b = slice_table(_rows(), by="split", resamples=300, seed=5)
    pd.testing.assert_frame_equal(a, b)


def test_slice_table_errors():
    with pytest.raises(ValueError, match="columns"):
        slice_table(_rows(), by="category")
    dup = pd.concat([_rows(), _rows().head(1)])
    with pytest.raises(ValueError, match="one row per task"):
        slice_table(dup, by="split")
