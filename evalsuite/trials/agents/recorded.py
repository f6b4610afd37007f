"""A recorded trial played back as an agent: its messages into the transcript, its tool calls in order on the
trial's freshly reset world (open loop: the recorded call, whatever the world now answers), its last message.

It runs through run_trial like any agent, so a recorded trial is reset, verified, graded and recorded exactly as
a live one is (evalsuite.importers.recorded turns the files of other harnesses into turns).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from evalsuite.core.agent_limits import message_over
from evalsuite.core.records import TaskRecord
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted


class Turn(BaseModel):
    """One step of a recorded conversation: a message (text) or a tool call with the output it got back then."""

    model_config = ConfigDict(frozen=True)

    actor: Literal["agent", "user"]
    text: str | None = None  # a message
    tool: str | None = None  # a tool call
    arguments: dict[str, Any] = {}
    output: str | None = None  # the tool's output as recorded (None: the recording holds none)
    error: bool | None = None  # whether the recorded output was an error

    @property
    def is_call(self) -> bool:
        return self.tool is not None


class RecordedAgent:
    """Plays one recorded trial back; it ends with the last message the recorded agent said, or, when the
    recording ended without the agent or the user stopping (`unfinished` says how), out of budget, as a live
    trial that ran out of steps ends. A message of the agent over the final-message cap a live agent has
    (`message_bytes`, evalsuite.core.agent_limits) ends the replay there, out of budget, as a live agent's
    submit_answer over it does: it is neither kept nor graded."""

    def __init__(self, name: str, turns: list[Turn], unfinished: str | None = None,
                 message_bytes: int | None = None):
        self.name = name
        self.turns = turns
        self.unfinished = unfinished
        self.message_bytes = message_bytes

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        for turn in self.turns:
            over = self._over(turn)
            if over:
                raise BudgetExhausted(over)
            if turn.is_call:
                env.call(turn.tool or "", turn.arguments)
            elif env.user is not None:  # a queue task has no transcript: its messages are only the last one
                env.user.recorded(turn.actor, turn.text or "")
        if self.unfinished:
            raise BudgetExhausted(f"the recorded trial ended without a stop ({self.unfinished})")
        return final_message(self.turns)

    def _over(self, turn: Turn) -> str | None:
        if self.message_bytes is None or turn.is_call or turn.actor != "agent":
            return None
        return message_over(turn.text or "", self.message_bytes)


def final_message(turns: list[Turn]) -> str:
    """The recorded agent's last message (what evalsuite's output checks read), "" when it said nothing."""
    said = [t.text for t in turns if not t.is_call and t.actor == "agent" and t.text]
    return said[-1] if said else ""
