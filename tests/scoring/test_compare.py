"""Paired comparison of two agents: the verdict, the paired interval, the tasks needed, refusals and the CLI."""
from __future__ import annotations

import json
import shutil

import pytest
from harness_support import make_release
from suite_support import DEMO_KEY
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages import leaderboard, scorecard, trial_traces
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.compare import UNDECIDED, CompareError, compare_counts, compare_records
from evalsuite.scoring.metrics import task_bootstrap
from evalsuite.scoring.runlog import read_records
from evalsuite.sourcing.spec import load_spec


def tasks(successes: list[int], n: int = 4) -> dict[str, tuple[int, int]]:
    return {f"t{i}": (n, c) for i, c in enumerate(successes)}


def test_a_clear_winner_on_many_tasks_is_a_better_with_an_interval_above_zero():
    out = compare_counts(tasks([4] * 40), tasks([1] * 20 + [2] * 20))
    for d in (out["pass_1"], out["pass_k"]):
        assert d.verdict == "A better" and d.low > 0
    assert out["pass_k"].k == 4 and out["pass_1"].diff == pytest.approx(1 - 1.5 / 4)


def test_b_better_when_the_interval_is_below_zero():
    assert compare_counts(tasks([0] * 30), tasks([3] * 30))["pass_1"].verdict == "B better"


def test_identical_agents_differ_by_zero_and_no_sample_size_would_separate_them():
    same = tasks([0, 1, 2, 3, 4] * 6)
    d = compare_counts(same, same)["pass_1"]
    assert (d.diff, d.low, d.high, d.verdict, d.tasks_needed) == (0.0, 0.0, 0.0, UNDECIDED, None)


def test_a_small_noisy_sample_is_undecided_and_needs_more_tasks_than_it_has():
    d = compare_counts(tasks([4, 0, 3, 1, 4, 2]), tasks([2, 1, 4, 0, 1, 3]))["pass_1"]
    assert d.verdict == UNDECIDED and d.low < 0 < d.high
    assert d.tasks_needed > 6


def test_pairing_separates_agents_whose_separate_intervals_overlap():
    # Tasks range from easy to hard; A is a little better on every other one and never worse.
    b = [0, 0, 1, 1, 2, 2, 3, 3] * 3
    a = [c + i % 2 for i, c in enumerate(b)]
    ia = task_bootstrap([c / 4 for c in a])
    ib = task_bootstrap([c / 4 for c in b])
    assert ia.low < ib.high  # unpaired: the intervals overlap
    d = compare_counts(tasks(a), tasks(b))["pass_1"]
    assert d.verdict == "A better" and d.low > 0


def test_only_tasks_both_attempted_are_compared():
    a = tasks([4] * 10)
    b = {**tasks([0] * 5), "only_b": (4, 4)}
    assert compare_counts(a, b)["tasks"] == 5


def test_the_same_seed_reproduces_the_interval_and_another_moves_it():
    a, b = tasks([4, 0, 3, 1, 4, 2, 1]), tasks([2, 1, 4, 0, 1, 3, 0])
    first, again = compare_counts(a, b, seed=7), compare_counts(a, b, seed=7)
    assert first == again
    assert compare_counts(a, b, seed=8) != first


@pytest.fixture(scope="module")
def run(ap, tmp_path_factory):
    """Reference and no-op agents, two trials per task, in one run folder."""
    release = Release(make_release(ap, tmp_path_factory.mktemp("releases")))
    out = tmp_path_factory.mktemp("run")
    run_release(release, ["reference", "noop"], out, trials=2, workers=1)
    return out, release


def test_records_of_another_release_are_refused_in_one_line(run):
    records = read_records(run[0])
    other = [r.model_copy(update={"suite_version": "t2"}) for r in records if r.agent == "noop"]
    with pytest.raises(CompareError) as exc:
        compare_records(records, "reference", other, "noop")
    assert "different releases" in str(exc.value) and "t1" in str(exc.value) and "\n" not in str(exc.value)


