"""An LLM user following the task's hidden scenario, on a pinned model, version and temperature.

The simulator is part of the test: two teams with different simulators are not
running the same evaluation, so its settings come only from the task record.
"""
from __future__ import annotations

from openai import OpenAI

from evalsuite.core.records import UserScenario

STOP = "###STOP###"
SYSTEM = ("You are a customer talking to a support agent. Follow these instructions; reveal details only when "
          "asked; never invent facts beyond them. When your request is fully handled or cannot be, reply with "
          f"exactly {STOP}.\n\nPersona: {{persona}}\n\nInstructions:\n{{instructions}}")
OPENING = "Hi! How can I help you today?"


class SimulatedUser:
    def __init__(self, scenario: UserScenario, client: OpenAI | None = None):
        self.scenario = scenario
        self.client = client or OpenAI()
        # From the simulator's side the agent speaks as "user" and the simulator answers as "assistant".
        self.messages = [{"role": "system", "content": SYSTEM.format(persona=scenario.persona or "none",
                                                                      instructions=scenario.instructions)}]
        self.turns = 0

    def reply(self, agent_message: str = OPENING) -> str | None:
        """The user's next message, or None when the user ends the conversation."""
        self.messages.append({"role": "user", "content": agent_message})
        sim = self.scenario.simulator
        text = self.client.chat.completions.create(model=sim.model, messages=self.messages,
                                                   temperature=sim.temperature).choices[0].message.content or ""
        self.messages.append({"role": "assistant", "content": text})
        self.turns += 1
        return None if STOP in text else text
