"""The OpenAI-compatible agent completes mobile-service tasks against a local scripted endpoint, talking to
the scripted user: it asks for every step on the phone, the user carries it out, both worlds are graded."""
from __future__ import annotations

import json

import pytest
from scripted_model import run_async

from evalsuite.domains.mobile_service.generate import sample_world
from evalsuite.scoring.modes import with_mode
from evalsuite.trials.agents.factory import make_agent


@pytest.fixture(scope="module")
def ms(tmp_path_factory):
    return sample_world(tmp_path_factory.mktemp("ms") / "world.sqlite", n=12, max_subtasks=2)


class FollowsThePlan(list):
    """A fake model that works a task's plan: one agent call or one request to the user per reply, then a
    closing message; which step is next follows from the assistant turns in the request it is answering."""

    def __init__(self, endpoint, task):
        super().__init__()
        self.endpoint, self.task = endpoint, task

    def __getitem__(self, i):
        body = self.endpoint.seen[i]
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        plan = self.task.solution_calls()
        if done >= len(plan):
            return {"content": f"{self.task.reference_answer} Anything else?"}
        call = plan[done]
        if call.actor == "user":
            return {"content": f"Please {call.tool.replace('_', ' ')} on your phone."}
        return {"content": None, "tool_calls": [{"id": f"c{done}", "type": "function", "function": {
            "name": call.tool, "arguments": json.dumps(call.arguments)}}]}


def test_the_openai_agent_solves_tasks_with_the_scripted_user(ms, endpoint):
    world, gen = ms
    tasks = [t for t in gen.tasks if any(c.actor == "user" for c in t.solution_calls())
             and any(c.actor is None for c in t.solution_calls())][:3]
    assert tasks
    for task in tasks:
        endpoint.seen.clear()
        endpoint.script = FollowsThePlan(endpoint, task)
        result = run_async(world, task, make_agent("openai:scripted-model"))
        assert result.passed, (task.task_id, result.verdict.failures())
        asked = [c.tool for c in task.solution_calls() if c.actor == "user"]
        assert [e.tool for e in result.user_trace] == asked and {e.actor for e in result.user_trace} == {"user"}
        last = endpoint.seen[-1]["messages"]
        # the agent heard the user's opening and each result the user read off their phone
        assert last[1]["content"] == task.user_scenario.script.opening
        heard = [m["content"] for m in last[2:] if m["role"] == "user"]
        assert all(any(e.result in h for h in heard) for e in result.user_trace)
        offered = {t["function"]["name"] for t in endpoint.seen[0]["tools"]}
        assert not offered & set(asked)  # dual control: the phone's tools are not the agent's


def test_without_the_user_the_same_agent_holds_the_phone_tools(ms, endpoint):
    world, gen = ms
    task = with_mode([next(t for t in gen.tasks if any(c.actor == "user" for c in t.solution_calls()))], "no_user")[0]
    calls = task.solution_calls()
    endpoint.script = [{"content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
        "name": c.tool, "arguments": json.dumps(c.arguments)}} for i, c in enumerate(calls)]},
        {"content": task.reference_answer}]
    result = run_async(world, task, make_agent("openai:scripted-model"))
    assert result.passed, result.verdict.failures()
    first = endpoint.seen[0]
    assert first["messages"][1]["content"] == task.trigger.text  # the ticket, not a user
    assert {c.tool for c in calls} <= {t["function"]["name"] for t in first["tools"]}


def test_in_oracle_plan_mode_the_agent_is_given_the_steps(ms, endpoint):
    world, gen = ms
    task = with_mode([gen.tasks[0]], "oracle_plan")[0]
    endpoint.script = FollowsThePlan(endpoint, task)
    assert run_async(world, task, make_agent("openai:scripted-model")).passed
    system = endpoint.seen[0]["messages"][0]["content"]
    assert "Resolution steps, in order:" in system
    calls = task.solution_calls()
    user = next(i for i, c in enumerate(calls, 1) if c.actor == "user")  # τ²-bench's wording, arguments shown
    assert f"[Step {user}] Instruct the user to perform the following action: {calls[user - 1].tool}(device_id=" \
        in system
    assert all(f"{c.tool}(" in system for c in calls)
