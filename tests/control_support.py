"""Named resolutions (a task's negative controls, near misses, alternatives) played as acceptance plays them, and
the failing checks of a verdict by name."""
from __future__ import annotations

from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.trials.agents.baselines import ReferenceAgent
from evalsuite.trials.trial import TrialResult, run_trial
from evalsuite.worlds.world import World


def play(world: World, task: TaskRecord, calls: list[ToolCall], message: str = "") -> TrialResult:
    """The calls played as acceptance plays a control: the reference agent on a copy carrying them."""
    return run_trial(world, task.model_copy(update={"reference_solution": calls, "reference_answer": message}),
                     ReferenceAgent())


def failing(result: TrialResult) -> dict[str, str]:
    """The verdict's failed checks: name -> detail."""
    return {c.name: c.detail for c in result.verdict.failures()}
