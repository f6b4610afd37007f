"""Dual control: a trial's user-side world, its user simulator, and what the agent holds in each mode.

The user-side world is a second World over the same world file, opened with the domain's USER_DOMAIN: its
own tables (the customer's device), its own tools, reset and hashed on its own before every trial. In the
default and oracle-plan modes the agent reaches it only by asking the user; in the no-user mode the agent
gets the ticket and holds every tool of both worlds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from evalsuite.core.records import USER_WORLD, GoalState, Role, TaskRecord, TraceEvent
from evalsuite.domains.registry import package_of
from evalsuite.grading.grader import Baseline, Verdict, grade_trial
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.trials.initialization import initialize
from evalsuite.trials.users.base import Conversation, UserSimulator
from evalsuite.trials.users.scripted import ScriptedUser
from evalsuite.trials.users.simulator import SimulatedUser
from evalsuite.worlds.domain import Domain
from evalsuite.worlds.link import connect
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

_SIDES: WeakKeyDictionary[World, World] = WeakKeyDictionary()
# The first user-side world opened over one agent world's pristine state: the agent world's siblings (trials in
# flight at once) get siblings of it, not a load of their own.
_FIRST_SIDES: WeakKeyDictionary[World, World] = WeakKeyDictionary()


def user_world(world: World) -> World | None:
    """The user-side world of `world`, opened from the same file once per agent world (a sibling world's is a
    sibling of its first)."""
    domain = package_of(world.domain).user_domain
    if domain is None:
        return None
    if world not in _SIDES:
        first = _FIRST_SIDES.get(world.origin)
        _SIDES[world] = first.sibling() if first is not None else World(domain, world.path)
        _FIRST_SIDES.setdefault(world.origin, _SIDES[world])
    return _SIDES[world]


def user_role(domain: Domain) -> Role:
    """Whoever holds the device (the user, or the agent in no-user mode) may use every tool on it."""
    return Role(name=f"{domain.name}_holder", read_tools=[t.name for t in domain.tools.values() if t.kind == "read"],
                write_tools=domain.write_tools())


def make_user(task: TaskRecord, device: TrialWorld | None) -> UserSimulator:
    """The task's pinned simulator, holding `device` (its phone, when the task has one): scripted, or an LLM on an
    OpenAI-compatible endpoint."""
    scenario = task.user_scenario
    if scenario is None:
        raise ValueError(f"{task.task_id}: user_scenario: a conversation needs one")
    if scenario.simulator.kind == "scripted":
        return ScriptedUser(scenario, device)
    return SimulatedUser(scenario, device=device)


class DualEnv(AgentEnv):
    """No-user mode: the agent holds the tools of both worlds; its own world's calls go through the trial's env,
    device calls are traced on the device, one step budget over both."""

    def __init__(self, inner: AgentEnv, device: TrialWorld):
        super().__init__(inner._trial, inner.max_steps)
        self._inner = inner
        self._device = device

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self._inner.tools + [self._device.domain.tools[n].schema() for n in self._device.visible_tools()]

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> TraceEvent:
        if tool not in self._device.domain.tools or tool in self._trial.domain.tools:
            self._inner.steps = self.steps  # one budget over both worlds: the inner env counts this step
            event = self._inner.call(tool, arguments)
            self.steps = self._inner.steps
            return event
        if self.steps >= self.max_steps:
            raise BudgetExhausted(f"step budget of {self.max_steps} used")
        self.steps += 1
        return self._device.call(tool, arguments, actor=self.actor)


@dataclass
class Started:
    """A task's worlds ready for its trial: the user-side world (None without one) reset and hash-checked, linked
    to the agent's, and the task's initialization run on both, with the baselines it left."""

    device: TrialWorld | None
    device_sha256: str | None
    baseline: Baseline | None  # the rows the task's initialization left, on the agent's world
    device_baseline: Baseline | None  # and on the user's


@dataclass
class Sides(Started):
    """What run_trial needs for one trial beyond the agent's world: the started worlds, the env and the mode."""

    env: AgentEnv
    mode: str


def start_worlds(world: World, task: TaskRecord, trial: TrialWorld) -> Started:
    """Reset the task's user-side world (its hash verified, as the agent's was), link it to the agent's freshly
    reset `trial`, and run the task's initialization on both."""
    side = user_world(world) if task.trigger.type == "conversation" else None
    device = side.reset(user_role(side.domain)) if side is not None else None
    connect(trial, device, package_of(world.domain).link)
    return Started(device, side.seed_sha256 if side is not None else None,
                   *initialize(task.initialization, trial, device))


def prepare(world: World, task: TaskRecord, env: AgentEnv) -> Sides:
    """The task's worlds started (start_worlds), and the agent given what the task's mode allows: the user to
    talk to (default), plus the plan (oracle_plan), or every tool and no user (no_user)."""
    mode = task.trial_protocol.mode or "default"
    started = start_worlds(world, task, env._trial)
    device = started.device
    if mode == "no_user":
        env = DualEnv(env, device) if device is not None else env
    elif task.trigger.type == "conversation":
        env.user = Conversation(make_user(task, device), env._trial.trace, device)
        if mode == "oracle_plan":
            env.oracle_plan = task.solution_calls()
    return Sides(**vars(started), env=env, mode=mode)


def grade_sides(device: TrialWorld | None, device_baseline: Baseline | None, verdict: Verdict, final_message: str,
                task: TaskRecord) -> Verdict:
    """The agent-world verdict joined with the user-side world's: its goal rows and checks, no collateral change on
    the device, and nothing forbidden done to it; every user-side check is named `user world: …`."""
    if device is None:
        return verdict
    goal = GoalState(assertions=task.goal_state.user_assertions, domain_checks=task.goal_state.user_checks)
    theirs = grade_trial(device, final_message, goal, user_role(device.domain), set(), device_baseline)
    checks = verdict.checks + [c.model_copy(update={"name": f"{USER_WORLD}{c.name}", "side": "user"})
                               for c in theirs.checks]
    return Verdict(passed=all(c.passed for c in checks), checks=checks)
