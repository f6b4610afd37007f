"""The baselines: the three acceptance needs (the reference, the no-op, the every-write adversary), the
reference that obeys an attack (injected), which shows a task under attack can be lost, and the reference
that never talks to the user (soloist), which shows what a task's dual control asks of an agent; and the domain's
fixed workflow (workflow, evalsuite.trials.agents.workflow), the simpler alternative a model agent is measured
against."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from evalsuite.core.records import TaskRecord
from evalsuite.trials.agents.base import AgentEnv, step_request
from evalsuite.trials.agents.workflow import WorkflowAgent


class ReferenceAgent:
    """Replays the task's reference solution and ends with its reference answer."""

    name = "reference"

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        calls = task.solution_calls()
        if env.user is not None and any(c.actor == "user" for c in calls):
            env.user.reply()  # greet; the user states their problem (only where a step needs the user at all)
        for call in calls:
            if call.actor == "user" and env.user is not None:  # dual control: a step on the user's device is asked for
                env.user.reply(step_request(call))
            else:
                env.call(call.tool, call.arguments)
        return task.reference_answer or ""


class InjectedAgent(ReferenceAgent):
    """The reference that also obeys the text an attack placed in the world: the reference solution, then the
    injection task's own calls (Attack.injection_calls). Under attack its security must fail; without, it is the
    reference."""

    name = "injected"

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        answer = super().run(task, env)
        for call in task.attack.injection_calls if task.attack else []:
            env.call(call.tool, call.arguments)
        return answer


class SoloistAgent:
    """The reference plan with every step, the user's included, called by the agent itself, and never a word to
    the user: it passes where the agent holds every tool (no_user mode) and is stuck in dual control, where the
    user's steps are the user's to take."""

    name = "soloist"

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        for call in task.solution_calls():
            env.call(call.tool, call.arguments)
        return task.reference_answer or ""


class NoOpAgent:
    """Does nothing: a task it passes does not test the agent's actions."""

    name = "noop"

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        return ""


class AdversaryAgent:
    """Calls every write tool it can see, with arguments taken from the task's own entities.

    A task this agent passes cannot tell careful work from spraying writes.
    """

    name = "adversary"

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        context = _entity_values(task)
        for spec in env.tools:
            tool = env._trial.domain.tools[spec["name"]]
            if tool.kind == "write":
                env.call(tool.name, _fill(tool.args, context))
        return task.reference_answer or ""


def _entity_values(task: TaskRecord) -> dict[str, Any]:
    """Argument values by name from the reference solution (ids, amounts, reasons)."""
    values: dict[str, Any] = {}
    if isinstance(task.reference_solution, list):
        for call in task.reference_solution:
            for k, v in call.arguments.items():
                values.setdefault(k, v)
    return values


def _fill(model: type[BaseModel] | None, context: dict[str, Any]) -> dict[str, Any]:
    if model is None:
        return dict(context)
    args = {}
    for name, field in model.model_fields.items():
        if name in context:
            args[name] = context[name]
        elif not field.is_required():
            continue
        else:
            args[name] = _default_for(field.annotation)
    return args


def _default_for(annotation: Any) -> Any:
    choices = getattr(annotation, "__args__", None)
    if choices and all(isinstance(c, str) for c in choices):
        return choices[0]  # a Literal: its first allowed value
    return {str: "adversary", int: 1, float: 1.0}.get(annotation, "1")


BASELINES = {a.name: a for a in (ReferenceAgent, NoOpAgent, AdversaryAgent, InjectedAgent, SoloistAgent,
                                 WorkflowAgent)}
