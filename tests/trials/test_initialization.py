"""A task's initialization and a dual-control link step, on two small worlds: a carrier's line and a phone."""
from __future__ import annotations

import pytest
from sqlalchemy import Column, MetaData, String, Table

from evalsuite.core.records import GoalState, Initialization, Role, ToolCall
from evalsuite.grading.grader import grade_trial
from evalsuite.trials.initialization import initialize
from evalsuite.worlds.domain import Domain, ToolContext, ToolError
from evalsuite.worlds.link import InitializationError, apply_calls, connect
from evalsuite.worlds.world import ResetError, World

agent_md, user_md = MetaData(), MetaData()
Table("lines", agent_md, Column("line_id", String, primary_key=True), Column("status", String))
Table("bills", agent_md, Column("bill_id", String, primary_key=True), Column("status", String))
Table("phone", user_md, Column("phone_id", String, primary_key=True), Column("service", String))
AGENT = Domain(name="t_carrier", version="1", metadata=agent_md)
USER = Domain(name="t_phone", version="1", metadata=user_md)
ROLE = Role(name="agent", read_tools=[], write_tools=["resume_line"])


@AGENT.helper
def suspend_for_overdue_bill(ctx: ToolContext, /, line_id, bill_id):
    ctx.run("UPDATE lines SET status = 'suspended' WHERE line_id = ?", (line_id,))
    ctx.run("INSERT INTO bills VALUES (?, 'overdue')", (bill_id,))


@AGENT.tool("write")
def resume_line(ctx: ToolContext, /, line_id):
    if not ctx.run("UPDATE lines SET status = 'active' WHERE line_id = ?", (line_id,)).rowcount:
        raise ToolError(f"no line {line_id}")
    return "resumed"


@USER.tool("write")
def reboot(ctx: ToolContext, /):
    return "rebooted"


def link(agent: ToolContext, user: ToolContext) -> None:
    """The phone has service exactly when the line is active (after every successful call)."""
    (status,) = agent.run("SELECT status FROM lines WHERE line_id = 'L1'").fetchone()
    user.run("UPDATE phone SET service = ? WHERE phone_id = 'P1'", ("connected" if status == "active" else "none",))


@pytest.fixture
def worlds(tmp_path):
    agent = World.build(AGENT, {"lines": [{"line_id": "L1", "status": "active"}]}, tmp_path / "a.sqlite")
    user = World.build(USER, {"phone": [{"phone_id": "P1", "service": "connected"}]}, tmp_path / "u.sqlite")
    return agent, user


def _start(worlds):
    agent, user = worlds[0].reset(ROLE), worlds[1].reset()
    connect(agent, user, link)
    return agent, user


def _hashes(worlds, calls):
    """The hashes both worlds have after `calls`, as an importer records them."""
    agent, user = _start(worlds)
    apply_calls(calls, agent, user)
    return agent.content_sha256(), user.content_sha256()


SUSPEND = [ToolCall(tool="suspend_for_overdue_bill", arguments={"line_id": "L1", "bill_id": "B9"})]


def test_initialization_runs_helpers_and_the_link_and_what_it_did_is_the_trials_start(worlds):
    sha, user_sha = _hashes(worlds, SUSPEND)
    agent, user = _start(worlds)
    base, user_base = initialize(Initialization(calls=SUSPEND, sha256=sha, user_sha256=user_sha), agent, user)
    assert user.row("phone", ("P1",)) == ("P1", "none")  # the link ran after the helper
    assert agent.trace == [] and user.trace == []  # no participant made these calls
    idle = grade_trial(agent, "", GoalState(), ROLE, set(), base)
    assert idle.passed, idle.failures()  # the suspension and the inserted bill are where the trial started
    assert not grade_trial(agent, "", GoalState(), ROLE, set()).passed  # graded from the seed, they are changes
    agent.call("resume_line", {"line_id": "L1"})
    assert user.row("phone", ("P1",)) == ("P1", "connected")  # the link runs after the agent's call too
    verdict = grade_trial(agent, "", GoalState(), ROLE, set(), base)
    assert [c.name for c in verdict.failures()] == ["no collateral change"]  # the agent's own change is seen
    assert grade_trial(user, "", GoalState(), Role(name="u"), set(), user_base).failures()[0].name == \
        "no collateral change"


def test_a_failed_call_is_not_followed_by_the_link(worlds):
    agent, user = _start(worlds)
    seen = []
    agent.after_ok = lambda: seen.append(1)
    assert agent.call("resume_line", {"line_id": "nope"}).outcome == "error"
    assert seen == []
    agent.call("resume_line", {"line_id": "L1"})
    assert seen == [1]


def test_a_world_that_does_not_hash_as_recorded_after_initialization_is_refused(worlds):
    sha, _ = _hashes(worlds, SUSPEND)
    agent, user = _start(worlds)
    with pytest.raises(ResetError, match="after the task's initialization"):
        initialize(Initialization(calls=SUSPEND, sha256="0" * 64), agent, user)
    agent, user = _start(worlds)
    with pytest.raises(ResetError, match="user-side world hash"):
        initialize(Initialization(calls=SUSPEND, sha256=sha, user_sha256="0" * 64), agent, user)


def test_an_unknown_or_failing_initialization_call_names_its_place(worlds):
    agent, user = _start(worlds)
    with pytest.raises(InitializationError, match=r"initialization.calls.0: 'nope' is no tool or helper"):
        initialize(Initialization(calls=[ToolCall(tool="nope")], sha256=""), agent, user)
    with pytest.raises(InitializationError, match=r"calls.1: resume_line failed: no line L9"):
        initialize(Initialization(calls=[*SUSPEND, ToolCall(tool="resume_line", arguments={"line_id": "L9"})],
                                  sha256=""), agent, user)
    with pytest.raises(InitializationError, match=r"calls.0: reboot is the user's, but the domain t_carrier"):
        initialize(Initialization(calls=[ToolCall(tool="reboot", actor="user")], sha256=""), agent, None)
