"""A tau2 telecom task (a tasks.json record) run on our two worlds: its initialization actions, its gold actions
executed live, and its env assertions, as tau2's evaluator runs them (TOOLS_SPEC.md §11, §13).

The worlds are trials of the two domains' worlds, freshly reset and connected
by the link step (evalsuite.trials.initialization.connect with LINK: the step
then follows every successful call). Initialization actions call a helper or
tool directly, untraced, each followed by the link step; gold actions are
traced calls (requestor `user` on the phone, `assistant` on the carrier's
world); env assertions run as the registered domain checks on each world's
state. The hashes are tau2's (TAU2_HASH), after initialization and at the end.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalsuite.core.records import TraceEvent
from evalsuite.domains.tau2.tools import tool_message
from evalsuite.domains.tau2_telecom.tau2_hash import TAU2_HASH
from evalsuite.worlds.domain import CheckInput, ToolContext
from evalsuite.worlds.trial_world import TrialWorld


@dataclass(frozen=True)
class AssertionResult:
    env_type: str
    func_name: str
    arguments: Mapping[str, Any]
    expected: Any  # the task's assert_value
    passed: bool  # the assertion's boolean result
    detail: str

    @property
    def holds(self) -> bool:
        """The result equals the task's assert_value."""
        return self.passed == self.expected


@dataclass(frozen=True)
class TaskRun:
    task_id: str
    init_hashes: tuple[str, str]  # (agent DB, user DB) after the initialization actions
    gold: list[TraceEvent]  # the gold actions' calls, in order
    end_hashes: tuple[str, str]
    assertions: list[AssertionResult]

    @property
    def messages(self) -> list[str]:
        """Each gold call's tool message as tau2 shows it ("Error: …" when it failed)."""
        return [tool_message(e) for e in self.gold]

    @property
    def env_reward(self) -> float:
        """The ENV_ASSERTION basis: 1.0 iff every assertion equals its assert_value."""
        return float(all(a.holds for a in self.assertions))


def _side(agent: TrialWorld, user: TrialWorld, env_type: str) -> TrialWorld:
    if env_type not in ("user", "assistant"):
        raise ValueError(f"env_type/requestor must be 'user' or 'assistant', got {env_type!r}")
    return user if env_type == "user" else agent


def _require_connected(agent: TrialWorld, user: TrialWorld) -> None:
    if agent.after_ok is None or user.after_ok is None:
        raise ValueError("the two worlds are not connected: run evalsuite.trials.initialization.connect(agent, user, "
                         "LINK) after resetting them")


def initialize(agent: TrialWorld, user: TrialWorld, actions: Sequence[Mapping[str, Any]]) -> None:
    """Run initialization actions in order ({env_type, func_name, arguments}), each followed by the link step;
    any failure aborts (ValueError naming the action)."""
    _require_connected(agent, user)
    for i, action in enumerate(actions):
        world = _side(agent, user, action["env_type"])
        name = action["func_name"]
        spec = world.domain.helpers.get(name) or world.domain.tools.get(name)
        if spec is None:
            raise ValueError(f"initialization_actions[{i}]: {name!r} is no helper or tool of {world.domain.name}")
        ctx = ToolContext(conn=world.world.trial_connection, now=world.clock, policy_text=world.policy_text)
        try:
            with ctx.conn.begin():
                spec.fn(ctx, **action.get("arguments", {}))
        except Exception as exc:
            raise ValueError(f"initialization_actions[{i}]: {name} failed: {exc}") from exc
        world.after_ok()


def play(agent: TrialWorld, user: TrialWorld, actions: Sequence[Mapping[str, Any]]) -> list[TraceEvent]:
    """Execute gold actions ({requestor, name, arguments}) live: traced calls, the link step after each success."""
    _require_connected(agent, user)
    return [_side(agent, user, a["requestor"]).call(a["name"], dict(a.get("arguments", {})),
                                                     actor="user" if a["requestor"] == "user" else "agent")
            for a in actions]


def assess(agent: TrialWorld, user: TrialWorld, assertions: Sequence[Mapping[str, Any]]) -> list[AssertionResult]:
    """Run env assertions ({env_type, func_name, arguments, assert_value}) as the worlds' domain checks."""
    out = []
    for a in assertions:
        world = _side(agent, user, a["env_type"])
        check = world.domain.checks.get(a["func_name"])
        if check is None:
            raise ValueError(f"env assertion {a['func_name']!r} is no check of {world.domain.name}")
        got = check(CheckInput(end=world.db, seed=world.world.pristine_db, trace=world.trace, final_message="",
                               params=dict(a.get("arguments", {}))))
        out.append(AssertionResult(a["env_type"], a["func_name"], a.get("arguments", {}), a["assert_value"],
                                   got.passed, got.detail))
    return out


def run_task(agent: TrialWorld, user: TrialWorld, task: Mapping[str, Any], gold: bool = True) -> TaskRun:
    """The whole task on freshly reset, connected worlds: initialization, the gold actions live (none when `gold`
    is False: the empty trajectory), then the env assertions."""
    initialize(agent, user, task["initial_state"]["initialization_actions"])
    init_hashes = TAU2_HASH.both(agent, user)
    criteria = task["evaluation_criteria"]
    events = play(agent, user, criteria["actions"]) if gold else []
    return TaskRun(task["id"], init_hashes, events, TAU2_HASH.both(agent, user), assess(agent, user,
                                                                                         criteria["env_assertions"]))
