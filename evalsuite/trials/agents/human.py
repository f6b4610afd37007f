"""A person as an agent: the attempt state a person drives, one tool call at a time, graded like an agent's trial.

Each attempt runs run_job in a thread of its own (reset and its hash check, the role's tools under the step
budget, grading, the record's stamp), and whoever drives it (the `evalsuite play` page) hands it one command at
a time. The person is shown what an MCP agent is shown (task_view and the tool schemas), never the goal state or
the reference solution; held-out tasks are never offered, and every task opened is written to the access log.
The person is an agent config of kind human named `human:NAME`, so the scorecard can keep people apart from
agents. A person is their name's key (evalsuite.core.people), not its spelling: "Grace", "GRACE" and "Grace."
sign in as one person, shown by the spelling first seen (in the run folder, or at this page).

Each attempt takes one command at a time under its own lock (a form sent twice waits its turn; past
`PlayLimits.queued_per_attempt` waiting it is refused), while attempts of different people run side by side; what
attempts share (the free worlds, the run folder, who has what open) is changed under the desk's lock. Open
attempts are capped: one per person, `PlayLimits.open_total` in all (each holds a world and a thread).
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsuite.core.identity import AgentConfig, RunIdentity, identity_sha256
from evalsuite.core.people import person_key
from evalsuite.core.records import TaskRecord, TraceEvent
from evalsuite.domains.ref import WorldRef
from evalsuite.tasks.heldout import log_access, without_held_out
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.trials.chunks import merge_records
from evalsuite.trials.jobs import Stamp, run_job
from evalsuite.trials.mcp_server import task_view
from evalsuite.trials.tracelog import (
    SUMMARY,
    TRACES,
    FolderBusyError,
    TrialRecord,
    folder_lock,
    read_traces,
    write_summary,
)
from evalsuite.trials.users.base import ConversationOver
from evalsuite.worlds.world import World

PURPOSE = "human_baseline"  # the access log's word for a task read by `evalsuite play`
HUMAN = "human"
REPLY_SECONDS = 300.0  # a tool call or a grade takes milliseconds; this long means the attempt's thread is stuck
# How long recording an attempt waits for the run folder's lock: enough for another short writer (a second play
# page, a rescore); an `evalsuite run` holds it for its whole run, and then the person is told and may retry.
SAVE_SECONDS = 3.0


@dataclass(frozen=True)
class PlayLimits:
    """How much one play page holds at once: open attempts in all (each a reset world and a thread until it
    ends), commands waiting on one attempt (a form sent again and again queues no further), and how long an
    attempt may sit idle before it is ended to free its slot."""

    open_total: int = 16
    queued_per_attempt: int = 4
    # An attempt with no command for this long ends as budget_exhausted when the page needs its slot (a person who
    # walked away would otherwise hold one of open_total until the server stops): its calls so far are its record.
    idle_seconds: float = 1800.0


class Refused(Exception):
    """A command the page does not carry out, and why, in a sentence for the person (`kind`: over, busy, open,
    attempted or full)."""

    def __init__(self, kind: str, text: str):
        super().__init__(text)
        self.kind, self.text = kind, text


def playable(tasks: list[TaskRecord]) -> list[TaskRecord]:
    """The tasks a person may be offered: never a held-out one. On a conversational task the person talks to
    the task's simulated user through a message form, as an MCP agent does through message_user."""
    return without_held_out(tasks)


def person_config(name: str) -> AgentConfig:
    """A person as an agent config: one per name, so records are keyed by who made them."""
    return AgentConfig(name=f"{HUMAN}:{name}", kind=HUMAN)


@dataclass(frozen=True)
class Desk:
    """What people are offered: the tasks in order, the world to reset for each attempt, and the identity and
    run seed of the run folder their records join."""

    label: str  # "suite version", shown on every page
    tasks: list[TaskRecord]
    world_ref: WorldRef
    identity: RunIdentity
    run_seed: int
    sample: int | None = None  # the --sample the tasks were drawn with, shown on the task list


@dataclass
class _Ready:
    """The attempt's first reply: what the person is shown, built from the trial's own env."""

    view: dict[str, Any]
    tools: list[dict[str, Any]]
    talks: bool  # a user to talk to (dual control)


@dataclass
class _Said:
    """One turn of the conversation: the person's message and the user's reply (or why there was none)."""

    message: str
    reply: str


MESSAGE = object()  # the command that sends a message to the user instead of calling a tool
IDLE = object()  # the command that ends an attempt left idle (Attempts._expire_idle)


