"""An automatic screen of LLM-simulated users' recorded conversations: candidates for the human review.

An LLM user cannot be held to rules as a scripted one is, but its trial record shows what it said (the trace's
message events) and what it did on its phone (`user_trace`), placed between the messages by each message's
DEVICE_SEQ. The screen reads the conversation turn by turn (an agent message, the phone calls the user made
after it, the user's reply or its leaving) and flags three things, each with the τ²-bench paper's error classes
(ERROR_CLASSES) it is a candidate for:

- acted unasked: a write on the phone in a turn whose agent message asked for nothing on the phone
  (task-critical: the user changed what the agent must do);
- ungrounded: a user message stating the phone's status (signal, data, airplane mode, the status bar…) when
  the user has seen no phone-tool result in that turn or before it (benign or task-critical: a person decides).
  The user's opening turn is exempt: it states the complaint of its instructions;
- left mid-request: the user left right after an agent message that asked them to do something on the phone,
  without doing anything (task-critical: the agent is left unable to finish).

The patterns are a screen, not a judge: a flag is a candidate a reviewer confirms or dismisses.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from evalsuite.core.records import MESSAGE, TaskRecord, TraceEvent
from evalsuite.trials.tracelog import TrialRecord
from evalsuite.trials.users.base import DEVICE_SEQ

ERROR_CLASSES = {"task-critical": "the simulator's error changes what a correct agent must do or can achieve",
                 "benign": "the simulator strays from its instructions without changing the task's outcome"}
ACTED, UNGROUNDED, LEFT_MID_REQUEST = "acted unasked", "ungrounded", "left mid-request"
CANDIDATES = {ACTED: ["task-critical"], UNGROUNDED: ["benign", "task-critical"], LEFT_MID_REQUEST: ["task-critical"]}


def _words(*words: str) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(words) + r")\b", re.I)


# an agent asks for something on the phone: a request (or an imperative) with a doing verb and a thing on a phone
REQUEST = re.compile(r"\b(please|could you|can you|would you|will you|try|go ahead and|need you to|"
                     r"you (need|should|will need|'ll need) to)\b|^\s*(toggle|turn|switch|restart|reboot|reseat|"
                     r"reset|check|run|open|tap|enable|disable|connect|disconnect|grant)\b", re.I)
DOING = _words("toggle", "turn", "switch", "restart", "reboot", "re-?seat", "reset", "check", "run", "open", "tap",
               "enable", "disable", "connect", "disconnect", "grant", "look at", "set", "change", "pay", "accept")
PHONE_THING = _words("phone", "device", "airplane", "wi-?fi", "data", "sim", "roaming", "apn", "vpn", "status bar",
                     "signal", "speed test", "settings?", "apps?", "network", "mode", "mms", "payment request",
                     "permissions?")
# a user states the phone's status
STATUS = _words("signal", "bars?", "no service", "status bar", "airplane mode", "mobile data", "wi-?fi", "roaming",
                "sim card", "speed", "mbps", "network", "5g", "4g", "lte", "3g", "apn", "vpn", "battery",
                "connected", "excellent", "poor")


class ScreenFlag(BaseModel):
    task_id: str = ""
    agent: str = ""
    trial: int = 0
    turn: int  # the agent message it follows, counted from 1 (turn 1: the greeting and the user's opening)
    check: str  # ACTED, UNGROUNDED or LEFT_MID_REQUEST
    candidates: list[str]  # the ERROR_CLASSES it may fall under
    detail: str

    def said(self) -> str:
        return f"turn {self.turn}: {self.check} [{' or '.join(self.candidates)}]: {self.detail}"

    def line(self) -> str:
        return f"{self.task_id} ({self.agent}, trial {self.trial}) {self.said()}"


@dataclass
class Turn:
    """An agent message, the user's phone calls after it, and the user's reply (None: the user left)."""

    agent: str
    after: int  # the phone's calls so far when the agent spoke
    user: str | None = None
    calls: list[TraceEvent] = field(default_factory=list)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text.replace("_", " ")) if s.strip()]


def asks_phone(message: str) -> bool:
    """Does an agent message ask the user to do or check something on their phone?"""
    return any(REQUEST.search(s) and DOING.search(s) and PHONE_THING.search(s) for s in _sentences(message))


def states_status(message: str) -> list[str]:
    """The sentences of a user message that state something about the phone (questions aside)."""
    return [s for s in _sentences(message) if STATUS.search(s) and not s.rstrip().endswith("?")]


def turns(trace: Sequence[TraceEvent], user_trace: Sequence[TraceEvent]) -> list[Turn]:
    """The conversation of a trial as turns; the user's phone calls placed by the messages' DEVICE_SEQ."""
    messages = [e for e in trace if e.kind == MESSAGE]
    calls = [e for e in user_trace if e.actor == "user"]
    if calls and not any(DEVICE_SEQ in m.arguments for m in messages):
        raise ValueError(f"trace: no message carries {DEVICE_SEQ!r}; the user's phone calls cannot be placed "
                         "between the messages (a trial recorded before the field existed)")
    out: list[Turn] = []
    for m in messages:
        text = str(m.arguments.get("text", ""))
        if m.actor != "user":
            out.append(Turn(agent=text, after=int(m.arguments.get(DEVICE_SEQ, 0))))
        elif out:
            out[-1].user = text
    for turn, following in zip(out, [*out[1:], None]):
        turn.calls = [c for c in calls if turn.after < c.seq and (following is None or c.seq <= following.after)]
    return out


def screen_trial(trace: Sequence[TraceEvent], user_trace: Sequence[TraceEvent]) -> list[ScreenFlag]:
    """The screen's flags on one trial's conversation (TrialResult.trace and user_trace)."""
    flags, seen = [], False
    talk = turns(trace, user_trace)
    for n, t in enumerate(talk, start=1):
        asked = asks_phone(t.agent)
        writes = [c.tool for c in t.calls if c.kind == "write"]
        if writes and not asked:
            flags.append((n, ACTED, f"ran {', '.join(writes)} after {t.agent!r}"))
        seen = seen or any(c.outcome == "ok" for c in t.calls)
        stated = states_status(t.user) if t.user and n > 1 else []
        if stated and not seen:
            flags.append((n, UNGROUNDED, f"said {stated[0]!r} with no phone-tool result seen"))
        if t.user is None and n == len(talk) and asked and not t.calls:
            flags.append((n, LEFT_MID_REQUEST, f"left after {t.agent!r}"))
    return [ScreenFlag(turn=n, check=c, candidates=CANDIDATES[c], detail=d) for n, c, d in flags]


def screen_records(records: Sequence[TrialRecord], tasks: Sequence[TaskRecord]) -> list[ScreenFlag]:
    """The screen over every trial of a task whose user is an LLM, each flag naming its trial."""
    llm = {t.task_id for t in tasks if t.user_scenario is not None and t.user_scenario.simulator.kind != "scripted"}
    return [f.model_copy(update={"task_id": r.task_id, "agent": r.agent, "trial": r.trial})
            for r in records if r.task_id in llm for f in screen_trial(r.trace, r.user_trace)]
