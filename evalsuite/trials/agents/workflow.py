"""The agents that do not choose their tools, beside the tool-using one, under one protocol (the environment-design
guide: "a simpler workflow, a non-adaptive model workflow and a tool-using agent"):

- `workflow`: the domain's fixed rules (its DomainPackage.fixed_rules: gather, decide, act), no model;
- `workflow:MODEL` (kind model_workflow): the same fixed reads, then one model call that picks the decision from
  the domain's fixed menu (its decisions), then the same fixed actions; the closing message is the model's note, or
  the workflow's own when the model gives none.

Both see what an untrusted agent may: the trigger, the policy text and what the tools return, never the goal state
or the reference. A domain without fixed rules has no such agents (a one-line error naming it).
"""
from __future__ import annotations

import json
from typing import Any

from evalsuite.core.records import TaskRecord, Usage
from evalsuite.domains.package import FixedRules
from evalsuite.domains.registry import lookup
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.agents.endpoint import current_endpoint

SCHEMA = "workflow_decision"  # the response format's name: the local model answers such a request with a decision
PROMPT = ("You decide one support case under the policy below. The records were read for you; you cannot call "
          "tools. Answer with JSON: decision (one of the listed decisions) and note (a short closing note to the "
          "customer stating the decision and only figures found in the records).\n\nDecisions:\n{decisions}\n\n"
          "Policy {doc} {version}:\n{policy}")


def workflow_of(domain: str) -> FixedRules:
    """The domain's fixed rules."""
    found = lookup(domain).fixed_rules
    if found is None:
        raise KeyError(f"domain {domain!r} has no fixed rules (DomainPackage.fixed_rules); the workflow agents run "
                       "only where they are written")
    return found


class WorkflowAgent:
    """The simpler alternative: the domain's fixed reads, rules and actions."""

    name = "workflow"

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        wf = workflow_of(task.domain)
        facts = wf.gather(task.trigger, env)
        return wf.act(wf.decide(facts), facts, env)


def response_format(decisions: dict[str, str]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": SCHEMA, "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": ["decision", "note"],
        "properties": {"decision": {"type": "string", "enum": list(decisions)}, "note": {"type": "string"}}}}}


def parse_decision(content: str | None, decisions: dict[str, str]) -> tuple[str, str]:
    """(decision, note) from the model's answer; an answer that names no listed decision raises ValueError: no
    decision is assumed for it, and the trial records the agent's failure."""
    try:
        body = json.loads(content or "")
        decision, note = body["decision"], str(body.get("note") or "")
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"the model's answer is not a decision: {content!r}") from exc
    if decision not in decisions:
        raise ValueError(f"the model chose {decision!r}, not one of {', '.join(decisions)}")
    return decision, note


class ModelWorkflowAgent:
    """Fixed reads, one model call for the decision, fixed actions: a model that never chooses a tool."""

    max_in_flight = 32

    def __init__(self, name: str, model: str, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0):
        # Imported here: the client brings the openai SDK (about 1 s to import), and a build imports this module for
        # the scripted agents alone.
        from evalsuite.trials.agents.model_client import resolve

        self.name, self.model, self.temperature = name, model, temperature
        self.endpoint = resolve(current_endpoint(), base_url, api_key)

    async def arun(self, task: TaskRecord, env: AgentEnv) -> str:
        env.usage = Usage()
        wf = workflow_of(task.domain)
        facts = wf.gather(task.trigger, env)
        system = PROMPT.format(decisions="\n".join(f"- {k}: {v}" for k, v in wf.decisions.items()),
                               doc=task.policy.doc, version=task.policy.version, policy=env.policy_text)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": task.trigger.text},
                    {"role": "user", "content": "Records:\n" + json.dumps(facts, default=str, sort_keys=True)}]
        env.before_model_call()
        from evalsuite.trials.agents.model_client import client_for

        response = await client_for(self.endpoint).complete(
            env.usage, model=self.model, messages=messages, temperature=self.temperature,
            response_format=response_format(wf.decisions))
        decision, note = parse_decision(response.choices[0].message.content, wf.decisions)
        closing = wf.act(decision, facts, env)
        return note or closing

    async def aclose(self) -> None:
        from evalsuite.trials.agents.model_client import close_clients

        await close_clients(self.endpoint)
