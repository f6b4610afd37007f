"""An agent backed by any OpenAI-compatible chat endpoint, acting through the trial's tools.

It sees what an untrusted agent may see: the policy text, the trigger and the
tool schemas. Never the goal state, the reference solution or the database.

It waits on its endpoint, so its trials run many at once on the trial engine's event loop (`max_in_flight`
by default). Its requests go through the loop's ModelClient for its endpoint (model_client), shared by every
trial in flight: the connection and rate limits, retries with backoff honouring Retry-After, the request
timeout and the response cache are the client's, and every request's tokens, wall time and waits are one
ModelCall in the trial's usage (env.usage), which run_trial keeps on the trial record however the trial ends;
the scorecard prices them (evalsuite.scoring.cost). An error that outlasts the retries escapes `arun`, and the
trial is recorded as an infra_error with the tokens already spent.

The endpoint's key and address can come from `endpoint(...)` (the Dagster resource `ModelEndpoint` sets it
around a trial run) rather than from the process environment; the key is held by the endpoint settings and
the SDK client only, never by the agent config, a record or a log line.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from evalsuite.core.records import TaskRecord, TraceEvent, Usage
from evalsuite.trials.agents.base import AgentEnv, call_text
from evalsuite.trials.agents.endpoint import current_endpoint
from evalsuite.trials.agents.model_client import EncodedTools, ModelClient, client_for, close_clients, resolve

SYSTEM = ("You are {role}, an agent working a business queue. Follow the policy exactly; use the tools to read "
          "and change records; when done, reply with a short closing note stating your decision and the figures "
          "behind it.\n\nPolicy {doc} {version}:\n{policy}")


class OpenAIAgent:
    """Chat-completions tool loop: call tools until the model answers in plain text."""

    max_in_flight = 32  # trials at once by default: each mostly waits on the endpoint

    def __init__(self, name: str, model: str, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0):
        self.name = name
        self.model = model
        self.temperature = temperature
        # the settings are taken when the agent is built (inside `endpoint(...)`), the client when a trial runs
        self.endpoint = resolve(current_endpoint(), base_url, api_key)
        self._tools = EncodedTools(())  # the last trial's tools, encoded: most trials of a run see the same ones

    def __repr__(self) -> str:
        return f"OpenAIAgent(name={self.name!r}, model={self.model!r}, endpoint={self.endpoint!r})"

    async def arun(self, task: TaskRecord, env: AgentEnv) -> str:
        env.usage = Usage()  # this trial's calls only; run_trial reads env.usage however the trial ends
        client = client_for(self.endpoint)
        # the trial's user (scripted or LLM: run_trial sets it, see evalsuite.trials.users.dual.prepare); none in a
        # queue task and in the no-user mode
        user = env.user
        if user is not None:
            user.use_client(client)  # an LLM user talks through this agent's endpoint, as the agent does
        opening = await user.areply() if user else task.trigger.text
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM.format(role=task.role.name, doc=task.policy.doc,
                                                        version=task.policy.version, policy=env.policy_text)
             + _plan_text(env.oracle_plan)},
            {"role": "user", "content": opening or ""},
        ]
        tools = self._encoded_tools(env)
        while True:
            reply = await self._complete(client, env, messages, tools)
            if not reply.tool_calls:
                answer = reply.content or ""
                said = await user.areply(answer) if user and user.turns < task.trial_protocol.max_steps else None
                if said is None:
                    return answer
                messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": said}]
                continue
            messages.append({"role": "assistant", "content": reply.content,
                             "tool_calls": [c.model_dump() for c in reply.tool_calls]})
            for call in reply.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": observe(env.call, call)})

    async def aclose(self) -> None:
        """Close this agent's endpoint client on the running loop (the trial engine's, when its trials are done)."""
        await close_clients(self.endpoint)

    def _encoded_tools(self, env: AgentEnv) -> EncodedTools:
        """This trial's tools, sent with every request: the last trial's encoding when they are the same (a 2 µs
        comparison; encoding them took ~40 µs), else encoded now."""
        tools = tuple({"type": "function", "function": t} for t in env.tools)
        if tools != self._tools:
            self._tools = EncodedTools(tools)
        return self._tools

    async def _complete(self, client: ModelClient, env: AgentEnv, messages: list[dict[str, Any]],
                        tools: EncodedTools):
        """One chat completion, within the trial's limits (BudgetExhausted past one), recorded on env.usage."""
        env.before_model_call()
        response = await client.complete(env.usage, model=self.model, messages=messages, tools=tools,
                                         temperature=self.temperature)
        return response.choices[0].message


def _plan_text(plan: list | None) -> str:
    """Oracle-plan mode: the required tool-call sequence as τ²-bench words it, the user's steps as the user's."""
    if not plan:
        return ""
    steps = [f"[Step {i}] " + ("Instruct the user to perform" if c.actor == "user" else "Perform")
             + f" the following action: {call_text(c)}." for i, c in enumerate(plan, start=1)]
    return "\n\nResolution steps, in order:\n" + "\n".join(steps)


def observe(run: Callable[[str, dict[str, Any]], TraceEvent], call) -> str:
    """Run one requested tool call through `run` (the agent's env, or a simulated user's phone) and return what the
    model is shown; malformed arguments are the model's error and are reported back to it."""
    try:
        args = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"Error: arguments are not valid JSON: {exc.msg}"
    return observation(run(call.function.name, args if isinstance(args, dict) else {}))


def observation(event: TraceEvent) -> str:
    """A call's outcome as the model is shown it: the result (text as it is, anything else as JSON), or
    `Error: <text>`."""
    if event.outcome == "ok":
        return event.result if isinstance(event.result, str) else json.dumps(event.result, default=str)
    return f"Error: {event.error}"
