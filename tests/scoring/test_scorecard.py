import json
from collections import Counter
from fractions import Fraction

import matplotlib.image
import pandas as pd
import pytest
from harness_support import CrashingAgent, make_release
from scripted_model import Always
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.core.identity import AgentConfig
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.metrics import pass_hat_k
from evalsuite.scoring.runlog import PASSK_PNG, SCORECARD_JSON, SCORECARD_MD, SUMMARY, read_records, write_scorecard
from evalsuite.scoring.scorecard import SLICES, build_scorecard, required_actions
from evalsuite.trials.harness import TrialSettings, run_trials

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return Release(make_release(ap, tmp_path_factory.mktemp("releases")))


@pytest.fixture(scope="module")
def run_dir(release, tmp_path_factory):
    """One finished `evalsuite run` of the reference and no-op agents."""
    out = tmp_path_factory.mktemp("run")
    result = CliRunner().invoke(app, ["run", str(release.path), "--agent", "reference", "--agent", "noop",
                                      "--trials", "2", "--out", str(out), "--workers", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "pass^2" in result.output and "reference" in result.output
    return out


@pytest.fixture(scope="module")
def card(run_dir):
    return json.loads((run_dir / SCORECARD_JSON).read_text())


def test_score_reproduces_the_scorecard_exactly(run_dir):
    before = {name: (run_dir / name).read_bytes() for name in (SCORECARD_JSON, SCORECARD_MD)}
    for name in (SCORECARD_JSON, SCORECARD_MD, PASSK_PNG):
        (run_dir / name).unlink()
    result = CliRunner().invoke(app, ["score", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert {name: (run_dir / name).read_bytes() for name in before} == before
    assert (run_dir / PASSK_PNG).is_file()


def test_scorecard_carries_identity_bootstrap_settings_and_acceptance(card, release):
    m = release.manifest
    assert (card["suite"], card["suite_version"]) == (m.suite, m.version)
    assert card["task_set_sha256"] == m.task_set_sha256 and card["seed_sha256"] == m.seed_sha256
    assert card["environment_image"] == m.environment_image and card["tool_schemas_sha256"] == m.tool_schemas_sha256
    assert card["bootstrap"] == {"method": "task_bootstrap_percentile", "resamples": 2000, "seed": 0,
                                 "confidence": 0.95}
    assert card["acceptance"] == m.acceptance
    assert "counted as a failed trial" in card["policy"]["infra_error"]
    assert [a["agent"] for a in card["agents"]] == ["noop", "reference"]
    ref = card["agents"][1]
    assert ref["agent_config"]["name"] == "reference" and len(ref["identity_sha256"]) == 64
    assert [p["k"] for p in ref["curve"]] == [1, 2] and ref["curve"][1]["pass_hat"] == 1.0
    assert ref["outcomes"] == {"pass": 98, "fail": 0, "budget_exhausted": 0, "infra_error": 0}


def test_slices_have_task_counts_and_flag_slices_under_30_tasks(card, release):
    tasks = release.tasks()
    expected = {
        "split": Counter(t.split for t in tasks), "trigger_type": Counter(t.trigger.type for t in tasks),
        "category": Counter(t.category for t in tasks), "policy_version": Counter(t.policy.version for t in tasks),
        "required_actions": Counter(required_actions(t) for t in tasks),
    }
    for agent in card["agents"]:
        rows = agent["slices"]
        assert {r["slice"] for r in rows} == set(SLICES) - {"persona"}  # no task of this suite was sampled by persona
        for by in set(SLICES) - {"persona"}:
            assert {r["value"]: r["tasks"] for r in rows if r["slice"] == by} == dict(expected[by])
        assert all(r["too_small_to_rank"] == (r["tasks"] < 30) for r in rows)
        flags = {r["too_small_to_rank"] for r in rows}
        assert flags == {True, False}  # e.g. every split is under 30 tasks, the queue_item slice is not
        assert all(r["trials"] == 2 * r["tasks"] for r in rows)


def test_queue_and_conversation_tasks_are_always_reported_separately(card):
    for agent in card["agents"]:
        by = {t["trigger_type"]: t for t in agent["by_trigger"]}
        assert set(by) == {"queue_item", "conversation"}
        assert by["queue_item"]["tasks"] == agent["tasks"] and by["queue_item"]["curve"]
        assert by["conversation"] == {"trigger_type": "conversation", "tasks": 0, "trials": 0, "curve": []}


def test_passk_png_is_a_valid_png(run_dir):
    data = (run_dir / PASSK_PNG).read_bytes()
    assert data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR" and data[-8:-4] == b"IEND"
    pixels = matplotlib.image.imread(run_dir / PASSK_PNG)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100


def test_parquet_summary_and_trace_records_give_the_same_scorecard(run_dir, release):
    tasks, acceptance = release.tasks(), release.manifest.acceptance
    from_records = build_scorecard(read_records(run_dir), tasks, acceptance, resamples=200)
    from_parquet = build_scorecard(pd.read_parquet(run_dir / SUMMARY), tasks, acceptance, resamples=200)
    assert from_records == from_parquet


def test_crashed_trials_are_shown_as_infra_errors_and_count_as_failures(release, tmp_path):
    tasks = release.tasks()
    crash_on = {tasks[1].task_id, tasks[5].task_id, tasks[9].task_id}
    records = run_trials(release.world_ref(), tasks, [CrashingAgent(crash_on), "reference"], 2,
                         TrialSettings(release.run_identity(), workers=1))
    card = build_scorecard(records, tasks, None, resamples=200)
    crashy = next(a for a in card.agents if a.agent == "crashy")
    assert crashy.outcomes == {"pass": 2 * (len(tasks) - 3), "fail": 0, "budget_exhausted": 0, "infra_error": 6}
    assert crashy.tasks == len(tasks) and crashy.trials == 2 * len(tasks) and crashy.tasks_with_infra_error == 3
    assert crashy.curve[0].pass_hat == pytest.approx(float(Fraction(len(tasks) - 3, len(tasks)) * pass_hat_k(2, 2, 1)))
    paths = write_scorecard(card, tmp_path)
    md = paths["md"].read_text()
    assert "| crashy | 49 | 98 | 6 |" in md and "infra_error" in md


def test_a_task_without_trials_is_refused_not_dropped(run_dir, release):
    tasks = release.tasks()
    records = [r for r in read_records(run_dir) if r.task_id != tasks[0].task_id]
    with pytest.raises(ValueError, match="no trials for 1 task"):
        build_scorecard(records, tasks, None, resamples=10)


def test_records_of_different_runs_are_not_pooled(run_dir, release):
    records = read_records(run_dir)
    records[0] = records[0].model_copy(update={"run_seed": 99})
    with pytest.raises(ValueError, match="run_seed"):
        build_scorecard(records, release.tasks(), None, resamples=10)


def test_two_configs_of_one_agent_name_are_never_pooled(ap, endpoint, tmp_path):
    """The same model at two temperatures under one name: each run scores its own config; together they refuse."""
    small = Release(make_release(ap, tmp_path / "release", n_tasks=2))
    endpoint.script = Always({"content": "nothing to change"})
    cool, hot = (AgentConfig(name="scripted", kind="openai", model="scripted-model", base_url=endpoint.url,
                             temperature=t) for t in (0.0, 0.7))
    cards = [run_release(small, [c], tmp_path / f"t{c.temperature}", trials=1, workers=1) for c in (cool, hot)]
    configs = [card.agents[0].agent_config for card in cards]
    assert configs == [cool.model_dump(mode="json"), hot.model_dump(mode="json")]
    assert cards[0].agents[0].identity_sha256 != cards[1].agents[0].identity_sha256
    pooled = [r for c in (cool, hot) for r in read_records(tmp_path / f"t{c.temperature}")]
    with pytest.raises(ValueError, match="agent scripted: records mix several values of agent_config"):
        build_scorecard(pooled, small.tasks(), None, resamples=10)
    one_trial_each = [r for r in pooled if (r.agent_config == cool) == (r.task_id == small.tasks()[0].task_id)]
    with pytest.raises(ValueError, match="agent_config"):  # no duplicate trial needed to be refused
        build_scorecard(one_trial_each, small.tasks(), None, resamples=10)
