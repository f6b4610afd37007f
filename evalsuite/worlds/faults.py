"""Faults injected through the real tool code, so a no-op never passes because a fault hid the work.

A task's trial protocol names its fault plans (records.FaultPlanSpec); `plan_for_trial` turns the one a trial
runs under into the FaultPlan that `TrialWorld.call` consults on every call.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from evalsuite.core.records import FaultPlanSpec, TrialProtocol


class Fault(Enum):
    ERROR_BEFORE_COMMIT = "error_before_commit"  # the backend fails; the transaction rolls back
    LOST_RESPONSE = "lost_response"  # the write commits but the agent never hears back
    TIMEOUT = "timeout"  # the write commits and the call reports a timeout
    SLOW = "slow"  # the call takes world-clock time; past the plan's deadline the caller sees a timeout

    @property
    def agent_message(self) -> str:
        return {"lost_response": "connection reset before the response arrived",
                "timeout": "the call timed out; its effect is unknown",
                "slow": "the call timed out; its effect is unknown"}.get(self.value, "backend error")


@dataclass
class FaultPlan:
    """Which call of which tool fails: {tool: {occurrence (1-based): Fault}}; a slow call's world-clock latency
    by (tool, occurrence), and the deadline past which a slow call is reported as timed out."""

    plan: dict[str, dict[int, Fault]] = field(default_factory=dict)
    latency: dict[tuple[str, int], float] = field(default_factory=dict)
    deadline_seconds: float | None = None
    name: str | None = None
    _seen: dict[str, int] = field(default_factory=dict)

    def take(self, tool: str) -> Fault | None:
        self._seen[tool] = self._seen.get(tool, 0) + 1
        return self.plan.get(tool, {}).get(self._seen[tool])

    def latency_of(self, tool: str) -> float:
        """The world-clock seconds the current call of `tool` takes (after `take`)."""
        return self.latency.get((tool, self._seen.get(tool, 0)), 0.0)

    def past_deadline(self, seconds: float) -> bool:
        return self.deadline_seconds is not None and seconds > self.deadline_seconds

    @classmethod
    def from_spec(cls, spec: FaultPlanSpec) -> FaultPlan:
        plan: dict[str, dict[int, Fault]] = {}
        latency = {}
        for f in spec.faults:
            if f.call in plan.get(f.tool, {}):
                raise ValueError(f"fault plan {spec.name}: call {f.call} of {f.tool} is faulted twice")
            plan.setdefault(f.tool, {})[f.call] = Fault(f.kind)
            if f.kind == "slow":
                latency[(f.tool, f.call)] = f.latency_seconds or 0.0
        return cls(plan=plan, latency=latency, deadline_seconds=spec.deadline_seconds, name=spec.name)


def schedule(protocol: TrialProtocol) -> list[FaultPlanSpec | None]:
    """The conditions a task's trials cycle through: None (unfaulted) unless faulted_only, then each plan."""
    return ([] if protocol.faulted_only and protocol.fault_plans else [None]) + list(protocol.fault_plans)


def plan_for_trial(protocol: TrialProtocol, trial: int) -> FaultPlan | None:
    """The fault plan trial number `trial` of a task runs under (None: unfaulted)."""
    conditions = schedule(protocol)
    spec = conditions[trial % len(conditions)]
    return FaultPlan.from_spec(spec) if spec is not None else None