def test_compare_in_one_run_finds_the_reference_better_than_noop(run):
    result = CliRunner().invoke(app, ["compare", str(run[0]), "--agent", "reference", "--agent", "noop", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "reference better" in result.output and "pass^2" in result.output
    alone = CliRunner().invoke(app, ["compare", str(run[0])])  # the run's only two agents: no --agent needed
    assert alone.exit_code == 0 and "reference better" in alone.output


def test_compare_two_runs_of_one_agent_each(run, tmp_path):
    run_release(run[1], ["noop"], tmp_path / "noop", trials=2, workers=1)
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "noop"), str(run[0]), "--agent", "noop",
                                      "--agent", "reference"])
    assert result.exit_code == 0, result.output
    assert "reference better" in result.output


def test_compare_refuses_an_unknown_agent_in_one_line(run):
    result = CliRunner().invoke(app, ["compare", str(run[0]), "--agent", "reference", "--agent", "ghost"])
    assert result.exit_code == 2 and result.output.strip() == "error: no trials of agent 'ghost'"


def test_the_scorecard_stage_compares_every_pair_and_the_leaderboard_marks_ties(built, tmp_path, monkeypatch):
    spec_path, home = built
    shutil.copytree(home, tmp_path / "home")
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    spec = load_spec(spec_path)
    paths = Paths(spec, tmp_path / "home")
    version = next((paths.releases / spec.name).iterdir()).name
    for agent in ("reference", "noop", "adversary"):
        trial_traces.run(spec, paths, version, agent, workers=1)
    table = scorecard.run(spec, paths, version).metadata["paired_comparison"]
    assert "| reference − noop | 1 | 1.000 [1.00, 1.00] | A better |" in table
    board = leaderboard.run(spec, paths).metadata["leaderboard"]
    ties = {line.split(" | ")[1]: line.split(" | ")[-1].strip(" |") for line in board.splitlines()[2:]}
    # noop and adversary both fail every task: whichever is ranked second is tied with the other one
    assert ties["reference"] == "" and sorted([ties["noop"], ties["adversary"]]) in (
        ["", "≈ tied with adversary"], ["", "≈ tied with noop"])


def test_each_measure_is_compared_with_its_paired_interval(run):
    records = read_records(run[0])
    c = compare_records(records, "reference", records, "noop", resamples=200)
    by = {m.measure: m for m in c.measures}
    assert list(by) == ["outcome", "grounded", "authority violations", "handoff right", "latency (s)", "tool calls",
                        "model calls", "tokens"]
    assert (by["outcome"].a, by["outcome"].b, by["outcome"].verdict) == (1.0, 0.0, "A higher")
    assert by["tool calls"].verdict == "A higher" and by["tool calls"].b == 0.0
    assert by["authority violations"].verdict == UNDECIDED and all(m.tasks == 49 for m in c.measures)


def test_two_variants_of_a_suite_compare_only_when_asked(run):
    records = read_records(run[0])
    other = [r.model_copy(update={"suite": "ap_variant", "suite_version": "v2"}) for r in records if r.agent == "noop"]
    with pytest.raises(CompareError, match="different releases"):
        compare_records(records, "reference", other, "noop")
    c = compare_records(records, "reference", other, "noop", resamples=200, variants=True)
    assert c.suite == "ap_test (A) vs ap_variant (B)" and c.pass_1.verdict == "A better"


def test_the_scorecard_shows_each_measure_beside_pass_k_with_its_trial_and_task_counts(run):
    card = json.loads((run[0] / "scorecard.json").read_text())
    measures = {a["agent"]: a["measures"] for a in card["agents"]}
    ref, noop = measures["reference"], measures["noop"]
    assert (ref["trials"], ref["tasks"], ref["outcome"]["holds"]) == (98, 49, 98)
    assert (noop["outcome"]["holds"], noop["grounded"]["rate"], noop["tool_calls_per_trial"]) == (0, 1.0, 0.0)
    assert "latency_median_seconds" not in ref  # wall times never repeat: shown, not stored
    md = (run[0] / "scorecard.md").read_text()
    assert "### Measures kept apart" in md and "| measured over | 98 trials, 49 tasks |" in md
