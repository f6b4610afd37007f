"""Faults injected through the real tool code, so a no-op never passes because a fault hid the work."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Fault(Enum):
    ERROR_BEFORE_COMMIT = "error_before_commit"  # the backend fails; the transaction rolls back
    LOST_RESPONSE = "lost_response"  # the write commits but the agent never hears back
    TIMEOUT = "timeout"  # the write commits and the call reports a timeout

    @property
    def agent_message(self) -> str:
        return {"lost_response": "connection reset before the response arrived",
                "timeout": "the call timed out; its effect is unknown"}.get(self.value, "backend error")


@dataclass
class FaultPlan:
    """Which call of which tool fails: {tool: {occurrence (1-based): Fault}}."""

    plan: dict[str, dict[int, Fault]] = field(default_factory=dict)
    _seen: dict[str, int] = field(default_factory=dict)

    def take(self, tool: str) -> Fault | None:
        self._seen[tool] = self._seen.get(tool, 0) + 1
        return self.plan.get(tool, {}).get(self._seen[tool])
