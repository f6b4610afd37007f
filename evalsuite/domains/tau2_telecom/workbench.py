"""Where composed telecom tasks are verified (evalsuite.tasks.composition.Workbench): the carrier's world and the
phone's, connected by the sync step (LINK), with the domain's own tools, helpers and assertions.

Set-up steps run as a task's initialization actions do (helpers or tools, untraced, each followed by the sync
step); solution calls run as traced calls and raise when the tool answers with an error; assertions run as the
domain's checks. An attempt is undone lazily: the next step after it resets both worlds and replays what came
before the attempt began (a reset is cheap, and most attempts end with the task, where nothing is replayed).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from evalsuite.core.records import EnvAssertion, ToolCall
from evalsuite.domains.tau2_telecom.issues import INTENTS
from evalsuite.domains.tau2_telecom.link import LINK
from evalsuite.domains.tau2_telecom.task_run import assess, play
from evalsuite.tasks.composition import Entity, Goal, Subtask
from evalsuite.worlds.domain import ToolError
from evalsuite.worlds.link import apply_calls, connect
from evalsuite.worlds.world import World


class TelecomWorkbench:
    def __init__(self, agent: World, phone: World):
        self.worlds = (agent, phone)
        self.log: list[tuple[bool, ToolCall]] = []  # (a solution call?, the call) since the last reset
        self.marks: list[int] = []
        self.undo_to: int | None = None
        self._reset()

    def _reset(self) -> None:
        self.agent, self.phone = (w.reset() for w in self.worlds)
        connect(self.agent, self.phone, LINK)  # as a trial connects them
        self.log = []

    def _current(self) -> None:
        """Undo what ended attempts did, before the next step."""
        if self.undo_to is not None and self.undo_to < len(self.log):
            keep = self.log[:self.undo_to]
            self._reset()
            for solution, call in keep:
                self._do(solution, call)
        self.undo_to = None

    @contextmanager
    def attempt(self) -> Iterator[None]:
        self._current()
        self.marks.append(len(self.log))
        try:
            yield
        finally:
            self.undo_to = self.marks.pop()

    def setup(self, entity: Entity) -> None:
        """The phone learns its owner and number (every task's first initialization action)."""
        self._current()
        if self.log:
            raise RuntimeError("setup: the workbench is not fresh (set up inside an attempt that began fresh)")
        self.initialize(ToolCall(tool="set_user_info", actor="user",
                                 arguments={"name": entity["name"], "phone_number": entity["phone_number"]}))

    def init(self, subtask: Subtask, entity: Entity) -> None:
        subtask.init(self, entity)

    def initialize(self, call: ToolCall) -> None:
        """One set-up step, as an initialization action."""
        self._current()
        self._do(False, call)

    def run(self, call: ToolCall) -> None:
        """One solution call; raises when the tool answers with an error."""
        self._current()
        self._do(True, call)

    def _do(self, solution: bool, call: ToolCall) -> None:
        side = "user" if call.actor == "user" else "assistant"
        self.log.append((solution, call))
        if not solution:
            apply_calls([call], self.agent, self.phone)
            return
        event, = play(self.agent, self.phone, [{"requestor": side, "name": call.tool, "arguments": call.arguments}])
        if event.outcome != "ok":
            raise ToolError(f"{call.tool}: {event.error}")

    def working(self, intent: str, entity: Entity) -> bool:
        """The intent's success check: its success assertions hold."""
        return self.holds(INTENTS[intent].success(entity))

    def holds(self, assertions: Sequence[Goal]) -> bool:
        self._current()
        if not all(isinstance(a, EnvAssertion) for a in assertions):
            raise TypeError("a telecom goal is an EnvAssertion (a named assertion of one side)")
        return all(r.holds for r in assess(self.agent, self.phone, [a.model_dump() for a in assertions]))