class Person:
    """The agent of one attempt: hands its driver the task view, then makes the calls the driver sends."""

    def __init__(self, name: str):
        self.name = name
        self.commands: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        env.actor = HUMAN
        self.replies.put(_Ready(task_view(task, env), env.tools, env.user is not None))
        while True:
            tool, payload = self.commands.get()
            if tool is None:
                return payload  # the final message; the trial is graded on return
            if tool is IDLE:
                raise BudgetExhausted(payload)  # graded as it stands, recorded as out of time
            if tool is MESSAGE:
                self.replies.put(_Said(payload, _turn(env, payload)))
            else:
                self.replies.put(env.call(tool, payload))  # a call past the budget raises and ends the trial


def _turn(env: AgentEnv, message: str) -> str:
    try:
        return env.user.turn(message, env.max_steps, HUMAN)
    except ConversationOver as exc:
        return f"({exc})"


class Attempt:
    """One person's attempt at one task: a trial running in its own thread until the final message."""

    def __init__(self, person: str, task: TaskRecord, world: World, stamp: Stamp):
        self.person, self.task, self.world = person, task, world
        self.agent = Person(person_config(person).name)
        self.calls: list[TraceEvent] = []
        self.conversation: list[tuple[str, str]] = []  # (who, text): "customer" or "you"
        self.talks = False
        self.record: TrialRecord | None = None
        self.unsaved: str | None = None  # why the ended attempt's record is not in the run folder yet
        self.view: dict[str, Any] = {}
        self.tools: list[dict[str, Any]] = []
        self.lock = threading.Lock()  # one command at a time on this attempt
        self.queued = 0  # commands holding or waiting for the lock (changed under the desk's lock)
        self.active = time.monotonic()  # when the person last sent a command
        threading.Thread(target=self._run, args=(stamp,), daemon=True, name=f"play-{task.task_id}").start()
        self._take(self.agent.replies.get(timeout=REPLY_SECONDS))

    def _run(self, stamp: Stamp) -> None:
        self.agent.replies.put(run_job(self.world, self.task, self.agent, 0, stamp))  # an error is an infra record

    def call(self, tool: str, arguments: dict[str, Any]) -> None:
        self._send(tool, arguments)

    def message(self, text: str) -> None:
        if self.talks:
            self._send(MESSAGE, text)

    def submit(self, message: str) -> None:
        self._send(None, message)

    def end_if_idle(self, seconds: float) -> bool:
        """End the attempt as out of time when no command came for `seconds` and none is being carried out."""
        idle = time.monotonic() - self.active
        if self.record is not None or idle < seconds or not self.lock.acquire(blocking=False):
            return False
        try:
            self._send(IDLE, f"idle for {idle:.0f} s (the page's limit is {seconds:g} s): ended to free its slot")
        finally:
            self.lock.release()
        return True

    def _send(self, tool: Any, payload: Any) -> None:
        if self.record is not None:
            raise RuntimeError(f"attempt at {self.task.task_id} is over")
        self.active = time.monotonic()
        self.agent.commands.put((tool, payload))
        self._take(self.agent.replies.get(timeout=REPLY_SECONDS))

    def _take(self, reply: Any) -> None:
        if isinstance(reply, _Ready):
            self.view, self.tools, self.talks = reply.view, reply.tools, reply.talks
            if self.talks:  # the user opened the conversation when greeted
                self.conversation.append(("customer", self.view["trigger_text"]))
        elif isinstance(reply, _Said):
            self.conversation += [("you", reply.message), ("customer", reply.reply)]
        elif isinstance(reply, TraceEvent):
            self.calls.append(reply)
        else:  # the trial ended: submitted, out of budget, or a reset or harness failure
            self.record = reply


