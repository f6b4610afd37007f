"""The user-simulator interface and the conversation that records both sides into the trial's trace.

A simulator answers the agent's messages (None: the user has left). A Conversation sits between the agent
and the simulator and appends every message, the agent's and the user's, to the trace as a `message`
event, so the transcript is graded and stored with the tool calls. An agent on the trial engine's event loop
talks through `areply`, which awaits a simulator that waits on a model (`async def areply`) and calls any
other's `reply`; `reply` and `turn` serve the callers that are not on a loop (the MCP server's message_user
tool, `evalsuite play`).
When the user holds a device, every message event also carries DEVICE_SEQ: how many calls the device's trace held
when it was said, so the user's phone calls (the trial's `user_trace`) can be placed between the messages (the
user-simulator audit's screen reads them turn by turn).
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Protocol

from evalsuite.core.records import MESSAGE, Simulator, TraceEvent

if TYPE_CHECKING:
    from evalsuite.worlds.trial_world import TrialWorld

OPENING = "Hi! How can I help you today?"
LEFT = "(the customer has left the conversation)"
DEVICE_SEQ = "device_seq"  # a message event's count of the device's calls so far (users holding a device)


class ConversationOver(Exception):
    """No turn is left: the conversation has as many turns at most as the trial has steps."""


class UserSimulator(Protocol):
    settings: Simulator  # part of every trial record and the run identity

    def reply(self, agent_message: str = OPENING) -> str | None: ...

    def use_client(self, client: Any) -> None: ...  # an LLM user's chat client; a scripted user ignores it


class Conversation:
    """The agent's only channel to the user; `turns` counts the user's replies; `device` is the user's phone."""

    def __init__(self, user: UserSimulator, trace: list[TraceEvent], device: TrialWorld | None = None):
        self.user = user
        self.trace = trace
        self.device = device
        self.turns = 0

    @property
    def settings(self) -> Simulator:
        return self.user.settings

    def use_client(self, client: Any) -> None:
        self.user.use_client(client)

    def reply(self, agent_message: str = OPENING, actor: str = "agent") -> str | None:
        self._record(actor, agent_message)
        return self._heard(self.user.reply(agent_message))

    async def areply(self, agent_message: str = OPENING, actor: str = "agent") -> str | None:
        """reply for an agent on an event loop: an LLM user's model call is awaited, a scripted user's reply
        (no I/O) is called."""
        self._record(actor, agent_message)
        areply = getattr(self.user, "areply", None)
        if inspect.iscoroutinefunction(areply):
            return self._heard(await areply(agent_message))
        return self._heard(self.user.reply(agent_message))

    def _heard(self, said: str | None) -> str | None:
        self.turns += 1
        if said is not None:
            self._record("user", said)
        return said

    def turn(self, message: str, limit: int, actor: str = "agent") -> str:
        """One turn for a speaker that reaches the user through a tool or a form (an MCP agent, a person at
        `evalsuite play`): the user's reply, or LEFT; ConversationOver past `limit` turns."""
        if self.turns >= limit:
            raise ConversationOver(f"the conversation is over: {limit} turns")
        said = self.reply(message, actor)
        return LEFT if said is None else said

    def recorded(self, actor: str, text: str) -> None:
        """A turn said in a recording (evalsuite.trials.agents.recorded): into the transcript, the user not asked."""
        self._record(actor, text)

    def _record(self, actor: str, text: str) -> None:
        arguments: dict[str, Any] = {"text": text}
        if self.device is not None:
            arguments[DEVICE_SEQ] = len(self.device.trace)
        self.trace.append(TraceEvent(seq=len(self.trace) + 1, actor=actor, tool=MESSAGE, arguments=arguments,
                                     permitted=True, outcome="ok", kind=MESSAGE))
