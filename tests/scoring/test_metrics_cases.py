"""Table-driven answers for evalsuite.scoring.metrics: exact values, interval levels, seeds, slice counts.

Each test asserts the answer itself (an exact Fraction, a bound to 1e-9, a count), so a changed
formula, level, seed or grouping changes a result here. Reference values for the Wilson interval
are the roots of (n + z^2) b^2 - (2s + z^2) b + s^2/n = 0, computed outside the module.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from evalsuite.scoring.metrics import (
    SLICE_COLUMNS,
    BootstrapCI,
    pass_at_k,
    pass_hat_k,
    slice_table,
    suite_pass_curve,
    task_bootstrap,
    wilson_interval,
)


def _raises(fn, *args, message: str, **kwargs) -> None:
    """The call raises ValueError with exactly this message (a user reads it; it names the bad value)."""
    with pytest.raises(ValueError) as err:
        fn(*args, **kwargs)
    assert str(err.value) == message


# --- pass^k and pass@k: exact fractions --------------------------------------

PASS_K = [
    # n, c, k, pass^k, pass@k
    (8, 6, 1, Fraction(3, 4), Fraction(3, 4)),
    (8, 6, 2, Fraction(15, 28), Fraction(27, 28)),
    (8, 6, 4, Fraction(15, 70), Fraction(1)),  # only 2 failures: 4 draws always include a success
    (8, 6, 6, Fraction(1, 28), Fraction(1)),
    (5, 3, 2, Fraction(3, 10), Fraction(9, 10)),
    (6, 3, 3, Fraction(1, 20), Fraction(19, 20)),
    (10, 2, 3, Fraction(0), Fraction(8, 15)),  # fewer successes than k
    (10, 2, 1, Fraction(1, 5), Fraction(1, 5)),
    (4, 4, 4, Fraction(1), Fraction(1)),  # k == n, c == n: the largest valid counts
    (4, 0, 1, Fraction(0), Fraction(0)),  # c == 0
    (4, 0, 4, Fraction(0), Fraction(0)),
    (1, 1, 1, Fraction(1), Fraction(1)),
    (1, 0, 1, Fraction(0), Fraction(0)),
    (3, 1, 2, Fraction(0), Fraction(2, 3)),
]


@pytest.mark.parametrize("n, c, k, hat, at", PASS_K)
def test_pass_hat_and_pass_at_exact(n, c, k, hat, at):
    got_hat, got_at = pass_hat_k(n, c, k), pass_at_k(n, c, k)
    assert (got_hat, got_at) == (hat, at)
    assert type(got_hat) is Fraction and type(got_at) is Fraction
    assert got_hat == Fraction(math.comb(c, k), math.comb(n, k))
    assert got_at == 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@pytest.mark.parametrize("fn", [pass_hat_k, pass_at_k])
@pytest.mark.parametrize(
    "n, c, k, message",
    [
        (8, 6, 0, "k must be at least 1, got k=0"),
        (8, 6, -2, "k must be at least 1, got k=-2"),
        (8, 6, 9, "k=9 exceeds the number of trials n=8"),
        (8, -1, 1, "successes c must be non-negative, got c=-1"),
        (8, 9, 1, "successes c=9 exceed the number of trials n=8"),
    ],
)
def test_pass_k_rejects_undefined_counts(fn, n, c, k, message):
    _raises(fn, n, c, k, message=message)


# --- Wilson score interval ------------------------------------------------

WILSON = [
    # successes, total, confidence, low, high
    (4, 5, 0.95, 0.3755346298, 0.9637758914),
    (40, 50, 0.95, 0.6696289407, 0.8875624998),
    (4, 5, 0.90, 0.4352925534, 0.9540375461),
    (5, 10, 0.95, 0.2365930905, 0.7634069095),
    (1, 3, 0.80, 0.1057756361, 0.6788173522),
    (7, 20, 0.99, 0.1463934414, 0.6283381790),
    (0, 10, 0.95, 0.0, 0.2775327999),
    (10, 10, 0.95, 0.7224672001, 1.0),
]


@pytest.mark.parametrize("s, n, confidence, low, high", WILSON)
def test_wilson_reference_values(s, n, confidence, low, high):
    got = wilson_interval(s, n, confidence)
    assert got == pytest.approx((low, high), abs=1e-9)


def test_wilson_design_values_and_default_level():
    assert wilson_interval(4, 5) == wilson_interval(4, 5, 0.95)
    assert tuple(round(b, 3) for b in wilson_interval(4, 5)) == (0.376, 0.964)
    assert tuple(round(b, 3) for b in wilson_interval(40, 50)) == (0.670, 0.888)


def test_wilson_bounds_are_exact_at_no_and_all_successes():
    # Fixed bug: computed, these were 2.8e-17 and 0.9999999999999999, outside the point estimates 0 and 1.
    for n in (1, 3, 5, 7, 50):
        for confidence in (0.5, 0.9, 0.95, 0.999):
            assert wilson_interval(0, n, confidence)[0] == 0.0
            assert wilson_interval(n, n, confidence)[1] == 1.0
    assert wilson_interval(0, 5)[1] > 0 and wilson_interval(5, 5)[0] < 1


@pytest.mark.parametrize(
    "s, n, confidence, message",
    [
        (0, 0, 0.95, "total must be positive, got total=0"),
        (0, -3, 0.95, "total must be positive, got total=-3"),
        (6, 5, 0.95, "successes must be in [0, total=5], got 6"),
        (-1, 5, 0.95, "successes must be in [0, total=5], got -1"),
        (1, 5, 1.0, "confidence must be strictly between 0 and 1, got 1.0"),
        (1, 5, 0.0, "confidence must be strictly between 0 and 1, got 0.0"),
        (1, 5, 1.5, "confidence must be strictly between 0 and 1, got 1.5"),
    ],
)
def test_wilson_errors(s, n, confidence, message):
    _raises(wilson_interval, s, n, confidence, message=message)


def test_wilson_edges_of_valid_input():
    assert wilson_interval(1, 1) == pytest.approx((0.2065493143, 1.0), abs=1e-9)
    assert wilson_interval(0, 1, 0.5)[0] == 0.0
    low, high = wilson_interval(2, 4, 1e-9)  # a near-zero level collapses onto the point estimate
    assert low == pytest.approx(0.5, abs=1e-8) and high == pytest.approx(0.5, abs=1e-8)


# --- task bootstrap: the level is the one asked for -----------------------

VALUES = [0.0, 0.1, 0.25, 0.4, 0.5, 0.55, 0.7, 0.8, 0.9, 1.0, 1.0, 0.3]


def _resample_means(values, resamples: int, seed: int) -> np.ndarray:
    """The documented draw: one rng.integers call, a resamples x tasks index matrix."""
    values = np.asarray(values, dtype=float)
    idx = np.random.default_rng(seed).integers(0, len(values), size=(resamples, len(values)))
    return values[idx].mean(axis=1)


@pytest.mark.parametrize(
    "resamples, seed, confidence, percentiles",
    [
        (2000, 0, 0.95, (2.5, 97.5)),
        (500, 7, 0.95, (2.5, 97.5)),
        (500, 7, 0.80, (10.0, 90.0)),
        (500, 7, 0.90, (5.0, 95.0)),
        (1000, 3, 0.99, (0.5, 99.5)),
        (1, 3, 0.5, (25.0, 75.0)),
    ],
)
def test_bootstrap_bounds_are_the_percentiles_of_the_task_resamples(resamples, seed, confidence, percentiles):
    ci = task_bootstrap(VALUES, resamples=resamples, seed=seed, confidence=confidence)
    means = _resample_means(VALUES, resamples, seed)
    # approx only for the last bit: 1 - 0.95 is 0.050000000000000044 in floating point
    assert (ci.low, ci.high) == pytest.approx(tuple(np.percentile(means, percentiles)), rel=1e-12, abs=1e-15)
    inside = np.mean((means >= ci.low) & (means <= ci.high))
    if resamples >= 500:
        assert inside == pytest.approx(confidence, abs=2 / resamples + 0.002)
    assert ci.mean == float(np.mean(VALUES))
    assert (ci.resamples, ci.seed, ci.method) == (resamples, seed, "task_bootstrap_percentile")


def test_bootstrap_defaults_are_2000_resamples_seed_0_95_percent():
    assert task_bootstrap(VALUES) == task_bootstrap(VALUES, resamples=2000, seed=0, confidence=0.95)
    assert (task_bootstrap(VALUES).resamples, task_bootstrap(VALUES).seed) == (2000, 0)


def test_bootstrap_coverage_matches_its_level_on_a_known_distribution():
    """600 suites of 40 tasks, per-task scores uniform on [0, 1] (true mean 0.5): an interval labelled
    95% must cover the mean about 95% of the time, an 80% one about 80%. Percentile bootstrap
    undercovers a little at 40 tasks; an 80-90% interval labelled 95% would land near 0.76-0.88."""
    suites = np.random.default_rng(1).uniform(size=(600, 40))

    def coverage(confidence: float) -> float:
        cis = [task_bootstrap(s, resamples=500, seed=i, confidence=confidence) for i, s in enumerate(suites)]
        return float(np.mean([ci.low <= 0.5 <= ci.high for ci in cis]))

    high, low = coverage(0.95), coverage(0.80)
    assert 0.92 <= high <= 0.98
    assert 0.74 <= low <= 0.86


def test_bootstrap_seed_and_resamples_reproduce_and_vary():
    a = task_bootstrap(VALUES, resamples=300, seed=11)
    assert a == task_bootstrap(VALUES, resamples=300, seed=11)
    assert (a.low, a.high) != (lambda b: (b.low, b.high))(task_bootstrap(VALUES, resamples=300, seed=12))
    assert (a.low, a.high) != (lambda b: (b.low, b.high))(task_bootstrap(VALUES, resamples=301, seed=11))


def test_bootstrap_accepts_fractions_like_floats():
    fractions = [Fraction(1, 3), Fraction(2, 7), Fraction(1), Fraction(0), Fraction(5, 9)]
    assert task_bootstrap(fractions, resamples=200, seed=4) == task_bootstrap(
        [float(f) for f in fractions], resamples=200, seed=4
    )


def test_bootstrap_single_task_and_constant_values_collapse():
    ci = task_bootstrap([0.7], resamples=50, seed=2)
    assert ci.mean == ci.low == ci.high == 0.7
    ci = task_bootstrap([0.25] * 9, resamples=50, seed=2)
    assert ci.mean == ci.low == ci.high == 0.25


@pytest.mark.parametrize(
    "values, kwargs, message",
    [
        ([], {}, "per_task_values must be a non-empty 1-D sequence of per-task values"),
        ([[0.1, 0.2]], {}, "per_task_values must be a non-empty 1-D sequence of per-task values"),
        ([0.5], {"resamples": 0}, "resamples must be at least 1, got 0"),
        ([0.5], {"confidence": 1.0}, "confidence must be strictly between 0 and 1, got 1.0"),
    ],
)
def test_bootstrap_errors(values, kwargs, message):
    _raises(task_bootstrap, values, message=message, **kwargs)


def test_bootstrap_one_resample_is_allowed():
    ci = task_bootstrap(VALUES, resamples=1, seed=0)
    only = float(_resample_means(VALUES, 1, 0)[0])
    assert ci.low == ci.high == only


# --- suite curve: every point honours the caller's seed and resamples ------

RESULTS = {"a": (8, 6), "b": (8, 8), "c": (10, 2), "d": (9, 0), "e": (8, 3)}


def _expected_bounds(k: int, resamples: int, seed: int):
    hat = [float(pass_hat_k(n, c, k)) for n, c in RESULTS.values()]
    at = [float(pass_at_k(n, c, k)) for n, c in RESULTS.values()]
    h = task_bootstrap(hat, resamples=resamples, seed=seed)
    a = task_bootstrap(at, resamples=resamples, seed=seed)
    return h.low, h.high, a.low, a.high


@pytest.mark.parametrize("resamples, seed", [(300, 5), (257, 99), (2000, 0)])
def test_curve_points_use_the_callers_seed_and_resamples(resamples, seed):
    curve = suite_pass_curve(RESULTS, resamples=resamples, seed=seed)
    assert [p.k for p in curve] == list(range(1, 9))  # smallest n is 8
    for p in curve:
        got = (p.pass_hat_low, p.pass_hat_high, p.pass_at_low, p.pass_at_high)
        assert got == _expected_bounds(p.k, resamples, seed)


# 24 tasks of 10-33 trials: the resample means are nearly continuous, so one more resample or another
# seed moves the percentile bounds (with a few coarse tasks they often land on the same atom).
MANY = {f"t{i:02d}": (10 + i, (7 * i + 3) % (11 + i)) for i in range(24)}


def test_curve_defaults_are_min_n_2000_resamples_seed_0():
    default = suite_pass_curve(MANY, max_k=3)
    assert default == suite_pass_curve(MANY, max_k=3, resamples=2000, seed=0)
    assert default != suite_pass_curve(MANY, max_k=3, resamples=2001, seed=0)
    assert default != suite_pass_curve(MANY, max_k=3, resamples=2000, seed=1)
    assert len(suite_pass_curve(RESULTS, resamples=10)) == 8  # max_k defaults to the smallest n


def test_curve_same_seed_same_interval_other_seed_or_resamples_other_interval():
    def bounds(curve):
        return [(p.pass_hat_low, p.pass_hat_high, p.pass_at_low, p.pass_at_high) for p in curve]

    base = suite_pass_curve(RESULTS, max_k=3, resamples=300, seed=5)
    assert base == suite_pass_curve(RESULTS, max_k=3, resamples=300, seed=5)
    other_seed = suite_pass_curve(RESULTS, max_k=3, resamples=300, seed=6)
    other_count = suite_pass_curve(RESULTS, max_k=3, resamples=301, seed=5)
    for other in (other_seed, other_count):
        assert [p.pass_hat for p in other] == [p.pass_hat for p in base]
        assert all(x != y for x, y in zip(bounds(other), bounds(base)))


def test_curve_points_are_exact_suite_means():
    curve = suite_pass_curve(RESULTS, max_k=4, resamples=50, seed=1)
    for p in curve:
        hats = [pass_hat_k(n, c, p.k) for n, c in RESULTS.values()]
        ats = [pass_at_k(n, c, p.k) for n, c in RESULTS.values()]
        assert p.pass_hat == float(sum(hats) / 5)
        assert p.pass_at == float(sum(ats) / 5)
    mean_pass_rate = (Fraction(6, 8) + 1 + Fraction(2, 10) + 0 + Fraction(3, 8)) / 5
    assert curve[0].pass_hat == curve[0].pass_at == float(mean_pass_rate)
    # k = 1: pass^1 == pass@1 per task, and one seed pairs the two resamplings, so the bounds agree too
    assert (curve[0].pass_hat_low, curve[0].pass_hat_high) == (curve[0].pass_at_low, curve[0].pass_at_high)


def test_curve_max_k_may_equal_the_smallest_n():
    curve = suite_pass_curve({"a": (3, 3), "b": (5, 1)}, max_k=3, resamples=20)
    assert [p.k for p in curve] == [1, 2, 3]
    assert curve[-1].pass_hat == 0.5 and curve[-1].pass_at == float((1 + Fraction(3, 5)) / 2)


@pytest.mark.parametrize(
    "results, max_k, message",
    [
        ({}, None, "results is empty: no tasks to score"),
        ({"a": (8, 6)}, 0, "max_k must be at least 1, got 0"),
        ({"a": (8, 6), "s1": (3, 3), "s2": (2, 0), "b": (4, 1)}, 4, "tasks with fewer than k=4 trials: s1, s2"),
    ],
)
def test_curve_errors(results, max_k, message):
    _raises(suite_pass_curve, results, max_k=max_k, resamples=10, message=message)


# --- slice table: counts per slice, the missing bucket, Wilson over the right tasks ---

# (task, n, c, category): full passes (c == n) are deliberately not half of any slice, so counting
# failed tasks, tasks with any success or tasks with any failure gives different Wilson columns.
TASKS = [
    ("a1", 4, 4, "a"), ("a2", 2, 2, "a"), ("a3", 3, 3, "a"), ("a4", 4, 1, "a"), ("a5", 5, 0, "a"),
    ("b1", 6, 6, "b"), ("b2", 6, 5, "b"), ("b3", 6, 2, "b"), ("b4", 6, 5, "b"),
    ("x1", 3, 3, None), ("x2", 3, 0, None), ("x3", 2, 1, None),
]
# value: tasks, trials, tasks that passed every trial, pass^1 (mean of c/n over the slice's tasks)
EXPECTED = {
    "a": (5, 18, 3, (1 + 1 + 1 + Fraction(1, 4) + 0) / 5),
    "b": (4, 24, 1, (1 + Fraction(5, 6) + Fraction(2, 6) + Fraction(5, 6)) / 4),
    None: (3, 8, 1, (1 + 0 + Fraction(1, 2)) / 3),
}


def _frame(tasks=TASKS) -> pd.DataFrame:
    return pd.DataFrame(tasks, columns=["task_id", "n", "c", "category"])


def _by_value(table: pd.DataFrame) -> dict:
    return {(None if pd.isna(r["value"]) else r["value"]): r for r in table.to_dict("records")}


def test_slice_rows_count_tasks_trials_and_full_passes_per_slice():
    table = slice_table(_frame(), by="category", min_tasks=4, resamples=300, seed=11)
    assert list(table.columns) == SLICE_COLUMNS
    assert list(table["value"].iloc[:2]) == ["a", "b"] and pd.isna(table["value"].iloc[2])  # missing last
    rows = _by_value(table)
    assert set(rows) == set(EXPECTED)
    for value, (tasks, trials, full, mean) in EXPECTED.items():
        r = rows[value]
        assert (r["slice"], r["tasks"], r["trials"]) == ("category", tasks, trials)
        assert r["pass_hat_1"] == pytest.approx(float(mean), abs=1e-12)
        assert (r["wilson_low"], r["wilson_high"]) == wilson_interval(full, tasks)
    assert sum(r["tasks"] for r in rows.values()) == len(TASKS)  # no task dropped


def test_slice_bootstrap_uses_the_callers_seed_and_resamples():
    for resamples, seed in [(300, 11), (123, 4)]:
        rows = _by_value(slice_table(_frame(), by="category", resamples=resamples, seed=seed))
        for value in EXPECTED:
            per_task = [c / n for _, n, c, v in TASKS if v == value]
            ci = task_bootstrap(per_task, resamples=resamples, seed=seed)
            assert (rows[value]["pass_hat_1"], rows[value]["low"], rows[value]["high"]) == (ci.mean, ci.low, ci.high)


def test_slice_defaults_are_30_tasks_2000_resamples_seed_0():
    # slice "big" has exactly 30 tasks (rankable at the default) with varied scores; "small" has 5.
    frame = pd.DataFrame(
        [(f"t{i:02d}", n, c, "small" if i >= 30 else "big") for i, (n, c) in enumerate(MANY.values())]
        + [(f"u{i:02d}", 9 + i, (5 * i + 1) % (9 + i), "big") for i in range(11)],
        columns=["task_id", "n", "c", "category"],
    )
    default = slice_table(frame, by="category")
    pd.testing.assert_frame_equal(default, slice_table(frame, by="category", min_tasks=30, resamples=2000, seed=0))
    assert default[["value", "tasks", "too_small_to_rank"]].values.tolist() == [["big", 35, False]]
    frame.loc[frame.index[-5:], "category"] = "small"
    default = slice_table(frame, by="category")
    assert default[["value", "tasks", "too_small_to_rank"]].values.tolist() == [["big", 30, False], ["small", 5, True]]
    for other in ({"resamples": 2001}, {"seed": 1}):
        assert not default[["low", "high"]].equals(slice_table(frame, by="category", **other)[["low", "high"]])


def test_slice_values_come_out_sorted_whatever_the_row_order():
    table = slice_table(_frame(TASKS[::-1]), by="category", min_tasks=4, resamples=300, seed=11)
    counts = ["value", "tasks", "trials", "pass_hat_1", "wilson_low", "wilson_high", "too_small_to_rank"]
    pd.testing.assert_frame_equal(table[counts], slice_table(_frame(), by="category", min_tasks=4)[counts])
    assert list(table["value"][:2]) == ["a", "b"] and pd.isna(table["value"][2])


def test_slice_table_of_no_tasks_is_empty_with_the_columns():
    table = slice_table(_frame([]), by="category")
    assert list(table.columns) == SLICE_COLUMNS and len(table) == 0


def test_slice_counts_may_arrive_as_floats():
    # e.g. n and c after a merge or a parquet round trip; the table is the same as for int counts
    floats = _frame().astype({"n": float, "c": float})
    pd.testing.assert_frame_equal(
        slice_table(floats, by="category", resamples=50), slice_table(_frame(), by="category", resamples=50)
    )


def test_too_small_to_rank_is_fewer_than_min_tasks():
    rows = _by_value(slice_table(_frame(), by="category", min_tasks=4, resamples=20))
    assert {v: bool(r["too_small_to_rank"]) for v, r in rows.items()} == {"a": False, "b": False, None: True}
    rows = _by_value(slice_table(_frame(), by="category", min_tasks=5, resamples=20))
    assert {v: bool(r["too_small_to_rank"]) for v, r in rows.items()} == {"a": False, "b": True, None: True}


def test_tasks_without_a_slice_value_get_their_own_bucket():
    """A task lacking the value (None, NaN or pandas NA) is reported in a missing-value bucket with its own
    count, never dropped: 'every slice reports its own task count' must add up to the suite."""
    frame = _frame()
    frame["required_actions"] = pd.array([1, 1, 2, 2, 2, 0, 0, 0, 1, None, None, None], dtype="Int64")
    rows = _by_value(slice_table(frame, by="required_actions", resamples=20))
    assert {v: r["tasks"] for v, r in rows.items()} == {0: 3, 1: 3, 2: 3, None: 3}
    assert rows[None]["trials"] == 8 and rows[None]["wilson_high"] == wilson_interval(1, 3)[1]

    nothing = _frame([(t, n, c, float("nan")) for t, n, c, _ in TASKS])
    table = slice_table(nothing, by="category", resamples=20)
    assert len(table) == 1 and pd.isna(table["value"][0]) and table["tasks"][0] == len(TASKS)


def test_missing_bucket_reaches_the_scorecard_as_value_none():
    from evalsuite.scoring.scorecard import SliceRow, _plain

    rows = [SliceRow(**_plain(r)) for r in slice_table(_frame(), by="category", resamples=20).to_dict("records")]
    assert [(r.value, r.tasks) for r in rows] == [("a", 5), ("b", 4), (None, 3)]


@pytest.mark.parametrize(
    "frame, by, message",
    [
        (_frame().drop(columns=["n", "c"]), "category", "rows lacks columns: ['c', 'n']"),
        (_frame(), "split", "rows lacks columns: ['split']"),
        (pd.concat([_frame(), _frame().iloc[[0, 0, 4]]]), "category",
         "rows must have one row per task; repeated: ['a1', 'a5']"),
    ],
)
def test_slice_errors(frame, by, message):
    _raises(slice_table, frame, by, message=message)


def test_bootstrap_result_is_frozen():
    ci = task_bootstrap([0.5, 1.0], resamples=10)
    assert isinstance(ci, BootstrapCI)
    with pytest.raises(Exception):
        ci.low = 0.0  # type: ignore[misc]
