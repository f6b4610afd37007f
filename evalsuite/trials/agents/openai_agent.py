"""An agent backed by any OpenAI-compatible chat endpoint, acting through the trial's tools.

It sees what an untrusted agent may see: the policy text, the trigger and the
tool schemas. Never the goal state, the reference solution or the database.

Every request's tokens and wall latency go into `usage` (one ModelCall each),
which run_trial keeps on the trial record; the scorecard prices them
(evalsuite.scoring.cost). Transient endpoint errors (connection errors, 408,
409, 429, 5xx) are retried by the openai SDK with exponential backoff,
`max_retries` times; an error that outlasts them escapes `run`, and run_trial
records the trial as an infra_error with the tokens already spent.

The endpoint's key and address can come from `endpoint(...)` (the Dagster
resource `ModelEndpoint` sets it around a trial run) rather than from the
process environment; the key is held by the SDK client only, never by the
agent config, a record or a log line.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

from openai import OpenAI

from evalsuite.core.records import ModelCall, TaskRecord, Usage
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.agents.endpoint import current_endpoint

SYSTEM = ("You are {role}, an agent working a business queue. Follow the policy exactly; use the tools to read "
          "and change records; when done, reply with a short closing note stating your decision and the figures "
          "behind it.\n\nPolicy {doc} {version}:\n{policy}")


class OpenAIAgent:
    """Chat-completions tool loop: call tools until the model answers in plain text."""

    def __init__(self, name: str, model: str, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0, client: OpenAI | None = None):
        self.name = name
        self.model = model
        self.temperature = temperature
        self.usage = Usage()
        ep = current_endpoint()
        # base_url None: the SDK reads OPENAI_BASE_URL; the key is OPENAI_API_KEY, and a local endpoint may need none
        api_key = api_key or ep.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.client = client or OpenAI(base_url=base_url or ep.base_url, api_key=api_key,
                                       max_retries=ep.max_retries, timeout=ep.timeout)

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        self.usage = env.usage = Usage()  # this trial's calls only; run_trial reads env.usage however it ends
        # the trial's user (scripted or LLM: run_trial sets it, see evalsuite.trials.users.dual.prepare); none in a
        # queue task and in the no-user mode
        user = env.user
        if user is not None:
            user.use_client(self.client)  # an LLM user talks through this agent's endpoint, as the agent does
        opening = user.reply() if user else task.trigger.text
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM.format(role=task.role.name, doc=task.policy.doc,
                                                        version=task.policy.version, policy=env.policy_text)
             + _plan_text(env.oracle_plan)},
            {"role": "user", "content": opening or ""},
        ]
        tools = [{"type": "function", "function": t} for t in env.tools]
        while True:
            reply = self._complete(messages, tools)
            if not reply.tool_calls:
                answer = reply.content or ""
                said = user.reply(answer) if user and user.turns < task.trial_protocol.max_steps else None
                if said is None:
                    return answer
                messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": said}]
                continue
            messages.append({"role": "assistant", "content": reply.content,
                             "tool_calls": [c.model_dump() for c in reply.tool_calls]})
            for call in reply.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": _observe(env, call)})


    def _complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]):
        """One chat completion (the SDK retries transient errors inside it), its tokens and latency recorded."""
        start = time.perf_counter()
        response = self.client.chat.completions.create(model=self.model, messages=messages, tools=tools,
                                                       temperature=self.temperature)
        used = response.usage  # an endpoint may not report usage: zero tokens then, and the call still counted
        self.usage.model_calls.append(ModelCall(
            model=self.model, tokens_in=(used.prompt_tokens or 0) if used else 0,
            tokens_out=(used.completion_tokens or 0) if used else 0, seconds=round(time.perf_counter() - start, 6)))
        return response.choices[0].message


def _plan_text(plan: list | None) -> str:
    """Oracle-plan mode: the required tool-call sequence, steps on the user's device marked as the user's."""
    if not plan:
        return ""
    steps = [f"{i}. {'ask the user to run' if c.actor == 'user' else 'call'} {c.tool} {json.dumps(c.arguments)}"
             for i, c in enumerate(plan, start=1)]
    return "\n\nRequired steps, in order:\n" + "\n".join(steps)


def _observe(env: AgentEnv, call) -> str:
    """Run one requested call; malformed arguments are the model's error and are reported back to it."""
    try:
        args = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"Error: arguments are not valid JSON: {exc.msg}"
    event = env.call(call.function.name, args if isinstance(args, dict) else {})
    if event.outcome == "ok":
        return event.result if isinstance(event.result, str) else json.dumps(event.result, default=str)
    return f"Error: {event.error}"
