"""What an agent under test is: something that acts through tools and ends with a message."""
from __future__ import annotations

import inspect
from typing import Any, Protocol

from evalsuite.core.identity import TrialLimits
from evalsuite.core.prices import PriceTable
from evalsuite.core.records import TaskRecord, ToolCall, TraceEvent, Usage
from evalsuite.trials.budget import over_limit
from evalsuite.worlds.trial_world import TrialWorld


class BudgetExhausted(Exception):
    """The agent used its step budget; the trial is unresolved, its effects stay graded."""


class AgentEnv:
    """The agent's handle on a trial: tool calls under a step budget, nothing else."""

    actor = "agent"  # who the trace names as calling; "human" when a person acts through `evalsuite play`
    # A conversational trial's line to the user (evalsuite.trials.users.base.Conversation): the agent's only way
    # to act on the user's device in dual control. None in a queue task and in the no-user mode.
    user: Any = None
    oracle_plan: list | None = None  # oracle-plan mode: the required tool-call sequence, given to the agent

    def __init__(self, trial: TrialWorld, max_steps: int, limits: TrialLimits | None = None,
                 prices: PriceTable | None = None):
        self._trial = trial
        self.max_steps = max_steps
        self.steps = 0
        # What this trial's agent spent on its model, one ModelCall per request: an agent that calls a model
        # sets a Usage here when it starts and appends to it; None means it reports nothing (a baseline).
        self.usage: Usage | None = None
        self.limits = limits
        self.prices = prices

    def before_model_call(self) -> None:
        """Raise BudgetExhausted when the trial's calls so far have reached one of its limits (TrialLimits)."""
        reason = over_limit(self.usage or Usage(), self.limits, self.prices)
        if reason is not None:
            raise BudgetExhausted(reason)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [self._trial.domain.tools[n].schema() for n in self._trial.visible_tools()]

    @property
    def read_tools(self) -> frozenset[str]:
        """The tools that only read the world (kind read), which an MCP agent is told by readOnlyHint."""
        tools = self._trial.domain.tools
        return frozenset(n for n in self._trial.visible_tools() if tools[n].kind == "read")

    @property
    def policy_text(self) -> str:
        return self._trial.policy_text

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> TraceEvent:
        if self.steps >= self.max_steps:
            raise BudgetExhausted(f"step budget of {self.max_steps} used")
        self.steps += 1
        return self._trial.call(tool, arguments, actor=self.actor)


class Agent(Protocol):
    """Built-in baselines are trusted and may read the record; untrusted agents get only the trigger and tools."""

    name: str

    def run(self, task: TaskRecord, env: AgentEnv) -> str: ...


class AsyncAgent(Protocol):
    """An agent that waits on I/O (a model endpoint, an external process): the trial engine
    (evalsuite.trials.engine) keeps many of its trials in flight at once on one event loop, each on its own world.
    `max_in_flight` is its default concurrency; a run's setting overrides it."""

    name: str
    max_in_flight: int

    async def arun(self, task: TaskRecord, env: AgentEnv) -> str: ...


def is_async(agent: Agent | AsyncAgent) -> bool:
    """Whether the agent's trials go to the trial engine (it has `async def arun`) rather than run one at a time."""
    return inspect.iscoroutinefunction(getattr(agent, "arun", None))


def call_text(call: ToolCall) -> str:
    """A call as τ²-bench's oracle plan writes one: `name(k=v, …)`, values in Python text form without quotes."""
    return f"{call.tool}({', '.join(f'{k}={v}' for k, v in call.arguments.items())})"


def step_request(call: ToolCall) -> str:
    """What the reference says to ask the user for a step on their device, the call's arguments named."""
    return f"Please {call.tool.replace('_', ' ')} on your phone" + (f": {call_text(call)}." if call.arguments else ".")
