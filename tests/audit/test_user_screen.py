"""The user-simulator audit on the telecom phone: a scripted user repeats the output of every phone tool it runs
(grounded), one that paraphrases is caught; and the automatic screen of LLM users' recorded conversations flags
a user acting unasked, stating the phone's status unseen, or leaving mid-request, and nothing in a clean one."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalsuite.audit import users as audit
from evalsuite.audit.user_review import conversations
from evalsuite.audit.user_screen import ACTED, ERROR_CLASSES, LEFT_MID_REQUEST, UNGROUNDED, screen_trial
from evalsuite.core.records import (
    Environment,
    GoalState,
    Policy,
    Provenance,
    Role,
    Simulator,
    SuiteRef,
    TaskRecord,
    Trigger,
    UserScenario,
)
from evalsuite.domains.tau2_telecom import LINK, ROLE, USER_DOMAIN, build_worlds, from_toml
from evalsuite.domains.tau2_telecom.user_script import script
from evalsuite.trials.users import Conversation, ScriptedUser
from evalsuite.trials.users.base import DEVICE_SEQ, OPENING
from evalsuite.trials.users.dual import user_role
from evalsuite.worlds.link import connect

SRC = Path(__file__).resolve().parents[2] / "third_party" / "tau2_telecom"
SCRIPTED = Simulator(model="scripted-user", version="t", kind="scripted")
LLM = Simulator(model="sim-user", version="v1", seed=3)


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    return build_worlds(from_toml(SRC / "db.toml"), from_toml(SRC / "user_db.toml"),
                        tmp_path_factory.mktemp("telecom") / "world.sqlite")


def _task(source: dict, simulator: Simulator) -> TaskRecord:
    """A telecom task as the audit reads it: its id and its user (the scripted user of tasks.json's record)."""
    return TaskRecord(
        task_id=source["id"], domain="tau2_telecom", suite=SuiteRef(name="t", version="1"),
        environment=Environment(image="tau2_telecom:1", seed_snapshot="w", seed_sha256="0" * 64), role=Role(name="a"),
        policy=Policy(doc="p", version="1", effective_from=dt.date(2025, 2, 25), clauses=[{"id": "c1", "text": "x"}]),
        trigger=Trigger(type="conversation", text="hi"), goal_state=GoalState(), reference_solution=[],
        user_scenario=UserScenario(instructions=source["user_scenario"]["instructions"]["task_instructions"],
                                   simulator=simulator, script=script(source)),
        provenance=Provenance(source_record=source["id"], outcome_verified_by="test", license_ref="MIT"))


@pytest.fixture(scope="module")
def tasks() -> list[TaskRecord]:
    """One task of each intent, one of a user abroad and one who may refuel."""
    source = json.loads((SRC / "tasks.json").read_text())
    picks = {t["id"].split("]")[0]: t for t in source}
    picks |= {"abroad": next(t for t in source if "You are currently" in t["user_scenario"]["instructions"]
                             ["known_info"]),
              "refuel": next(t for t in source if "refuel 2.0 GB" in t["user_scenario"]["instructions"]
                             ["task_instructions"])}
    return [_task(t, SCRIPTED) for t in picks.values()]


def test_the_telecom_scripted_user_repeats_every_phone_output_it_acts_on(worlds, tasks):
    report = audit.audit_users(worlds[0], tasks)
    actions = {len(t.user_scenario.script.actions) for t in tasks}
    assert len(report.scripted) == len(tasks) == 5 and report.scripted_ok
    assert all(f.grounded and f.actions in actions for f in report.scripted)  # every action was probed and ran
    assert "never acted unasked: yes; repeated the output of every device tool they ran (grounded): yes" in \
        audit.to_markdown(report)


class Paraphrasing(ScriptedUser):
    """A scripted user whose action replies are altered: it says it did it, not what the phone showed."""

    def _act(self, tool: str, arguments: dict) -> str:
        super()._act(tool, arguments)
        return "OK, done."


def test_a_scripted_user_that_paraphrases_the_phone_is_not_grounded(worlds, tasks, monkeypatch):
    monkeypatch.setattr(audit, "ScriptedUser", Paraphrasing)
    finding = audit.audit_scripted(worlds[0], tasks[0])
    assert not finding.grounded and not finding.ok and not finding.leaked and not finding.unasked
    assert len(finding.ungrounded) == finding.actions  # every turn that ran a tool
    assert "check_status_bar output 'Status Bar:" in " ".join(finding.ungrounded)
    assert "ungrounded" in audit.to_markdown(audit.UserAudit(scripted=[finding], llm_review=[]))


class Puppet:
    """A user that, per agent message, runs the given phone tools and says the given text (None: leaves)."""

    def __init__(self, device, turns: list[tuple[list[str], str | None]]):
        self.device, self.turns, self.settings = device, iter(turns), LLM

    def use_client(self, client) -> None:
        """No model."""

    def reply(self, agent_message: str = OPENING) -> str | None:
        tools, said = next(self.turns)
        for tool in tools:
            self.device.call(tool, {}, actor="user")
        return said


def converse(worlds, agent_says: list[str], user_does: list[tuple[list[str], str | None]]):
    """A conversation through the real Conversation on a fresh telecom phone: (trace, the phone's trace)."""
    agent, phone = worlds[0].reset(ROLE), worlds[1].reset(user_role(USER_DOMAIN))
    connect(agent, phone, LINK)
    trace = []
    talk = Conversation(Puppet(phone, user_does), trace, phone)
    for message in agent_says:
        if talk.reply(message) is None:
            break
    return trace, phone.trace


OPEN = (OPENING, ([], "Hi, my phone has been showing 'No Service' for the past few hours."))
CLEAN = [OPEN, ("Could you please check your status bar and tell me what it shows?", (["check_status_bar"],
                "It shows Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%.")),
         ("Thanks. Please toggle airplane mode now.", (["toggle_airplane_mode"], "Done, the signal is gone now.")),
         ("Your issue is resolved. Goodbye!", ([], None))]
CASES = {
    "clean": (CLEAN, []),
    "acted unasked": ([OPEN, ("Let me look at your account.", (["toggle_airplane_mode"], "Okay.")), CLEAN[-1]],
                      [(2, ACTED)]),
    "ungrounded": ([OPEN, ("How long has this been going on?", ([], "A few hours. My signal shows no bars at all.")),
                    CLEAN[-1]], [(2, UNGROUNDED)]),
    "left mid-request": ([OPEN, ("Could you please toggle airplane mode and tell me what happens?", ([], None))],
                         [(2, LEFT_MID_REQUEST)]),
}


@pytest.mark.parametrize("case", CASES)
def test_the_screen_flags_each_kind_of_llm_user_error_and_nothing_in_a_clean_conversation(worlds, case):
    turns, expected = CASES[case]
    trace, user_trace = converse(worlds, [a for a, _ in turns], [u for _, u in turns])
    flags = screen_trial(trace, user_trace)
    assert [(f.turn, f.check) for f in flags] == expected
    assert all(set(f.candidates) <= set(ERROR_CLASSES) for f in flags)
    assert [f.candidates for f in flags] == [["benign", "task-critical"] if c == UNGROUNDED else ["task-critical"]
                                             for _, c in expected]


def test_a_trace_whose_messages_cannot_place_the_phone_calls_is_refused(worlds):
    trace, user_trace = converse(worlds, [a for a, _ in CLEAN], [u for _, u in CLEAN])
    for event in trace:
        event.arguments.pop(DEVICE_SEQ)
    with pytest.raises(ValueError, match="device_seq"):
        screen_trial(trace, user_trace)


def test_the_screen_reaches_the_audit_markdown_and_the_review_sheet(worlds):
    turns, _ = CASES["acted unasked"]
    trace, user_trace = converse(worlds, [a for a, _ in turns], [u for _, u in turns])
    source = json.loads((SRC / "tasks.json").read_text())[0]
    llm_task = _task(source, LLM)
    record = SimpleNamespace(task_id=llm_task.task_id, agent="openai:m", trial=1, outcome="fail", trace=trace,
                             user_trace=user_trace)
    report = audit.audit_users(worlds[0], [llm_task], records=[record])
    assert (report.llm_screened, len(report.llm_flags)) == (1, 1) and report.scripted == []
    md = audit.to_markdown(report)
    assert "Automatic screen of 1 LLM-user conversation(s): 1 candidate error(s)" in md
    assert f"- {llm_task.task_id} (openai:m, trial 1) turn 2: acted unasked [task-critical]: ran " \
           "toggle_airplane_mode after 'Let me look at your account.'" in md
    (item,) = conversations([record], [llm_task])
    assert item.flags == ["turn 2: acted unasked [task-critical]: ran toggle_airplane_mode after "
                          "'Let me look at your account.'"]
