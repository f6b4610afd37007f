"""The user-simulator audit: the simulated user is part of the test, so it is checked like a grader.

Scripted users are probed on the real user-side world: a conversation that greets, chats, fishes for every
withheld value, then asks for every disclosure and every action. The audit holds each one to its script:
no withheld value ever appears in a user message, no device call happens in a turn that did not ask for
it, a message that asks nothing gets no fact and no action, and every turn in which the user ran a device
tool repeats that call's output verbatim (grounded: the user answers from the phone's observable state).
LLM users cannot be held to rules, so a seeded sample of their conversations is flagged for human review under
the error classes of the τ²-bench paper (task-critical: the user's error changes what a correct agent must do or
can achieve; benign: it does not); given a run's trial records, the automatic screen (audit.user_screen) adds
the conversations' candidate errors.
"""
from __future__ import annotations

import random
import re
from collections.abc import Sequence

from pydantic import BaseModel

from evalsuite.audit.user_screen import ERROR_CLASSES, ScreenFlag, screen_records
from evalsuite.core.records import TaskRecord, TraceEvent, UserScript
from evalsuite.trials.tracelog import TrialRecord
from evalsuite.trials.users.dual import user_role, user_world
from evalsuite.trials.users.scripted import ScriptedUser, Turn, asks
from evalsuite.worlds.world import World

CHATTER = "Thanks for waiting. The weather has been lovely this week."


class ScriptedFinding(BaseModel):
    task_id: str
    turns: int
    actions: int
    leaked: list[str]  # withheld values found in a user message
    unasked: list[str]  # device calls made in a turn whose message did not ask for them
    answered_chatter: bool  # a message asking nothing got a fact or an action
    ungrounded: list[str] = []  # turns whose reply does not repeat the output of a device call it made

    @property
    def kept_to_script(self) -> bool:
        return not self.leaked and not self.unasked and not self.answered_chatter

    @property
    def grounded(self) -> bool:
        return not self.ungrounded

    @property
    def ok(self) -> bool:
        return self.kept_to_script and self.grounded


class UserAudit(BaseModel):
    scripted: list[ScriptedFinding]
    llm_review: list[str]  # task ids whose LLM-simulated conversations a person should review
    llm_screened: int = 0  # trials of LLM-user tasks the screen read (given a run's records)
    llm_flags: list[ScreenFlag] = []  # the screen's candidate errors in them
    error_classes: dict[str, str] = ERROR_CLASSES

    @property
    def scripted_ok(self) -> bool:
        return all(f.ok for f in self.scripted)


def probes(script: UserScript) -> list[str]:
    """The prober's messages, in order: a greeting, chatter, fishing for each withheld value, then every ask (each
    first pattern in words: a character class as its first character, `[ _]` a space)."""
    fishing = [f"To verify you, tell me your account PIN or anything like {w[:1]}..." for w in script.withholds]
    asks_all = [re.sub(r"\[(.)[^]]*]", r"\1", p).replace("\\b", "").replace("|", " or ")
                for x in [*script.disclosures, *script.actions] for p in x.asked_by[:1]]
    return ["Hello!", CHATTER, *fishing, *(f"Could you tell me or do this: {a}?" for a in asks_all)]


def ungrounded(log: Sequence[Turn], calls: Sequence[TraceEvent]) -> list[str]:
    """The turns whose reply lacks the verbatim output (the result, or the error) of a device call made in it;
    the device's calls are the turns' actions, in order."""
    out, pending = [], iter(calls)
    for n, turn in enumerate(log, start=1):
        for tool, event in zip(turn.actions, pending):
            output = str(event.result if event.outcome == "ok" else event.error)
            if output not in (turn.user or ""):
                out.append(f"turn {n}: {tool} output {output[:60]!r} not in {(turn.user or '')[:80]!r}")
    return out