class Attempts:
    """Everyone's attempts at one desk: the open one per person, worlds free for the next, the run folder."""

    def __init__(self, desk: Desk, out_dir: Path, limits: PlayLimits | None = None):
        self.desk, self.out_dir = desk, Path(out_dir)
        self.limits = limits or PlayLimits()
        self.by_id = {t.task_id: t for t in desk.tasks}
        self.lock = threading.Lock()  # what attempts share: open, done, people, free worlds, the traces file
        self.open: dict[str, Attempt] = {}
        self.last: dict[str, TrialRecord] = {}
        self.free_worlds: list[World] = []
        self.out_dir.mkdir(parents=True, exist_ok=True)
        # read only: a torn tail is repaired under the folder's lock, when an attempt is recorded
        self.done = {(r.agent, r.task_id) for r in read_traces(self.out_dir / TRACES).records}
        self.people: dict[str, str] = {}  # a name's key -> the spelling records carry
        for agent, _ in sorted(self.done):
            if agent.startswith(f"{HUMAN}:"):
                self.people.setdefault(person_key(agent.removeprefix(f"{HUMAN}:")), agent.removeprefix(f"{HUMAN}:"))

    def person(self, name: str) -> str:
        """The person a signed-in name is: the spelling first seen of that name's key (raises PersonNameError
        for a name with no letter or digit)."""
        key = person_key(name)
        with self.lock:
            return self.people.setdefault(key, name)

    def attempted(self, person: str) -> set[str]:
        key = person_key(person)
        return {task_id for agent, task_id in self.done
                if agent.startswith(f"{HUMAN}:") and person_key(agent.removeprefix(f"{HUMAN}:")) == key}

    def start(self, person: str, task_id: str) -> None:
        """Open a task for a person (logged first: opening is reading), resetting a world for the attempt.
        A person has one attempt open at a time and one attempt per task, and the page holds
        `limits.open_total` open attempts; anything past these is Refused."""
        with self.lock:
            self._may_open(person, task_id)
            task = self.by_id[task_id]
            log_access({"purpose": PURPOSE, "what": self.desk.label, "person": person, "opened": [task_id]})
            config = person_config(person)
            identity = self.desk.identity.with_agents([config])
            fields = identity.fields(config.name)
            stamp = Stamp(fields=fields, run_seed=self.desk.run_seed,
                          identity_sha256=identity_sha256(fields, self.desk.run_seed))
            world = self.free_worlds.pop() if self.free_worlds else self.desk.world_ref.open()
            attempt = Attempt(person, task, world, stamp)
            self.open[person] = attempt
            self._settle(attempt)

    def _may_open(self, person: str, task_id: str) -> None:
        for attempt in list(self.open.values()):  # a slot held by someone who walked away is given back first
            if attempt.end_if_idle(self.limits.idle_seconds):
                self._settle(attempt)
        if person in self.open:
            raise Refused("open", f"You have an attempt at {self.open[person].task.task_id} open: end it before "
                                  "opening another.")
        if task_id in self.attempted(person):
            raise Refused("attempted", f"You have attempted {task_id} already: one attempt per task.")
        if len(self.open) >= self.limits.open_total:
            raise Refused("full", f"{len(self.open)} attempts are open on this page, the most it holds "
                                  f"({self.limits.open_total}); try again when one has ended.")

    def _settle(self, attempt: Attempt) -> None:
        """An attempt that has ended: its record joins the run folder (under the folder's lock, so its line never
        interleaves with another writer's) and its world is free again. When another process holds the lock
        past SAVE_SECONDS the attempt stays open, ended and graded, with the reason on its page (unsaved), to be
        recorded again: the person's work is kept, not dropped. Called under the desk's lock."""
        if attempt.record is None or self.open.get(attempt.person) is not attempt:  # running, or recorded already
            return
        try:
            with folder_lock(self.out_dir, wait=SAVE_SECONDS):
                merge_records(self.out_dir, [attempt.record])
                write_summary(read_traces(self.out_dir / TRACES).records, self.out_dir / SUMMARY)
        except FolderBusyError:
            attempt.unsaved = (f"Another process is writing the run folder {self.out_dir} (perhaps an `evalsuite "
                               f"run` into it), so your attempt at {attempt.task.task_id} is not recorded yet.")
            return
        attempt.unsaved = None
        self.done.add((attempt.record.agent, attempt.record.task_id))
        self.last[attempt.person] = attempt.record
        self.open.pop(attempt.person, None)
        self.free_worlds.append(attempt.world)

    def call(self, attempt: Attempt, tool: str, arguments: dict[str, Any]) -> None:
        self._act(attempt, attempt.call, tool, arguments)

    def submit(self, attempt: Attempt, message: str) -> None:
        self._act(attempt, attempt.submit, message)

    def message(self, attempt: Attempt, text: str) -> None:
        self._act(attempt, attempt.message, text)

    def save(self, attempt: Attempt) -> None:
        """Record an ended attempt again (its page offers it while the record is unsaved)."""
        with self._turn(attempt), self.lock:
            self._settle(attempt)

    def _act(self, attempt: Attempt, act: Any, *args: Any) -> None:
        """One command of the person's, in its turn on the attempt; on an attempt that has ended (a form sent
        again, or waiting behind the submission) it is Refused, and the record saved if it is not yet."""
        with self._turn(attempt):
            over = attempt.record is not None
            if not over:
                act(*args)
            with self.lock:
                self._settle(attempt)
        if over:
            raise Refused("over", f"Your attempt at {attempt.task.task_id} has ended, so this was not done; "
                                  "the calls made before it ended are its record.")

    @contextmanager
    def _turn(self, attempt: Attempt) -> Iterator[None]:
        """The attempt's lock, waited for in order with at most `limits.queued_per_attempt` commands in line."""
        with self.lock:
            if attempt.queued >= self.limits.queued_per_attempt:
                raise Refused("busy", f"{attempt.queued} commands on your attempt at {attempt.task.task_id} are "
                                      "already waiting their turn; this one was not done. Reload the page.")
            attempt.queued += 1
        try:
            with attempt.lock:
                yield
        finally:
            with self.lock:
                attempt.queued -= 1
