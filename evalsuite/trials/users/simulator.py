"""An LLM user following the task's hidden scenario, on a pinned model, version, temperature and seed.

The simulator is part of the test: two teams with different simulators are not
running the same evaluation, so its settings come only from the task record.

An agent on the trial engine's loop hears it through `areply`, a request through the ModelClient the agent
bound (use_client): the agent's endpoint, connection pool and rate limits, its calls kept in the user's own
`usage`, not billed to the agent. `reply` is the synchronous path for callers off a loop (the MCP server's
message_user tool, `evalsuite play`), on a plain SDK client.

In a dual-control task the user holds a phone (the user-side trial world), as τ²-bench's user does: every request
offers the phone's tools, the user runs the calls its model asks for (each traced on the phone with actor
"user") and reads their outputs before it answers, at most MAX_TOOL_ROUNDS rounds a turn; past them it says
STUCK.
"""
from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Any

from evalsuite.core.records import Simulator, Usage, UserScenario
from evalsuite.trials.users.base import OPENING

if TYPE_CHECKING:  # the SDK takes ~0.4 s to import; only a trial with an LLM user needs it
    from openai import OpenAI

    from evalsuite.trials.agents.model_client import ModelClient
    from evalsuite.worlds.trial_world import TrialWorld

STOP = "###STOP###"
SYSTEM = ("You are a customer talking to a support agent. Follow these instructions; reveal details only when "
          "asked; never invent facts beyond them. When your request is fully handled or cannot be, reply with "
          f"exactly {STOP}.\n\nPersona: {{persona}}\n\nInstructions:\n{{instructions}}")
# added to SYSTEM when the user holds a device, as τ²-bench instructs its user
PHONE = ("\n\nYou hold your phone and can use its tools: when the agent asks you to check or change something "
         "on your phone, use the tools to do it, and base every statement about your phone on what a tool showed "
         "you.")
MAX_TOOL_ROUNDS = 10  # rounds of phone-tool calls in one turn before the user gives up
STUCK = "I'm stuck: I keep trying things on my phone and I'm not getting anywhere."


class SimulatedUser:
    """The LLM simulator: any OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY, as the SDK reads them)."""

    def __init__(self, scenario: UserScenario, client: OpenAI | None = None, device: TrialWorld | None = None):
        self.scenario = scenario
        self._client = client
        self._model_client: ModelClient | None = None
        self.device = device  # the user's phone (dual control): its tools are offered in every request
        self.tools = [{"type": "function", "function": device.domain.tools[n].schema()}
                      for n in device.visible_tools()] if device is not None else []
        system = SYSTEM.format(persona=scenario.persona or "none", instructions=scenario.instructions)
        # From the simulator's side the agent speaks as "user" and the simulator answers as "assistant".
        self.messages = [{"role": "system", "content": system + (PHONE if device is not None else "")}]
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
        self.messages.append({"role": "user", "content": agent_message})
        for _ in range(MAX_TOOL_ROUNDS):
            message = self.client.chat.completions.create(**self._request()).choices[0].message
            if not self._used_phone(message):
                return self._said(message.content)
        return self._said(STUCK)

    async def areply(self, agent_message: str = OPENING) -> str | None:
        """reply, awaited through the bound ModelClient (else the loop's client for the current endpoint)."""
        from evalsuite.trials.agents.endpoint import current_endpoint
        from evalsuite.trials.agents.model_client import client_for, resolve

        client = self._model_client or client_for(resolve(current_endpoint()))
        self.messages.append({"role": "user", "content": agent_message})
        for _ in range(MAX_TOOL_ROUNDS):
            message = (await client.complete(self.usage, **self._request())).choices[0].message
            if not self._used_phone(message):
                return self._said(message.content)
        return self._said(STUCK)

    def _request(self) -> dict[str, Any]:
        """The chat request for the user's next step, on the pinned model, temperature and seed (and the phone's
        tools, when the user holds one)."""
        sim = self.scenario.simulator
        extra = {"seed": sim.seed} if sim.seed is not None else {}
        if self.tools:
            extra |= {"tools": self.tools, "tool_choice": "auto"}
        return {"model": sim.model, "messages": self.messages, "temperature": sim.temperature, **extra}

    def _used_phone(self, message: Any) -> bool:
        """Run the phone-tool calls a model reply asks for, on the device as the user, the call and each output
        (as an agent is shown it) appended for the next request; False: the reply is what the user says."""
        if not message.tool_calls or self.device is None:
            return False
        from evalsuite.trials.agents.openai_agent import observe

        run = partial(self.device.call, actor="user")
        self.messages.append({"role": "assistant", "content": message.content,
                              "tool_calls": [c.model_dump() for c in message.tool_calls]})
        self.messages += [{"role": "tool", "tool_call_id": c.id, "content": observe(run, c)}
                          for c in message.tool_calls]
        return True

    def _said(self, content: str | None) -> str | None:
        text = content or ""
        self.messages.append({"role": "assistant", "content": text})
        self.turns += 1
        return None if STOP in text else text
