"""A release as an Inspect AI task: the runtime an exported task file calls (needs the `inspect-ai` package).

- samples: one per released task that an outside model may see (held-out and conversational tasks are left
  out: held-out tasks stay behind their access log, and only our own agent loop drives the simulated user);
  input = the trigger, system prompt = the role and policy text, as our openai agent gets them;
- tools: the role's visible tools, bound per sample (and per epoch) to a freshly reset world of its own, under
  the task's step budget; every call is traced as in our trials;
- scorer: our grader (evalsuite.grading.grader.grade_trial) on that world's end state, the trace and the final
  message; the Score carries every check, so a failure explains itself;
- epochs: the release's trials per task (trial_protocol.trials), so Inspect's pass_at reducers line up with
  our pass@k, and per-epoch scores give our pass^k.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams

from evalsuite.core.records import TaskRecord
from evalsuite.domains.ref import WorldRef
from evalsuite.grading.grader import grade_trial
from evalsuite.releases.release import Release
from evalsuite.tasks.heldout import without_held_out
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.trials.agents.openai_agent import SYSTEM
from evalsuite.trials.trial import TimedEnv, policy_text
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

PURPOSE = "inspect_export"  # why the release's tasks were read (the held-out access log names it)


def exportable(tasks: list[TaskRecord]) -> list[TaskRecord]:
    return [t for t in without_held_out(tasks) if t.trigger.type == "queue_item"]


def system_prompt(task: TaskRecord) -> str:
    return SYSTEM.format(role=task.role.name, doc=task.policy.doc, version=task.policy.version,
                         policy=policy_text(task))


class _Trials:
    """The open trial of each running (sample, epoch): its world, the env its tools call through, the budget."""

    def __init__(self, ref: WorldRef):
        self.ref = ref
        self.open: dict[tuple[str, int], tuple[World, TrialWorld, AgentEnv, dict]] = {}

    def start(self, task: TaskRecord, epoch: int) -> tuple[AgentEnv, dict]:
        world = self.ref.open()  # a world of its own: samples may run concurrently
        trial = world.reset(task.role, policy_text=policy_text(task))
        env, flags = TimedEnv(trial, task.trial_protocol.max_steps), {"budget_exhausted": False}
        self.open[(task.task_id, epoch)] = (world, trial, env, flags)
        return env, flags

    def finish(self, task_id: str, epoch: int) -> tuple[TrialWorld, dict]:
        _, trial, _, flags = self.open.pop((task_id, epoch))
        return trial, flags


def _tool(env: AgentEnv, spec: dict, flags: dict):
    """An Inspect tool that calls one of the trial's tools; errors are told to the model as our agents see them."""

    async def execute(**arguments: Any) -> str:
        try:
            event = env.call(spec["name"], arguments)
        except BudgetExhausted as exc:
            flags["budget_exhausted"] = True
            return f"Error: {exc}"
        if event.outcome == "ok":
            return event.result if isinstance(event.result, str) else json.dumps(event.result, default=str)
        return f"Error: {event.error}"

    schema = spec["parameters"]
    # Inspect wants a description on every parameter; a pydantic schema has at least a title
    props = {k: {**v, "description": v.get("description") or v.get("title") or k}
             for k, v in schema.get("properties", {}).items()}
    params = ToolParams(properties=props, required=schema.get("required", []))
    return ToolDef(execute, name=spec["name"], description=spec["description"], parameters=params).as_tool()


@solver
def world_agent(tasks: dict[str, TaskRecord], trials: _Trials):
    """Reset a world for the sample, give the model the role's tools on it, and let it work until it answers."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = tasks[str(state.sample_id)]
        env, flags = trials.start(task, state.epoch)
        state.messages.insert(0, ChatMessageSystem(content=system_prompt(task)))
        state.tools = [_tool(env, spec, flags) for spec in env.tools]
        return await generate(state, tool_calls="loop")

    return solve


@scorer(metrics=[accuracy(), stderr()])
def evalsuite_grader(tasks: dict[str, TaskRecord], trials: _Trials):
    """Our grader on the sample's end state, trace and final message; budget exhausted fails, as in our trials."""

    async def score(state: TaskState, target: Target) -> Score:
        task = tasks[str(state.sample_id)]
        trial, flags = trials.finish(task.task_id, state.epoch)
        final = state.output.completion if state.output else ""
        verdict = grade_trial(trial, final, task.goal_state, task.role, task.forbidden)
        passed = verdict.passed and not flags["budget_exhausted"]
        failed = [c.name for c in verdict.failures()] + (["step budget"] if flags["budget_exhausted"] else [])
        return Score(value=CORRECT if passed else INCORRECT, answer=final,
                     explanation="passed every check" if passed else "failed: " + "; ".join(failed),
                     metadata={"checks": [c.model_dump(mode="json") for c in verdict.checks],
                               "budget_exhausted": flags["budget_exhausted"], "trace_calls": len(trial.trace)})

    return score


def release_task(release_path: str | Path) -> Task:
    """The Inspect task of a release folder (see the module docstring)."""
    release = Release(Path(release_path))
    tasks = {t.task_id: t for t in exportable(release.tasks(purpose=PURPOSE))}
    trials = _Trials(release.world_ref())
    samples = [Sample(id=t.task_id, input=t.trigger.text, metadata={"category": t.category, "split": t.split,
                                                                      "policy_version": t.policy.version})
               for t in tasks.values()]
    epochs = max((t.trial_protocol.trials for t in tasks.values()), default=1)
    m = release.manifest
    return Task(dataset=MemoryDataset(samples, name=f"{m.suite}-{m.version}"), solver=world_agent(tasks, trials),
                scorer=evalsuite_grader(tasks, trials), epochs=Epochs(epochs),
                metadata={"suite": m.suite, "suite_version": m.version, "task_set_sha256": m.task_set_sha256})
