"""The OpenAI-compatible agent against a local endpoint that speaks the chat-completions protocol."""
import json

from scripted_model import run_async

from evalsuite.trials.agents.factory import make_agent


def _tool_calls(calls):
    return {"content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": c.tool, "arguments": json.dumps(c.arguments)}}
        for i, c in enumerate(calls)]}


def test_a_model_that_follows_the_reference_passes_and_sees_no_goal(ap, endpoint):
    task = next(t for t in ap.tasks if t.category == "price_variance")
    endpoint.script = [_tool_calls(task.solution_calls()), {"content": task.reference_answer}]
    result = run_async(ap.world, task, make_agent("openai:scripted-model"))
    assert result.passed, result.verdict.failures()
    assert [e.tool for e in result.trace] == [c.tool for c in task.solution_calls()]
    first = endpoint.seen[0]
    assert first["model"] == "scripted-model" and first["messages"][1]["content"] == task.trigger.text
    assert {t["function"]["name"] for t in first["tools"]} >= {"hold_invoice", "post_payment"}
    sent = json.dumps(endpoint.seen)
    assert "goal_state" not in sent and task.goal_state.assertions[0].clause + ":" in sent  # policy text, not the goal


def test_a_model_that_posts_a_payment_fails_and_its_denied_call_is_traced(ap, endpoint):
    task = ap.tasks[0]
    from evalsuite.core.records import ToolCall
    invoice_id = task.goal_state.assertions[0].key["invoice_id"]
    pay = ToolCall(tool="post_payment", arguments={"invoice_id": invoice_id, "amount": "10.00"})
    endpoint.script = [_tool_calls([pay]), {"content": "paid it"}]
    result = run_async(ap.world, task, make_agent("openai:scripted-model"))
    assert not result.passed and result.trace[0].outcome == "denied"
    assert "no forbidden call" in {c.name for c in result.verdict.failures()}
    tool_reply = endpoint.seen[1]["messages"][-1]
    assert tool_reply["role"] == "tool" and tool_reply["content"].startswith("Error:")


def test_a_conversational_task_talks_to_the_pinned_user_simulator(ap, endpoint):
    """The user simulator runs on the task's pinned model; the agent ends when the user says stop."""
    from evalsuite.core.records import Simulator, Trigger, UserScenario

    base = next(t for t in ap.tasks if t.category == "price_variance")
    task = base.model_copy(deep=True, update={
        "trigger": Trigger(type="conversation", text="caller about a blocked invoice"),
        "user_scenario": UserScenario(persona="terse", instructions="Ask about the blocked invoice.",
                                      simulator=Simulator(model="sim-user", version="v1", temperature=0.0))})
    by_model = {"sim-user": [{"content": "My invoice is blocked, can you fix it?"}, {"content": "###STOP###"}],
                "scripted-model": [_tool_calls(task.solution_calls()), {"content": task.reference_answer}]}
    counters = {"sim-user": 0, "scripted-model": 0}

    class Routed(list):
        def __getitem__(self, i):
            model = endpoint.seen[i]["model"]
            counters[model] += 1
            return by_model[model][counters[model] - 1]

    endpoint.script = Routed()
    result = run_async(ap.world, task, make_agent("openai:scripted-model"))
    assert result.passed, result.verdict.failures()
    user_calls = [b for b in endpoint.seen if b["model"] == "sim-user"]
    assert len(user_calls) == 2 and user_calls[0]["temperature"] == 0.0
    assert "Ask about the blocked invoice." in user_calls[0]["messages"][0]["content"]
    agent_first = next(b for b in endpoint.seen if b["model"] == "scripted-model")
    assert agent_first["messages"][1]["content"] == "My invoice is blocked, can you fix it?"


def test_the_key_comes_from_OPENAI_API_KEY(ap, endpoint):
    """As the openai SDK reads it: a real endpoint gets the user's key, not a placeholder."""
    endpoint.script = [{"content": "nothing to do"}]
    run_async(ap.world, ap.tasks[0], make_agent("openai:scripted-model"))
    assert endpoint.headers_seen[0]["Authorization"] == "Bearer test"


class ToolsOnly:
    """The part of an AgentEnv the agent's tool list reads."""

    def __init__(self, *names):
        self.tools = [{"name": n, "description": n, "parameters": {"type": "object"}} for n in names]


def test_each_trial_is_sent_its_own_tools_whichever_trial_came_before(endpoint):
    """The agent keeps the last trial's tools encoded: a trial whose tools are the same reuses them, one whose tools
    differ (another role) is sent its own, as their JSON."""
    agent = make_agent("openai:scripted-model")
    clerk, manager = ToolsOnly("get_invoice"), ToolsOnly("get_invoice", "post_payment")
    for env in (clerk, manager, clerk, clerk):
        tools = agent._encoded_tools(env)
        assert [t["function"] for t in json.loads(tools.json)] == env.tools == [t["function"] for t in tools]
    assert agent._encoded_tools(clerk) is tools
