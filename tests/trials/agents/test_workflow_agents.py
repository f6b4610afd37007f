"""The agents that do not choose their tools, on retail_support and its manager_discretion_removed variant: the
fixed workflow passes every task of both; the non-adaptive model workflow acts on the decision its model picks
(through the local endpoint, and through the scripted one for a wrong pick) and never chooses a tool."""
from __future__ import annotations

import json

import pytest
from scripted_model import run_async
from suite_support import ROOT

from evalsuite.core.identity import AgentConfig
from evalsuite.pipeline import driver
from evalsuite.releases.release import Release
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.workflow import parse_decision
from evalsuite.trials.local_model import serve_local_model
from evalsuite.trials.trial import run_trial


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    return {name: Release(driver.build(ROOT / "suites" / f"{name}.yaml", home=home).release)
            for name in ("retail_support", "retail_support_no_discretion")}


@pytest.mark.parametrize("suite", ["retail_support", "retail_support_no_discretion"])
def test_the_fixed_workflow_passes_every_task_of_both_variants(releases, suite):
    release = releases[suite]
    world, agent = release.open_world(), make_agent("workflow")
    results = [run_trial(world, t, agent, trial=i) for t in release.tasks() for i in range(t.trial_protocol.trials)]
    assert [r.task_id for r in results if not r.passed] == []
    assert all(r.measures.grounded and r.measures.authority_violations == 0 for r in results)
    handed = {r.task_id for r in results if r.measures.handed_off}
    assert ("rs-c-1001-lost-refund" in handed) == (suite == "retail_support_no_discretion")


def test_the_model_workflow_takes_its_decision_from_the_model_and_calls_no_tool_it_chose(releases, monkeypatch):
    release = releases["retail_support"]
    tasks = release.tasks()
    with serve_local_model(tasks, max_requests=len(tasks), median_ms=0) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        agent = make_agent("workflow:local")
        results = [run_async(release.open_world(), t, agent) for t in tasks]
    assert [r.task_id for r in results if not r.passed] == []
    assert all(len(r.usage.model_calls) == 1 for r in results)  # one decision per trial, never a tool choice


def test_a_wrong_decision_is_acted_on_and_its_refused_attempt_counted_apart(releases, endpoint):
    release = releases["retail_support"]
    task = next(t for t in release.tasks() if t.task_id == "rs-c-1005-no-discretion")
    endpoint.script = [{"content": json.dumps({"decision": "issue_refund", "note": "Refunded 29.28 USD."})}]
    result = run_async(release.open_world(), task, make_agent("workflow:scripted"))
    assert not result.passed and result.final_message == "Refunded 29.28 USD."
    assert result.measures.authority_violations == 1 and not result.measures.handed_off
    assert result.measures.grounded  # 29.28 was read from the purchase before the model was asked
    sent = endpoint.seen[0]
    assert "tools" not in sent and sent["response_format"]["json_schema"]["name"] == "workflow_decision"
    assert "goal_state" not in json.dumps(sent) and "reference_solution" not in json.dumps(sent)


def test_an_answer_that_is_no_listed_decision_is_the_agents_failure():
    with pytest.raises(ValueError, match="the model chose 'refund_twice', not one of a, b"):
        parse_decision('{"decision": "refund_twice", "note": ""}', {"a": "", "b": ""})
    with pytest.raises(ValueError, match="not a decision"):
        parse_decision("I would refund.", {"a": ""})


def test_workflow_model_names_a_model_workflow_config():
    assert AgentConfig.parse("workflow:gpt-x") == AgentConfig(name="workflow:gpt-x", kind="model_workflow",
                                                               model="gpt-x")
