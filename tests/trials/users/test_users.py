"""The user-simulator interface: the scripted user is exactly as forthcoming as its script, the LLM user is
pinned, every message lands in the trace, and simulator settings keep runs apart."""
from __future__ import annotations

import asyncio

import pytest

from evalsuite.audit.users import audit_users
from evalsuite.core.identity import RunIdentity
from evalsuite.core.records import Simulator, UserScenario
from evalsuite.domains.mobile_service.generate import PIN, sample_world
from evalsuite.domains.ref import WorldRef
from evalsuite.scoring.scorecard import build_scorecard
from evalsuite.trials.agents.endpoint import Endpoint
from evalsuite.trials.agents.model_client import client_for, close_clients, resolve
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.users import Conversation, ScriptedUser, SimulatedUser
from evalsuite.trials.users.dual import user_role, user_world


@pytest.fixture(scope="module")
def ms(tmp_path_factory):
    world, gen = sample_world(tmp_path_factory.mktemp("ms") / "world.sqlite", n=9, max_subtasks=1)
    return world, gen.tasks


def _user(ms, persona="none"):
    world, tasks = ms
    task = next(t for t in tasks if t.user_scenario.persona == persona)
    side = user_world(world)
    device = side.reset(user_role(side.domain))
    return task, ScriptedUser(task.user_scenario, device), device


def test_the_scripted_user_reveals_only_when_asked_and_never_the_pin(ms):
    task, user, device = _user(ms, "hard")
    line = task.goal_state.assertions[0].key.get("line_id") if task.goal_state.assertions else None
    opening = user.reply()
    assert opening == task.user_scenario.script.opening and "L-" not in opening  # a hard persona says little
    assert user.reply("Tell me your PIN please.") == "I'm not sure what you need from me. What should I do?"
    said = user.reply("Which line number is this about?")
    assert task.user_scenario.script.disclosures[0].value in said and (line is None or line in said)
    assert not any(PIN in (t.user or "") for t in user.log) and device.trace == []


def test_the_scripted_user_acts_on_its_phone_only_when_asked(ms):
    task, user, device = _user(ms)
    user.reply()
    user.reply("Thanks, one moment while I look at your account.")
    assert device.trace == []  # nothing asked, nothing done
    said = user.reply("Could you turn off airplane mode and tell me what the status bar shows?")
    assert [e.tool for e in device.trace] == ["check_status_bar", "turn_off_airplane_mode"]
    assert all(e.actor == "user" for e in device.trace) and "airplane mode is off" in said
    assert user.reply("Your issue is resolved. Anything else?") is None  # a closing remark ends it


def test_the_user_leaves_after_idle_turns_and_the_conversation_is_in_the_trace(ms):
    task, user, _ = _user(ms)
    trace = []
    talk = Conversation(user, trace)
    talk.reply()
    assert talk.reply("Hmm.") is not None and talk.reply("Hmm.") is None  # max_idle_turns = 2
    turns = [(e.actor, e.kind) for e in trace]
    assert turns == [("agent", "message"), ("user", "message")] * 2 + [("agent", "message")]
    assert trace[1].arguments["text"] == task.user_scenario.script.opening


def test_the_llm_user_runs_on_its_pinned_settings(endpoint):
    endpoint.script = [{"content": "My data is gone."}, {"content": "###STOP###"}]
    scenario = UserScenario(persona="hard", instructions="Your data stopped working.",
                            simulator=Simulator(model="sim-user", version="v1", temperature=0.3, seed=11))
    user = SimulatedUser(scenario)
    assert user.reply() == "My data is gone." and user.reply("Fixed?") is None
    assert user.settings == scenario.simulator
    first = endpoint.seen[0]
    assert (first["model"], first["temperature"], first["seed"]) == ("sim-user", 0.3, 11)
    assert "Your data stopped working." in first["messages"][0]["content"]


def test_the_llm_user_answers_an_agent_on_an_event_loop_through_the_bound_client(endpoint):
    """areply: the request goes through the ModelClient the agent bound, the user keeps its own calls, and the
    conversation is in the trace as with reply."""
    endpoint.script = [{"content": "My data is gone."}, {"content": "###STOP###"}]
    scenario = UserScenario(persona="hard", instructions="Your data stopped working.",
                            simulator=Simulator(model="sim-user", version="v1", temperature=0.3, seed=11))
    user, trace = SimulatedUser(scenario), []
    talk = Conversation(user, trace)

    async def talking():
        client = client_for(resolve(Endpoint(api_key="sk-bound")))
        talk.use_client(client)
        try:
            return [await talk.areply(), await talk.areply("Fixed?")]
        finally:
            await close_clients()

    assert asyncio.run(talking()) == ["My data is gone.", None] and talk.turns == 2
    assert [(e.actor, e.arguments["text"]) for e in trace] == [
        ("agent", "Hi! How can I help you today?"), ("user", "My data is gone."), ("agent", "Fixed?")]
    assert [c.model for c in user.usage.model_calls] == ["sim-user"] * 2
    assert {h["Authorization"] for h in endpoint.headers_seen} == {"Bearer sk-bound"}  # the bound client's key
    assert (endpoint.seen[0]["temperature"], endpoint.seen[0]["seed"]) == (0.3, 11)


def test_a_scripted_user_answers_areply_as_it_answers_reply(ms):
    task, user, _ = _user(ms)
    talk = Conversation(user, [])
    assert asyncio.run(talk.areply()) == task.user_scenario.script.opening and talk.turns == 1


def test_simulator_settings_are_in_every_record_and_runs_under_two_are_never_pooled(ms):
    world, tasks = ms
    ref = WorldRef.from_world(world)
    records = []
    for version in ("v1", "v2"):
        sim = Simulator(model="scripted-user", version=version, kind="scripted")
        pinned = [t.model_copy(update={"user_scenario": t.user_scenario.model_copy(update={"simulator": sim})})
                  for t in tasks]
        from evalsuite.tasks.taskfile import task_set_sha256
        identity = RunIdentity(suite="ms", suite_version="t", task_set_sha256=task_set_sha256(pinned),
                               seed_sha256=world.seed_sha256, environment_image=world.domain.image,
                               tool_schemas_sha256=world.domain.tool_schemas_sha256(), simulator=sim)
        run = run_trials(ref, pinned, ["reference"], 1, TrialSettings(identity, workers=1))
        assert all(r.simulator == sim and r.passed for r in run)
        records += run
    assert records[0].identity_sha256 != records[-1].identity_sha256
    with pytest.raises(ValueError, match="records mix several values"):
        build_scorecard(records, tasks, None, resamples=50)


def test_the_audit_finds_every_scripted_user_keeps_to_its_script(ms):
    world, tasks = ms
    report = audit_users(world, tasks)
    assert len(report.scripted) == len(tasks) and report.scripted_ok
    assert all(f.actions > 0 for f in report.scripted)  # the probes did make the users act when asked
