"""A tau2 telecom task (a tasks.json record) run on our two worlds: its initialization actions, its gold actions
executed live, and its env assertions, as tau2's evaluator runs them (TOOLS_SPEC.md §11, §13).

The worlds are trials of the two domains' worlds, freshly reset and connected
by the link step (evalsuite.worlds.link.connect with LINK: the step
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

from evalsuite.core.records import ToolCall, TraceEvent
from evalsuite.domains.tau2.tools import tool_message
from evalsuite.domains.tau2_telecom.tau2_hash import TAU2_HASH
from evalsuite.worlds.domain import CheckInput
from evalsuite.worlds.link import apply_calls
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
    init_hashes: tuple[str, str] | None  # (agent DB, user DB) after the initialization actions; None: not asked
    gold: list[TraceEvent]  # the gold actions' calls, in order
    end_hashes: tuple[str, str] | None
    assertions: list[AssertionResult]

    @property
    def messages(self) -> list[str]:
        """Each gold call's tool message as tau2 shows it ("Error: …" when it failed)."""
        return [tool_message(e) for e in self.gold]

    @property
    def env_reward(self) -> float:
        """The ENV_ASSERTION basis: 1.0 iff every assertion equals its assert_value."""
        return float(all(a.holds for a in self.assertions))


def _side_of(env_type: str) -> str:
    if env_type not in ("user", "assistant"):
        raise ValueError(f"env_type/requestor must be 'user' or 'assistant', got {env_type!r}")
    return env_type


def _side(agent: TrialWorld, user: TrialWorld, env_type: str) -> TrialWorld:
    return user if _side_of(env_type) == "user" else agent


def _require_connected(agent: TrialWorld, user: TrialWorld) -> None:
    if agent.after_ok is None or user.after_ok is None:
        raise ValueError("the two worlds are not connected: run evalsuite.worlds.link.connect(agent, user, "
                         "LINK) after resetting them")


def setup_calls(actions: Sequence[Mapping[str, Any]]) -> list[ToolCall]:
    """tasks.json initialization actions ({env_type, func_name, arguments}) as set-up calls (actor "user": the
    phone's)."""
    return [ToolCall(tool=a["func_name"], arguments=dict(a.get("arguments", {})),
                     actor="user" if _side_of(a["env_type"]) == "user" else None) for a in actions]


def initialize(agent: TrialWorld, user: TrialWorld, actions: Sequence[Mapping[str, Any]]) -> None:
    """Run initialization actions in order, each followed by the link step (evalsuite.worlds.link.apply_calls);
    any failure aborts (InitializationError naming the action)."""
    _require_connected(agent, user)
    apply_calls(setup_calls(actions), agent, user)


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


def run_task(agent: TrialWorld, user: TrialWorld, task: Mapping[str, Any], gold: bool = True,
             hashes: bool = True) -> TaskRun:
    """The whole task on freshly reset, connected worlds: initialization, the gold actions live (none when `gold`
    is False: the empty trajectory), then the env assertions; tau2's hashes unless `hashes` is False (then None:
    a hash is a full dump of both worlds, much of a task's cost)."""
    initialize(agent, user, task["initial_state"]["initialization_actions"])
    init_hashes = TAU2_HASH.both(agent, user) if hashes else None
    criteria = task["evaluation_criteria"]
    events = play(agent, user, criteria["actions"]) if gold else []
    end_hashes = TAU2_HASH.both(agent, user) if hashes else None
    return TaskRun(task["id"], init_hashes, events, end_hashes, assess(agent, user, criteria["env_assertions"]))
