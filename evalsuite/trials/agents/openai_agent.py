"""An agent backed by any OpenAI-compatible chat endpoint, acting through the trial's tools.

It sees what an untrusted agent may see: the policy text, the trigger and the
tool schemas. Never the goal state, the reference solution or the database.
"""
from __future__ import annotations

import json
import os
from typing import Any

from openai import OpenAI

from evalsuite.trials.agents.base import AgentEnv
from evalsuite.core.records import TaskRecord
from evalsuite.trials.users import SimulatedUser

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
        # base_url None: the SDK reads OPENAI_BASE_URL; the key is OPENAI_API_KEY, and a local endpoint may need none
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.client = client or OpenAI(base_url=base_url, api_key=api_key)

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        user = SimulatedUser(task.user_scenario, self.client) if task.trigger.type == "conversation" else None
        opening = user.reply() if user else task.trigger.text
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM.format(role=task.role.name, doc=task.policy.doc,
                                                        version=task.policy.version, policy=env.policy_text)},
            {"role": "user", "content": opening or ""},
        ]
        tools = [{"type": "function", "function": t} for t in env.tools]
        while True:
            reply = self.client.chat.completions.create(model=self.model, messages=messages, tools=tools,
                                                        temperature=self.temperature).choices[0].message
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
