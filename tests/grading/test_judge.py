"""The NL_ASSERTION judge against a scripted OpenAI-compatible endpoint: it is asked on its pinned model, prompt,
temperature and seed, its answer decides the basis, a reply it cannot read is an error, and a trial run on the
trial engine (sync and async) records the judgement with the other bases."""
from __future__ import annotations

import json
from contextlib import ExitStack

import pytest
from scripted_model import reply, run_async, serve_staged

from evalsuite.grading import judge
from evalsuite.grading.grader import grade_trial
from evalsuite.grading.reward_bases import grade_bases, judge_trial
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import run_trial
from tests.grading.retail_bases import ROOT, act, basis

TOLD = "There are 10 t-shirt options available."


def answer(*met: bool) -> dict:
    """A staged judge reply: one result per assertion, in order."""
    results = [{"expectation": i, "reasoning": f"reason {i}", "met": m} for i, m in enumerate(met, 1)]
    return reply({"content": json.dumps({"results": results})})


@pytest.fixture
def judged(monkeypatch):
    """serve(*replies): a judge endpoint answering the staged replies, EVALSUITE_JUDGE_BASE_URL pointing at it."""
    with ExitStack() as stack:
        def serve(*replies):
            staged = stack.enter_context(serve_staged(list(replies)))
            monkeypatch.setenv(judge.BASE_URL_VAR, staged.url)
            return staged

        yield serve


def grade_task_4(retail, task, said, final=""):
    """Task 4's gold calls and `said`, graded with the judge as a trial is (judge_trial, then grade_bases)."""
    trial = act(retail, task, task.evaluation_criteria.actions, said=said)
    verdict = grade_trial(trial, final, task.goal_state, task.role, task.forbidden)
    return grade_bases(task, verdict, trial, None, final, judged=judge_trial(task, trial.trace, final))


def test_the_judge_is_asked_on_its_pinned_settings_and_decides_the_basis(retail, retail_tasks, judged):
    task = retail_tasks["4"]
    staged = judged(answer(True))
    bases = grade_task_4(retail, task, [TOLD])
    nl = basis(bases, "NL_ASSERTION")
    assert (nl.status, bases.reward) == ("pass", "pass") and nl.checks[0].detail == "reason 1"
    sent = staged.seen[0]
    pinned = task.evaluation_criteria.judge
    assert (sent["model"], sent["temperature"], sent["seed"]) == (pinned.model, pinned.temperature, pinned.seed)
    assert (pinned.model, pinned.temperature, pinned.seed) == ("gpt-4.1-2025-04-14", 0.0, 0)
    assert pinned.prompt_sha256 == judge.PROMPT_SHA256 and sent["messages"][0]["content"] == judge.SYSTEM
    user = sent["messages"][1]["content"]
    assert f"agent: {TOLD}" in user and "agent tool call exchange_delivered_order_items" not in user
    assert "agent tool call modify_pending_order_items(" in user  # the calls and what they returned
    assert "1. Agent should tell the user that there are 10 t-shirt options available." in user
    assert bases.judgement.response_model == pinned.model and bases.judgement.settings == pinned


def test_an_assertion_the_judge_finds_unmet_fails_the_reward(retail, retail_tasks, judged):
    judged(answer(False))
    bases = grade_task_4(retail, retail_tasks["4"], ["Sorry, I cannot say."])
    assert basis(bases, "NL_ASSERTION").status == "fail" and basis(bases, "DB").status == "pass"
    assert bases.reward == "fail"  # the state is right; the agent failed on what the judge checks


@pytest.mark.parametrize("content, error", [
    ("I think it is fine.", "the judge's reply is not the JSON asked for"),
    (json.dumps({"results": []}), r"the judge answered expectations \[\], asked for 1..1"),
    (json.dumps({"results": [{"expectation": 2, "met": True}]}), r"answered expectations \[2\]"),
])
def test_a_reply_out_of_form_is_an_error_never_a_verdict(retail, retail_tasks, judged, content, error):
    judged(reply({"content": content}))
    with pytest.raises(judge.JudgeError, match=error):
        grade_task_4(retail, retail_tasks["4"], [TOLD])


def test_a_fenced_reply_is_read(retail, retail_tasks, judged):
    judged(reply({"content": "```json\n" + json.dumps({"results": [{"expectation": 1, "met": True}]}) + "\n```"}))
    assert grade_task_4(retail, retail_tasks["4"], [TOLD]).reward == "pass"


def test_a_suite_that_pinned_another_prompt_is_refused(retail, retail_tasks, judged):
    judged(answer(True))
    crit = retail_tasks["4"].evaluation_criteria
    other = retail_tasks["4"].model_copy(update={"evaluation_criteria": crit.model_copy(
        update={"judge": crit.judge.model_copy(update={"prompt_sha256": "0" * 64})})})
    with pytest.raises(judge.JudgeError, match="the suite pins 000000000000, this evalsuite's judge prompt is"):
        grade_task_4(retail, other, [TOLD])


def test_no_endpoint_means_no_request_and_not_graded(retail, retail_tasks, monkeypatch):
    monkeypatch.delenv(judge.BASE_URL_VAR, raising=False)
    assert judge.endpoint() is None
    bases = grade_task_4(retail, retail_tasks["4"], [TOLD])
    assert basis(bases, "NL_ASSERTION").status == "not_graded" and bases.judgement is None


def test_a_trial_records_its_bases_and_the_judgement(retail, retail_tasks, judged):
    staged = judged(answer(True))
    task = retail_tasks["4"]
    result = run_trial(retail, task, make_agent("reference"))
    assert result.passed and result.bases.reward == "pass"  # the reference answer says "10"
    assert [b.basis for b in result.bases.bases] == ["DB", "ENV_ASSERTION", "COMMUNICATE", "ACTION", "NL_ASSERTION"]
    assert result.bases.judgement.results[0].met and len(staged.seen) == 1
    again = type(result).model_validate_json(result.model_dump_json())  # what traces.jsonl stores and reads back
    assert again.bases == result.bases
    plain = run_trial(retail, task.model_copy(update={"evaluation_criteria": None}), make_agent("reference"))
    assert plain.bases is None and "bases" not in plain.model_dump_json()  # other suites' records are unchanged


def test_an_agent_on_the_event_loop_is_judged_without_blocking_it(retail, retail_tasks, judged, endpoint):
    """arun_trial: an LLM user and an OpenAI agent on the scripted model endpoint, then the judge on its own."""
    endpoint.script = [{"content": "How many t-shirt options are there?"}, {"content": TOLD},
                       {"content": "###STOP###"}]
    staged = judged(answer(True))
    agent = make_agent("openai:agent-model")
    result = run_async(retail, retail_tasks["4"], agent)
    assert result.outcome in ("pass", "fail") and result.bases.judgement is not None
    transcript = staged.seen[0]["messages"][1]["content"]
    assert "customer: How many t-shirt options are there?" in transcript and f"agent: {TOLD}" in transcript
    assert basis(result.bases, "COMMUNICATE").status == "pass"  # "10" in what the agent said


def test_the_pinned_prompt_is_the_one_documented():
    page = (ROOT / "docs/importers/reward-bases.md").read_text()
    assert judge.PROMPT_SHA256 in page and judge.VERSION in page
    assert all(line in page for line in judge.SYSTEM.splitlines() if line)
