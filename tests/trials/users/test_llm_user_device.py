"""The LLM user holds its phone: asked to toggle airplane mode, it calls the phone's tool (function calling), the
phone changes, the call is traced as the user's, the tool's output goes back to its model, and it speaks after
reading it; on both the synchronous and the event-loop path, with a bound on the tool rounds of one turn; and a
dual-control task with an LLM user is solved end to end."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from scripted_model import Always, run_async

from evalsuite.core.records import Simulator, UserScenario
from evalsuite.domains.mobile_service.generate import sample_world
from evalsuite.domains.tau2_telecom import LINK, ROLE, USER_DOMAIN, build_worlds, from_toml
from evalsuite.trials.agents.endpoint import Endpoint
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.model_client import client_for, close_clients, resolve
from evalsuite.trials.users import Conversation, SimulatedUser
from evalsuite.trials.users.base import DEVICE_SEQ
from evalsuite.trials.users.dual import make_user, user_role
from evalsuite.trials.users.simulator import MAX_TOOL_ROUNDS, STUCK
from evalsuite.worlds.domain import CheckInput
from evalsuite.worlds.link import connect

SRC = Path(__file__).resolve().parents[3] / "third_party" / "tau2_telecom"
SPEC = (SRC / "TOOLS_SPEC.md").read_text()
# TOOLS_SPEC.md §8: a write's output is `<message>\nStatus Bar: <bar>`, toggle_airplane_mode's message `Airplane Mode
# is now ON.`; §9.6: the bar with airplane mode on
AIRPLANE_ON = "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
ASK = "Please toggle airplane mode and tell me what you see."
SAID = "It says airplane mode is on now, and there's a little plane in the corner."
SCENARIO = UserScenario(persona="easy", instructions="Your phone shows No Service.",
                        simulator=Simulator(model="sim-user", version="v1", temperature=0.0, seed=5))


def _call(tool: str, call_id: str = "u1", **arguments) -> dict:
    return {"content": None, "tool_calls": [{"id": call_id, "type": "function",
                                             "function": {"name": tool, "arguments": json.dumps(arguments)}}]}


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    return build_worlds(from_toml(SRC / "db.toml"), from_toml(SRC / "user_db.toml"),
                        tmp_path_factory.mktemp("telecom") / "world.sqlite")


@pytest.fixture
def phone(worlds):
    """The customer's phone, freshly reset, linked to the carrier's world as in a trial."""
    agent, device = worlds[0].reset(ROLE), worlds[1].reset(user_role(USER_DOMAIN))
    connect(agent, device, LINK)
    return device


def airplane_on(device) -> bool:
    check = USER_DOMAIN.checks["assert_airplane_mode_status"]
    return check(CheckInput(end=device.db, seed=device.world.pristine_db, trace=[], final_message="",
                            params={"expected_status": True})).passed


def _assert_toggled_and_grounded(device, seen: list[dict], trace) -> None:
    """The phone changed, by the user's call; the model got the tools, then the tool's output, then it spoke."""
    assert all(quote in SPEC for quote in ("`<message>\\nStatus Bar: <bar>`", "`Airplane Mode is now ON.`",
                                           "`✈️ Airplane Mode | 🔋 80%`"))
    assert airplane_on(device)
    assert [(e.tool, e.actor, e.outcome, e.result) for e in device.trace] == [
        ("toggle_airplane_mode", "user", "ok", AIRPLANE_ON)]
    first, second = seen
    assert {t["function"]["name"] for t in first["tools"]} == set(USER_DOMAIN.tools)
    assert first["tool_choice"] == "auto" and "tools" in first["messages"][0]["content"]
    assert first["messages"][-1] == {"role": "user", "content": ASK}
    asked, answered = second["messages"][-2:]
    assert asked["role"] == "assistant" and asked["tool_calls"][0]["function"]["name"] == "toggle_airplane_mode"
    assert answered == {"role": "tool", "tool_call_id": "u1", "content": AIRPLANE_ON}
    assert [(e.actor, e.arguments["text"], e.arguments[DEVICE_SEQ]) for e in trace] == [
        ("agent", ASK, 0), ("user", SAID, 1)]  # the user's call placed between the two messages


def test_the_llm_user_toggles_airplane_mode_on_its_phone_and_reports_the_output(phone, endpoint):
    assert not airplane_on(phone)  # user_db.toml: airplane_mode = false
    endpoint.script = [_call("toggle_airplane_mode"), {"content": SAID}]
    user, trace = SimulatedUser(SCENARIO, device=phone), []
    assert Conversation(user, trace, phone).reply(ASK) == SAID
    _assert_toggled_and_grounded(phone, endpoint.seen, trace)
    assert user.messages[-1] == {"role": "assistant", "content": SAID}


def test_the_llm_user_uses_its_phone_on_the_event_loop_path_too(phone, endpoint):
    endpoint.script = [_call("toggle_airplane_mode"), {"content": SAID}]
    user, trace = SimulatedUser(SCENARIO, device=phone), []
    talk = Conversation(user, trace, phone)

    async def talking():
        talk.use_client(client_for(resolve(Endpoint(api_key="sk-bound"))))
        try:
            return await talk.areply(ASK)
        finally:
            await close_clients()

    assert asyncio.run(talking()) == SAID
    _assert_toggled_and_grounded(phone, endpoint.seen, trace)
    assert [c.model for c in user.usage.model_calls] == ["sim-user"] * 2  # both requests are the user's own


def test_a_user_still_calling_tools_after_the_bound_says_it_is_stuck(phone, endpoint):
    endpoint.script = Always(_call("check_status_bar"))
    user = SimulatedUser(SCENARIO, device=phone)
    assert MAX_TOOL_ROUNDS == 10 and user.reply("What does your status bar show?") == STUCK
    assert len(endpoint.seen) == MAX_TOOL_ROUNDS and len(phone.trace) == MAX_TOOL_ROUNDS
    assert {e.actor for e in phone.trace} == {"user"}
    # the next turn asks the model again, from a conversation that ended the turn in the user's words
    endpoint.script = [{"content": "OK."}]
    endpoint.seen.clear()
    assert user.reply("Let's try something else.") == "OK."
    assert endpoint.seen[0]["messages"][-2:] == [{"role": "assistant", "content": STUCK},
                                                 {"role": "user", "content": "Let's try something else."}]


def test_a_user_without_a_phone_is_offered_no_tools(endpoint):
    endpoint.script = [{"content": "My data is gone."}]
    assert SimulatedUser(SCENARIO).reply() == "My data is gone."
    assert "tools" not in endpoint.seen[0] and "tool_choice" not in endpoint.seen[0]


class PlanAndUser(list):
    """One endpoint for both sides: the agent's requests work the task's plan (a user step asked for in words),
    the user's (its system prompt is the simulator's) call the phone tool the agent asked for, then repeat its
    output."""

    def __init__(self, endpoint, task):
        super().__init__()
        self.endpoint, self.task = endpoint, task

    def __getitem__(self, i):
        messages = self.endpoint.seen[i]["messages"]
        if messages[0]["content"].startswith("You are a customer"):
            return self._user(messages)
        done = sum(1 for m in messages if m["role"] == "assistant")
        plan = self.task.solution_calls()
        if done >= len(plan):
            return {"content": self.task.reference_answer}
        call = plan[done]
        if call.actor == "user":
            return {"content": f"Please {call.tool.replace('_', ' ')} on your phone."}
        return _call(call.tool, f"c{done}", **call.arguments)

    def _user(self, messages):
        if messages[-1]["role"] == "tool":
            return {"content": f"Done. My phone says: {messages[-1]['content']}"}
        asked = [c for c in self.task.solution_calls() if c.actor == "user"
                 and c.tool.replace("_", " ") in messages[-1]["content"]]
        if asked:
            return _call(asked[0].tool, **asked[0].arguments)
        return {"content": "###STOP###" if len(messages) > 2 else "My phone has stopped working properly."}


def test_a_dual_control_task_with_an_llm_user_is_solved(endpoint, tmp_path):
    """Before the user held its phone, an LLM user could never carry out the agent's steps on it."""
    world, gen = sample_world(tmp_path / "world.sqlite", n=6, max_subtasks=1)
    task = next(t for t in gen.tasks if any(c.actor == "user" for c in t.solution_calls()))
    task = task.model_copy(update={"user_scenario": task.user_scenario.model_copy(
        update={"simulator": SCENARIO.simulator, "script": None})})
    assert isinstance(make_user(task, None), SimulatedUser)
    endpoint.script = PlanAndUser(endpoint, task)
    result = run_async(world, task, make_agent("openai:scripted-model"))
    assert result.passed, result.verdict.failures()
    asked = [c.tool for c in task.solution_calls() if c.actor == "user"]
    assert [(e.tool, e.actor) for e in result.user_trace] == [(t, "user") for t in asked]