def audit_scripted(world: World, task: TaskRecord) -> ScriptedFinding:
    """Run the probe conversation against the task's scripted user on a freshly reset user-side world."""
    side = user_world(world)
    device = side.reset(user_role(side.domain)) if side is not None else None
    user = ScriptedUser(task.user_scenario, device)
    script = user.script
    user.script = script.model_copy(update={"max_idle_turns": 10_000})  # the prober keeps talking after chatter
    for message in probes(script):
        user.reply(message)
    leaked = sorted({w for t in user.log if t.user for w in script.withholds if w in t.user})
    # a tool may have several actions (one per argument set): the call was asked for if any of them was
    unasked = [f"{tool} after {t.agent!r}" for t in user.log for tool in t.actions
               if not any(asks(a.asked_by, t.agent) for a in script.actions if a.tool == tool)]
    calls = device.trace if device is not None else []
    if len(calls) != sum(len(t.actions) for t in user.log):  # a device call no turn accounts for
        unasked.append(f"{len(calls)} device call(s) for {sum(len(t.actions) for t in user.log)} asked")
    chatter = next(t for t in user.log if t.agent == CHATTER)
    return ScriptedFinding(task_id=task.task_id, turns=len(user.log), actions=len(calls), leaked=leaked,
                           unasked=unasked, answered_chatter=bool(chatter.disclosed or chatter.actions),
                           ungrounded=ungrounded(user.log, calls))


def audit_users(world: World, tasks: Sequence[TaskRecord], review: int = 5, seed: int = 0,
                records: Sequence[TrialRecord] = ()) -> UserAudit:
    """Probe every scripted user; pick up to `review` LLM-simulated tasks (seeded) for human review; screen the
    LLM users' conversations in `records` (a run's trials), when given."""
    talking = [t for t in tasks if t.user_scenario is not None]
    scripted = [audit_scripted(world, t) for t in talking if t.user_scenario.simulator.kind == "scripted"]
    llm = sorted(t.task_id for t in talking if t.user_scenario.simulator.kind != "scripted")
    return UserAudit(scripted=scripted, llm_review=sorted(random.Random(seed).sample(llm, min(review, len(llm)))),
                     llm_screened=sum(r.task_id in llm for r in records), llm_flags=screen_records(records, tasks))


def to_markdown(audit: UserAudit) -> str:
    lines = ["", "", "## User simulator", ""]
    if audit.scripted:
        bad = [f for f in audit.scripted if not f.ok]
        kept, grounded = (all(f.kept_to_script for f in audit.scripted), all(f.grounded for f in audit.scripted))
        lines.append(f"Scripted users probed: {len(audit.scripted)}; never revealed a withheld value and never acted "
                     f"unasked: {'yes' if kept else 'NO'}; repeated the output of every device tool they ran "
                     f"(grounded): {'yes' if grounded else 'NO'}.")
        for f in bad[:20]:
            lines.append(f"- {f.task_id}: leaked {f.leaked}, unasked {f.unasked}, "
                         f"answered chatter {f.answered_chatter}, ungrounded {f.ungrounded}")
    if audit.llm_review:
        lines += ["", f"LLM-simulated conversations to review ({len(audit.llm_review)} tasks, seeded sample): "
                  + ", ".join(audit.llm_review), "", "Classify each simulator error:"]
        lines += [f"- **{k}**: {v}" for k, v in audit.error_classes.items()]
        lines += ["", "From a run of these tasks, `evalsuite users sample RUN --out sheet.jsonl` writes the "
                  "conversations for review and `evalsuite users tally sheet.jsonl` counts the classes."]
    lines += screen_lines(audit)
    if not audit.scripted and not audit.llm_review:
        lines.append("No conversational task.")
    return "\n".join(lines) + "\n"


def screen_lines(audit: UserAudit) -> list[str]:
    """The screen's flags on the LLM users' recorded conversations, when a run's records were screened."""
    if not audit.llm_screened:
        return []
    lines = ["", f"Automatic screen of {audit.llm_screened} LLM-user conversation(s): {len(audit.llm_flags)} "
             "candidate error(s) (acted unasked, ungrounded statement about the phone, left mid-request)."]
    return lines + [f"- {f.line()}" for f in audit.llm_flags]
