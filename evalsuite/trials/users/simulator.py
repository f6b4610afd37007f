"""An LLM user following the task's hidden scenario, on a pinned model, version, temperature and seed.

The simulator is part of the test: two teams with different simulators are not
running the same evaluation, so its settings come only from the task record.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from evalsuite.core.records import Simulator, UserScenario
from evalsuite.trials.users.base import OPENING

if TYPE_CHECKING:  # the SDK takes ~0.4 s to import; only a trial with an LLM user needs it
    from openai import OpenAI

STOP = "###STOP###"
SYSTEM = ("You are a customer talking to a support agent. Follow these instructions; reveal details only when "
          "asked; never invent facts beyond them. When your request is fully handled or cannot be, reply with "
          f"exactly {STOP}.\n\nPersona: {{persona}}\n\nInstructions:\n{{instructions}}")


class SimulatedUser:
    """The LLM simulator: any OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY, as the SDK reads them)."""

    def __init__(self, scenario: UserScenario, client: OpenAI | None = None):
        self.scenario = scenario
        self._client = client
        # From the simulator's side the agent speaks as "user" and the simulator answers as "assistant".
        self.messages = [{"role": "system", "content": SYSTEM.format(persona=scenario.persona or "none",
                                                                      instructions=scenario.instructions)}]
        self.turns = 0

    @property
    def client(self) -> OpenAI:
        """The client given or bound (use_client), else one from OPENAI_BASE_URL / OPENAI_API_KEY, made when the
        user first speaks."""
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "not-needed")
        return self._client

    def use_client(self, client: OpenAI) -> None:
        """Talk through this client unless one was given: an OpenAI agent binds its own, so the user shares its
        endpoint settings (a key from Dagster's ModelEndpoint resource, never the process environment)."""
        if self._client is None:
            self._client = client

    @property
    def settings(self) -> Simulator:
        return self.scenario.simulator

    def reply(self, agent_message: str = OPENING) -> str | None:
        """The user's next message, or None when the user ends the conversation."""
        self.messages.append({"role": "user", "content": agent_message})
        sim = self.scenario.simulator
        extra = {"seed": sim.seed} if sim.seed is not None else {}
        completion = self.client.chat.completions.create(model=sim.model, messages=self.messages,
                                                         temperature=sim.temperature, **extra)
        text = completion.choices[0].message.content or ""
        self.messages.append({"role": "assistant", "content": text})
        self.turns += 1
        return None if STOP in text else text
