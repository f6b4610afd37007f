"""A scorecard of retail tasks carrying τ²-bench criteria shows each reward basis and the reward, per agent: the
reference passes the end state, doing nothing fails it, and NL_ASSERTION is not graded until a judge answers."""
from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from scripted_model import reply, serve_staged

from evalsuite.core.identity import RunIdentity
from evalsuite.domains.ref import WorldRef
from evalsuite.grading import judge
from evalsuite.scoring.render import console_table, to_markdown
from evalsuite.scoring.scorecard import build_scorecard
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.harness import TrialSettings, run_trials
from tests.grading.retail_bases import retail_tasks, retail_world

# 0: an exchange, NL in its basis with no assertions; 4: NL assertions and communicate_info; 33: DB only;
# 10: read-only gold (doing nothing keeps the state)
TASKS = ["0", "4", "10", "33"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    world = retail_world(tmp_path_factory.mktemp("tau2") / "world.sqlite")
    tasks = [retail_tasks()[t] for t in TASKS]
    identity = RunIdentity(suite="tau2_retail", suite_version="t", task_set_sha256=task_set_sha256(tasks),
                           seed_sha256=world.seed_sha256, environment_image=world.domain.image,
                           tool_schemas_sha256=world.domain.tool_schemas_sha256())
    return world, tasks, identity


def score(setup, agents):
    world, tasks, identity = setup
    records = run_trials(WorldRef.from_world(world), tasks, agents, 2, TrialSettings(identity, workers=1))
    return build_scorecard(records, tasks, None, resamples=50)


def rows(card, agent) -> dict[str, tuple]:
    found = next(a for a in card.bases.agents if a.agent == agent)
    return {r.basis: (r.tasks, r.passed, r.failed, r.not_graded, r.tasks_scored,
                      r.curve[0].pass_hat if r.curve else None, (r.other_passed, r.other_trials)) for r in found.rows}


def test_each_basis_is_scored_apart_and_nl_is_not_graded_without_a_judge(setup, monkeypatch):
    monkeypatch.delenv(judge.BASE_URL_VAR, raising=False)
    card = score(setup, ["reference", "noop"])
    #            tasks, pass, fail, not graded, tasks scored, pass^1, outside the basis (pass / trials)
    assert rows(card, "reference") == {
        "reward": (4, 6, 0, 2, 3, 1.0, (0, 0)),  # task 4 waits for the judge
        "DB": (4, 8, 0, 0, 4, 1.0, (0, 0)),
        "COMMUNICATE": (0, 0, 0, 0, 0, None, (2, 2)),  # task 4's "10" is in the reference answer
        "ACTION": (0, 0, 0, 0, 0, None, (8, 8)),
        "NL_ASSERTION": (1, 0, 0, 2, 0, None, (0, 0)),  # only task 4 asks something of the judge
    }
    noop = rows(card, "noop")
    assert noop["reward"] == (4, 2, 6, 0, 4, 0.25, (0, 0))  # DB fails on 0, 4, 33: 0 times not graded is 0
    assert noop["DB"][:3] == (4, 2, 6) and noop["ACTION"][6] == (0, 8) and noop["COMMUNICATE"][6] == (0, 2)
    assert noop["NL_ASSERTION"][:4] == (1, 0, 0, 2)
    text = to_markdown(card)
    assert "## Reward bases" in text and "| reference | NL_ASSERTION | 1 | 0 / 0 / 2 | 0 | — |" in text
    assert "| noop | reward | 4 | 2 / 6 / 0 | 4 | 0.250" in text and "gpt-4.1-2025-04-14" in text
    assert "reward_bases" in card.policy
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(console_table(card))
    shown = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]  # what `evalsuite run` prints
             for line in console.export_text().splitlines() if line.startswith("│")}
    assert shown["NL_ASSERTION pass^1"] == ["— (2 not graded)"] * 2  # noop, reference
    assert shown["reward pass^1"] == ["0.250", "1.000 (2 not graded)"]
    assert "COMMUNICATE pass^1" not in shown  # counted by no task: only on the Markdown card, as a diagnostic
    again = type(card).model_validate_json(card.model_dump_json())  # scorecard.json reads back
    assert again.bases == card.bases


def test_with_a_judge_the_assertion_decides_pass_k(setup, monkeypatch):
    verdicts = [{"results": [{"expectation": 1, "met": met, "reasoning": "r"}]} for met in (True, False)]
    with serve_staged([reply({"content": json.dumps(v)}) for v in verdicts]) as staged:
        monkeypatch.setenv(judge.BASE_URL_VAR, staged.url)
        card = score(setup, ["reference"])
    assert len(staged.seen) == 2  # task 4's two trials; the other tasks have nothing to judge
    got = rows(card, "reference")
    assert got["NL_ASSERTION"][:5] == (1, 1, 1, 0, 1) and got["reward"][:5] == (4, 7, 1, 0, 4)
    nl, reward = (next(r for r in card.bases.agents[0].rows if r.basis == b) for b in ("NL_ASSERTION", "reward"))
    assert [p.pass_hat for p in nl.curve] == [0.5, 0.0]  # task 4 passes 1 of 2 trials: pass^2 is 0
    assert [p.pass_hat for p in reward.curve] == [0.875, 0.75]


def test_a_suite_without_criteria_has_no_bases_section(ap):
    world, tasks = ap.world, ap.tasks[:2]
    identity = RunIdentity(suite="ap", suite_version="t", task_set_sha256=task_set_sha256(tasks),
                           seed_sha256=world.seed_sha256, environment_image=world.domain.image,
                           tool_schemas_sha256=world.domain.tool_schemas_sha256())
    records = run_trials(WorldRef.from_world(world), tasks, ["reference"], 1, TrialSettings(identity, workers=1))
    card = build_scorecard(records, tasks, None, resamples=20)
    assert card.bases is None and "bases" not in json.loads(card.model_dump_json())
    assert "## Reward bases" not in to_markdown(card) and "reward_bases" not in card.policy
