"""The scripted user: deterministic, and exactly as forthcoming as its script.

It opens with the script's first message; afterwards it says a fact only when the agent's message matches
one of that fact's patterns, and runs a tool on its own device only when the agent's message matches one
of that action's patterns, reporting the tool's human-readable output. An agent message that asks nothing
gets a plea for guidance; after `max_idle_turns` of those in a row, or a closing remark that asks for no
action, the user leaves.
Every turn is logged with what it disclosed and did, so the audit can replay who asked for what.
"""
from __future__ import annotations

import re

from pydantic import BaseModel

from evalsuite.core.records import Simulator, UserScenario, UserScript
from evalsuite.trials.users.base import OPENING
from evalsuite.worlds.trial_world import TrialWorld

CLOSING = re.compile(r"\b(resolved|all set|anything else|goodbye|have a (good|great|nice) day)\b", re.I)
IDLE = "I'm not sure what you need from me. What should I do?"


class Turn(BaseModel):
    """One exchange as the scripted user logged it: what it disclosed and which device tools it ran."""

    agent: str
    user: str | None
    disclosed: list[str] = []
    actions: list[str] = []  # tools run on the device in this turn


def asks(patterns: list[str], message: str) -> bool:
    return any(re.search(p, message, re.I) for p in patterns)


class ScriptedUser:
    """Replies from a UserScript; `device` is the user-side trial world its actions run on (None: no device)."""

    def __init__(self, scenario: UserScenario, device: TrialWorld | None):
        if scenario.script is None:
            raise ValueError("user_scenario.script: a scripted simulator needs a script")
        self.scenario = scenario
        self.script: UserScript = scenario.script
        self.device = device
        self.log: list[Turn] = []
        self._idle = 0

    @property
    def settings(self) -> Simulator:
        return self.scenario.simulator

    def use_client(self, client: object) -> None:
        """A scripted user talks to no model."""

    def reply(self, agent_message: str = OPENING) -> str | None:
        if not self.log:
            return self._turn(agent_message, self.script.opening)
        disclosed = [d for d in self.script.disclosures if asks(d.asked_by, agent_message)]
        wanted = [a for a in self.script.actions if asks(a.asked_by, agent_message)]
        if CLOSING.search(agent_message) and not wanted:  # a wrap-up that mentions a fact asks nothing
            return self._turn(agent_message, None)
        if not disclosed and not wanted:
            self._idle += 1
            if self._idle >= self.script.max_idle_turns:
                return self._turn(agent_message, None)
            return self._turn(agent_message, IDLE)
        self._idle = 0
        said = [d.value if d.value.endswith((".", "!", "?")) else f"My {d.fact} is {d.value}." for d in disclosed]
        said += [self._act(a.tool, a.arguments) for a in wanted]
        return self._turn(agent_message, " ".join(said), [d.fact for d in disclosed], [a.tool for a in wanted])

    def _act(self, tool: str, arguments: dict) -> str:
        if self.device is None:
            return f"I can't do that here ({tool.replace('_', ' ')})."
        event = self.device.call(tool, arguments, actor="user")
        return str(event.result) if event.outcome == "ok" else f"I tried, but it says: {event.error}"

    def _turn(self, agent: str, user: str | None, disclosed: list[str] | None = None,
              actions: list[str] | None = None) -> str | None:
        self.log.append(Turn(agent=agent, user=user, disclosed=disclosed or [], actions=actions or []))
        return user
