"""One recorded trial regraded: replayed open loop on a freshly reset world through run_trial (so reset, verified,
graded and recorded exactly as a live trial is), every call whose output differs from the recorded one, the
original's own DB check on the same calls, and, where evalsuite and the recorded reward disagree, why.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalsuite.core.agent_limits import AgentLimits
from evalsuite.core.records import MESSAGE, Check, TaskRecord, TraceEvent
from evalsuite.grading.grader import Verdict, output_present, state_checks
from evalsuite.importers.peers import PeerCheck
from evalsuite.importers.recorded.formats import RecordedTrial
from evalsuite.importers.recorded.tasks import gold_writes
from evalsuite.scoring.recorded import CallDiff, TrialNote
from evalsuite.trials.agents.openai_agent import observation
from evalsuite.trials.agents.recorded import RecordedAgent, Turn, final_message
from evalsuite.trials.trial import TrialResult, policy_text, run_trial
from evalsuite.worlds.faults import FaultPlan
from evalsuite.worlds.world import World


@dataclass
class Regraded:
    result: TrialResult
    note: TrialNote


def regrade(world: World, task: TaskRecord, rec: RecordedTrial, agent: str, peer: PeerCheck | None) -> Regraded:
    """Replay and grade one recorded trial; no fault is injected (the recorded calls met none of ours)."""
    played = RecordedAgent(agent, rec.turns, rec.unfinished, AgentLimits.from_env().message_bytes)
    result = run_trial(world, task, played, rec.trial, faults=FaultPlan())
    final = final_message(rec.turns)
    original = peer(task, _writes_replayed(world, task, rec.turns), final) if peer else None
    note = TrialNote(task_id=task.task_id, trial=rec.trial, recorded_task=rec.task_ref, recorded_reward=rec.reward,
                     state_passed=state_passed(result.verdict), original_db=original,
                     diffs=call_diffs(rec.turns, result.trace, task))
    recorded = note.recorded_passed
    if recorded is not None and recorded != result.passed:
        note.reason = disagreement(note, result, rec, task)
    return Regraded(result, note)


def _writes_replayed(world: World, task: TaskRecord, turns: Sequence[Turn]):
    """The original's predicted state: a fresh world, only the write calls replayed in order (TOOLS_SPEC §8b)."""
    tools = world.domain.tools
    trial = world.reset(task.role, policy_text=policy_text(task))
    for t in turns:
        if t.is_call and t.tool in tools and tools[t.tool].kind == "write":
            trial.call(t.tool, t.arguments)
    return trial


def state_passed(verdict: Verdict | None) -> bool:
    """evalsuite's end-state checks (the DB basis) all pass; a trial that never got graded has none: False."""
    return verdict is not None and all(c.passed for c in state_checks(verdict))


def call_diffs(turns: Sequence[Turn], trace: Sequence[TraceEvent], task: TaskRecord) -> list[CallDiff]:
    """Every replayed call whose output (compared as JSON where both parse) or error flag is not the recorded."""
    events = [e for e in trace if e.kind != MESSAGE]
    out = []
    for turn, event in zip([t for t in turns if t.is_call], events):
        if turn.output is None:  # nothing recorded to compare with
            continue
        now, now_error = observation(event), event.outcome != "ok"
        was_error = turn.error if turn.error is not None else turn.output.startswith("Error")
        if was_error == now_error and _same(turn.output, now):
            continue
        out.append(CallDiff(seq=event.seq, tool=event.tool, recorded=turn.output, recorded_error=was_error,
                            replayed=now, replayed_error=now_error, write=event.kind == "write"))
    return out


def _same(a: str, b: str) -> bool:
    return _parsed(a) == _parsed(b)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text.strip()


def disagreement(note: TrialNote, result: TrialResult, rec: RecordedTrial, task: TaskRecord) -> str:
    """Why evalsuite's verdict is not the recorded reward's, most specific first: the replay's effects diverged,
    the task changed since the recording, or one grader sees what the other does not. It names checks, calls and
    argument names, never a value the goal expects: the evidence site publishes it beside tasks whose answers
    stay hidden."""
    if result.outcome == "budget_exhausted":
        return f"evalsuite's trial budget ran out on the replay ({result.exhausted})"
    flipped = [d for d in note.diffs if d.flipped and d.write]
    if flipped:
        d = flipped[0]
        more = f" (and {len(flipped) - 1} more write(s))" if len(flipped) > 1 else ""
        return (f"replay diverged: #{d.seq} {d.tool} {_how(d.recorded_error)} when recorded, "
                f"{_how(d.replayed_error)} now{more}")
    corrected = _corrected(rec, task)
    failed = result.verdict.failures() if result.verdict else []
    state = [c for c in state_checks(result.verdict) if not c.passed] if result.verdict else []
    if result.passed:
        return corrected or ("evalsuite passes what the recorded grader failed: "
                             + ("the original's DB check passes the replay too" if note.original_db else
                                "on a check evalsuite does not make"))
    if note.original_db is False:
        return corrected or ("the original's own DB check fails the replayed calls too: the recorded reward does not "
                             f"follow from them ({len(state)} of evalsuite's end-state checks fail)")
    trace = [c for c in failed if c.kind == "trace"]
    if trace:
        return f"the recorded grader missed what evalsuite's {trace[0].name} check sees: {trace[0].detail}"
    if state:
        return (f"the recorded grader missed an effect evalsuite's end-state checks see: {len(state)} fail "
                f"({', '.join(_public(c.name) for c in state[:3])})")
    said = _said_earlier(failed, task, rec)
    if said:
        return (f"evalsuite's output check {said} reads the final message only, where the value is not; the recorded "
                "agent said it in an earlier message (the original's check reads every message)")
    return f"evalsuite's {_public(failed[0].name)} check fails" if failed else "evalsuite fails the trial"


def _said_earlier(failed: Sequence[Check], task: TaskRecord, rec: RecordedTrial) -> str | None:
    """The first failing output check whose value some earlier message of the recorded agent holds."""
    values = {o.name: o.value for o in task.goal_state.required_outputs}
    said = [t.text or "" for t in rec.turns if not t.is_call and t.actor == "agent"]
    return next((c.subject for c in failed if c.kind == "output" and c.subject in values
                 and any(output_present(values[c.subject], text) for text in said)), None)


def _public(name: str) -> str:
    """A check's name without the row key an assertion matched on (a new row's key can be an answer)."""
    return name.split(" {")[0] if name.startswith("assertion[") else name


def _corrected(rec: RecordedTrial, task: TaskRecord) -> str | None:
    """How the task's gold writes changed since the recording (tools and argument names, no values), when the
    recording carries its task's gold."""
    if rec.gold_writes is None:
        return None
    then, now = gold_writes(rec.gold_writes, task.domain), gold_writes(task.reference_solution, task.domain)
    if then == now:
        return None
    if [t for t, _ in then] != [t for t, _ in now]:
        return (f"task corrected since the recording: its gold writes were {_tools(then)}, now {_tools(now)}")
    i = next(i for i, (a, b) in enumerate(zip(then, now)) if a != b)
    old, new = json.loads(then[i][1]), json.loads(now[i][1])
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return f"task corrected since the recording: gold write #{i + 1} ({now[i][0]}) now has other {', '.join(keys)}"


def _tools(calls: list[tuple[str, str]]) -> str:
    return ", ".join(t for t, _ in calls) or "none"


def _how(error: bool) -> str:
    return "an error" if error else "ok"
