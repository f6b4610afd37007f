"""People beside agents on a scorecard (`evalsuite play` attempts), and the sample plan that picks their tasks."""
from __future__ import annotations

import json
import statistics
from collections import Counter

import pytest
from harness_support import make_release
from starlette.testclient import TestClient
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.releases.release import Release
from evalsuite.releases.runs import play_desk, rescore, run_release
from evalsuite.scoring.metrics import wilson_interval
from evalsuite.scoring.render import console_table
from evalsuite.scoring.runlog import PASSK_PNG, SCORECARD_JSON, SCORECARD_MD, TRACES
from evalsuite.scoring.scorecard import SLICES, _plain, sample_plan, task_attributes
from evalsuite.trials.agents.human import playable
from evalsuite.trials.play import play_app
from evalsuite.trials.tracelog import read_traces


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return Release(make_release(ap, tmp_path_factory.mktemp("releases")))


def attempt(release: Release, out, name: str, tasks, answer_right: bool) -> None:
    """A person's attempts through the play app: the reference solution, or nothing at all."""
    client = TestClient(play_app(play_desk(release, out), out), headers={"Origin": "http://testserver"})
    client.post("/person", data={"name": name})
    for task in tasks:
        client.post(f"/open/{task.task_id}")
        for call in task.solution_calls() if answer_right else []:
            client.post(f"/attempt/call/{call.tool}", data={k: str(v) for k, v in call.arguments.items()})
        client.post("/attempt/submit", data={"message": task.reference_answer if answer_right else ""})


@pytest.fixture(scope="module")
def run(release, tmp_path_factory):
    """Reference and no-op agents, then Ada (right on two tasks) and Grace (nothing on one) in one run folder."""
    out = tmp_path_factory.mktemp("run")
    before = run_release(release, ["reference", "noop"], out, trials=1, workers=1)
    tasks = playable(release.tasks())
    attempt(release, out, "Ada", tasks[:2], True)
    attempt(release, out, "Grace", tasks[:1], False)
    return out, before, rescore(out), tasks


def test_the_human_row_counts_people_and_attempts_with_a_wilson_interval(run):
    out, _, card, tasks = run
    h = card.humans
    assert (h.people, h.attempts, h.tasks) == (2, 3, 2)
    assert h.outcomes == {"pass": 2, "fail": 1, "budget_exhausted": 0, "infra_error": 0}
    assert (h.pass_at_1, (h.wilson_low, h.wilson_high)) == (2 / 3, wilson_interval(2, 3))
    seconds = [r.seconds for r in read_traces(out / TRACES).records if r.agent.startswith("human:")]
    assert h.median_seconds == statistics.median(seconds)
    assert h.agents_on_same_tasks == {"noop": 0.0, "reference": 1.0}
    assert "humans" in card.policy


def test_people_are_never_pooled_into_the_agents_scores(run):
    _, before, card, _ = run
    assert before.humans is None and "humans" not in before.policy
    assert [a.model_dump() for a in card.agents] == [a.model_dump() for a in before.agents]


def test_score_shows_the_human_row_beside_the_agents(run):
    out, _, card, _ = run
    result = CliRunner().invoke(app, ["score", str(out)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    # the terminal table's width follows the terminal the test process has: check its cells, not its layout
    assert "human" in result.output and "people" in result.output and "0.667" in result.output
    md = (out / SCORECARD_MD).read_text()
    assert "| human (2 people) | 2 | 3 | 0 | 0.667 [0.21, 0.94] (pass@1, Wilson) | — |" in md
    assert "## People (`evalsuite play`)" in md and "| reference | 1.000 |" in md
    assert json.loads((out / SCORECARD_JSON).read_text())["humans"]["attempts"] == 3


def test_a_run_folder_of_people_alone_scores(release, tmp_path):
    attempt(release, tmp_path, "Ada", playable(release.tasks())[:1], True)
    card = rescore(tmp_path)
    assert card.agents == [] and card.humans.attempts == 1 and card.humans.agents_on_same_tasks == {}
    assert console_table(card).columns[-1].header == "human (1 person)"
    assert (tmp_path / PASSK_PNG).is_file()


def counts(tasks, attrs, by):
    return Counter(attrs[t.task_id][by] for t in tasks)


def test_a_sample_covers_every_slice_value_in_proportion_and_is_reproducible(ap):
    tasks = playable(ap.tasks)
    attrs = {r["task_id"]: r for r in map(_plain, task_attributes(tasks).to_dict("records"))}
    largest = max(len(counts(tasks, attrs, by)) for by in SLICES)
    plan = sample_plan(tasks, largest, seed=0)
    for by in SLICES:
        assert set(counts(plan, attrs, by)) == set(counts(tasks, attrs, by)), by
    for n in (10, 20):
        plan = sample_plan(tasks, n, seed=0)
        assert len({t.task_id for t in plan}) == n
        for by in SLICES:
            share = counts(tasks, attrs, by)
            got = counts(plan, attrs, by)
            assert all(abs(got[v] - share[v] * n / len(tasks)) <= 1 for v in share), (by, got, share)
    assert sample_plan(tasks, 10, seed=0) == sample_plan(tasks, 10, seed=0)
    assert sample_plan(tasks, 10, seed=0) != sample_plan(tasks, 10, seed=1)
    assert len(sample_plan(tasks, 1000)) == len(tasks)
