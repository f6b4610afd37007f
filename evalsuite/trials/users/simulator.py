"""An LLM user following the task's hidden scenario, on a pinned model, version, temperature and seed.

The simulator is part of the test: two teams with different simulators are not
running the same evaluation, so its settings come only from the task record.

An agent on the trial engine's loop hears it through `areply`, a request through the ModelClient the agent
bound (use_client): the agent's endpoint, connection pool and rate limits, its calls kept in the user's own
`usage`, not billed to the agent. `reply` is the synchronous path for callers off a loop (the MCP server's
message_user tool, `evalsuite play`), on a plain SDK client.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from evalsuite.core.records import Simulator, Usage, UserScenario
from evalsuite.trials.users.base import OPENING

if TYPE_CHECKING:  # the SDK takes ~0.4 s to import; only a trial with an LLM user needs it
    from openai import OpenAI

    from evalsuite.trials.agents.model_client import ModelClient

STOP = "###STOP###"
SYSTEM = ("You are a customer talking to a support agent. Follow these instructions; reveal details only when "
          "asked; never invent facts beyond them. When your request is fully handled or cannot be, reply with "
          f"exactly {STOP}.\n\nPersona: {{persona}}\n\nInstructions:\n{{instructions}}")


class SimulatedUser:
    """The LLM simulator: any OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY, as the SDK reads them)."""

    def __init__(self, scenario: UserScenario, client: OpenAI | None = None):
        self.scenario = scenario
        self._client = client
        self._model_client: ModelClient | None = None
        # From the simulator's side the agent speaks as "user" and the simulator answers as "assistant".
        self.messages = [{"role": "system", "content": SYSTEM.format(persona=scenario.persona or "none",
                                                                      instructions=scenario.instructions)}]
        self.turns = 0
        self.usage = Usage()  # the user's own model calls (areply), apart from the agent's

    @property
    def client(self) -> OpenAI:
        """The synchronous client given, else one from OPENAI_BASE_URL / OPENAI_API_KEY, made when the user
        first speaks through `reply`."""
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "not-needed")
        return self._client

    def use_client(self, client: ModelClient) -> None:
        """Talk through this ModelClient in `areply`: an OpenAI agent binds its own, so the user shares its
        endpoint settings (a key from Dagster's ModelEndpoint resource, never the process environment) and
        its limits."""
        self._model_client = client

    @property
    def settings(self) -> Simulator:
        return self.scenario.simulator

    def reply(self, agent_message: str = OPENING) -> str | None:
        """The user's next message, or None when the user ends the conversation."""
        completion = self.client.chat.completions.create(**self._request(agent_message))
        return self._said(completion.choices[0].message.content)

    async def areply(self, agent_message: str = OPENING) -> str | None:
        """reply, awaited through the bound ModelClient (else the loop's client for the current endpoint)."""
        from evalsuite.trials.agents.endpoint import current_endpoint
        from evalsuite.trials.agents.model_client import client_for, resolve

        client = self._model_client or client_for(resolve(current_endpoint()))
        completion = await client.complete(self.usage, **self._request(agent_message))
        return self._said(completion.choices[0].message.content)

    def _request(self, agent_message: str) -> dict[str, Any]:
        """The chat request for the user's next turn, on the pinned model, temperature and seed."""
        self.messages.append({"role": "user", "content": agent_message})
        sim = self.scenario.simulator
        extra = {"seed": sim.seed} if sim.seed is not None else {}
        return {"model": sim.model, "messages": self.messages, "temperature": sim.temperature, **extra}

    def _said(self, content: str | None) -> str | None:
        text = content or ""
        self.messages.append({"role": "assistant", "content": text})
        self.turns += 1
        return None if STOP in text else text
