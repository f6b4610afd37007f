"""The recorded-run files `evalsuite import-run` reads, each parsed strictly with pydantic into one Recording.

- τ²-bench results (`tau2 run --save-to`): a JSON object with `info` (the agent's model), `tasks` (each task as it
  was when recorded) and `simulations` (messages with tool calls and tool results, the trial, its reward).
- τ-bench trajectory logs: a JSON list of trials, each `task_id`, `trial`, `reward`, `info.task` (user id, gold
  actions, instruction) and `traj`, the conversation in OpenAI chat format.
- Plain OpenAI messages: a JSON list, or JSON lines, of trials `{task_id, trial?, reward?, messages}`.

A file that is none of these, or a field that does not parse, is one line naming the file and the field.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from evalsuite.core.io import parse_json
from evalsuite.core.records import ToolCall
from evalsuite.scoring.recorded import Format
from evalsuite.trials.agents.recorded import Turn


class RecordingError(ValueError):
    """A recording that cannot be read, or whose trials cannot be imported; one line naming the file and field."""


MAX_TRIAL_INDEX = 10**6  # a trial number beyond it is no recording's: refused, not carried into every record
MODEL_NAME = r"[\w .:/@+=,-]{1,200}"  # what a model's name may hold: it is shown on scorecards and pages


class RecordedTrial(BaseModel):
    """One trial as a recording holds it, whatever its format."""

    task_ref: str  # the task as the recording names it
    trial: int = Field(ge=0, le=MAX_TRIAL_INDEX)
    # a reward is a fraction of success in every format read here: anything else (NaN, ±inf, 5, -1) is not one
    reward: float | None = Field(ge=0, le=1, allow_inf_nan=False)
    turns: list[Turn]
    gold_writes: list[ToolCall] | None = None  # the recorded task's gold write actions, when the file carries them
    user_id: str | None = None  # τ-bench: whose task it is (how its tasks are matched)
    instruction: str | None = None  # τ-bench: the user's instruction (ditto)
    user_calls: int = 0  # tool calls the user made on their own device (dual control): not replayed
    # how the recorded trial ended when neither the agent nor the user stopped it (max steps, too many errors):
    # evalsuite counts it as it counts its own, budget_exhausted, and so does the original (reward 0)
    unfinished: str | None = None


class Recording(BaseModel):
    format: Format
    model: str | None = Field(pattern=f"^{MODEL_NAME}$")  # the agent's model, when the file says
    domain: str | None = None  # the evalsuite domain the recorded tasks are of, when the file says (τ²: its domain)
    trials: list[RecordedTrial]


# ---- OpenAI chat messages (τ-bench's `traj`, the plain format) ---------------------------------------------

class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_Loose):
    name: str
    arguments: str


class _OpenAICall(_Loose):
    id: str
    function: _Function


class OpenAIMessage(_Loose):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[_OpenAICall] | None = None
    tool_call_id: str | None = None


def openai_turns(messages: list[OpenAIMessage]) -> list[Turn]:
    """Messages to turns: each call with the output of the tool message that answers it (error when the output
    reads `Error…`, as τ-bench reports one); arguments that are not a JSON object are passed as given."""
    outputs = {m.tool_call_id: m.content or "" for m in messages if m.role == "tool"}
    turns = []
    for m in messages:
        if m.role in ("user", "assistant") and m.content:
            turns.append(Turn(actor="agent" if m.role == "assistant" else "user", text=m.content))
        for call in m.tool_calls or []:
            out = outputs.get(call.id)
            turns.append(Turn(actor="agent", tool=call.function.name, arguments=_arguments(call.function.arguments),
                              output=out, error=None if out is None else out.startswith("Error")))
    return turns


class _Unreadable(ValueError):
    pass


def _arguments(text: str) -> dict[str, Any]:
    """A call's arguments, a JSON string in this format: bounded as the file is (core.io.parse_json), so nesting
    the file itself could not hold is refused here too."""
    try:
        parsed = parse_json(text, "arguments", _Unreadable)
    except _Unreadable as exc:
        if not isinstance(exc.__cause__, json.JSONDecodeError):  # too deep, or not Unicode text
            raise RecordingError(f"a tool call's function.arguments: {str(exc).split(': ', 1)[1]}") from None
        parsed = None
    # not an object: replayed with no arguments, so the tool reports what is missing, as the original would
    return parsed if isinstance(parsed, dict) else {}


class PlainTrial(_Loose):
    task_id: str | int
    trial: int | None = None
    reward: float | None = None
    messages: list[OpenAIMessage]
    stopped: bool = True  # false: the trial ended without the agent or the user stopping (max steps, errors)


def _plain(data: Any) -> Recording:
    trials = TypeAdapter(list[PlainTrial]).validate_python(data)
    seen: dict[str, int] = {}
    out = []
    for t in trials:
        task = str(t.task_id)
        index = t.trial if t.trial is not None else seen.get(task, 0)  # by order in the file when not given
        seen[task] = index + 1
        out.append(RecordedTrial(task_ref=task, trial=index, reward=t.reward, turns=openai_turns(t.messages),
                                 unfinished=None if t.stopped else "stopped: false"))
    return Recording(format="openai_messages", model=None, trials=out)


# ---- τ-bench trajectory logs ------------------------------------------------------------------------------

class _TauBenchAction(_Loose):
    name: str
    kwargs: dict[str, Any]


class _TauBenchTask(_Loose):
    user_id: str
    actions: list[_TauBenchAction]
    instruction: str


class _TauBenchInfo(_Loose):
    task: _TauBenchTask


class TauBenchTrial(_Loose):
    task_id: int
    trial: int
    reward: float
    info: _TauBenchInfo
    traj: list[OpenAIMessage]


def _tau_bench(data: Any) -> Recording:
    trials = TypeAdapter(list[TauBenchTrial]).validate_python(data)
    return Recording(format="tau_bench_trajectories", model=None, trials=[RecordedTrial(
        task_ref=str(t.task_id), trial=t.trial, reward=t.reward, turns=openai_turns(t.traj),
        gold_writes=[ToolCall(tool=a.name, arguments=a.kwargs) for a in t.info.task.actions],
        user_id=t.info.task.user_id, instruction=t.info.task.instruction, unfinished=_tau_bench_end(t.traj))
        for t in trials])


def _tau_bench_end(traj: list[OpenAIMessage]) -> str | None:
    """τ-bench ends a conversation when the user says ###STOP### or the agent transfers to a human; any other end
    is its step limit or an error."""
    stop = any(m.role == "user" and "###STOP###" in (m.content or "") for m in traj)
    transfer = any(c.function.name == "transfer_to_human_agents" for m in traj for c in m.tool_calls or [])
    return None if stop or transfer else f"no ###STOP### from the user and no transfer; last message: {traj[-1].role}"


# ---- τ²-bench results -------------------------------------------------------------------------------------

class _Tau2Call(_Loose):
    id: str = ""
    name: str
    arguments: dict[str, Any]
    requestor: Literal["assistant", "user"] = "assistant"


class _Tau2Message(_Loose):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[_Tau2Call] | None = None
    id: str | None = None  # a tool message: the call it answers
    error: bool = False


class _Tau2Reward(_Loose):
    reward: float


class _Tau2Simulation(_Loose):
    task_id: str
    trial: int | None = None
    termination_reason: str = "agent_stop"
    reward_info: _Tau2Reward | None = None
    messages: list[_Tau2Message]


class _Tau2Action(_Loose):
    name: str
    arguments: dict[str, Any]


class _Tau2Criteria(_Loose):
    actions: list[_Tau2Action] | None = None


class _Tau2Task(_Loose):
    id: str
    evaluation_criteria: _Tau2Criteria | None = None


class _Tau2Agent(_Loose):
    llm: str | None = None


class _Tau2Environment(_Loose):
    domain_name: str | None = None


class _Tau2Info(_Loose):
    agent_info: _Tau2Agent
    environment_info: _Tau2Environment | None = None


class Tau2Results(_Loose):
    info: _Tau2Info
    tasks: list[_Tau2Task] = []
    simulations: list[_Tau2Simulation]


STOPS = ("agent_stop", "user_stop")  # τ²'s ends by a stop; the others (max_steps, too_many_errors) are not


def _tau2(data: Any) -> Recording:
    results = Tau2Results.model_validate(data)
    gold = {t.id: [ToolCall(tool=a.name, arguments=a.arguments) for a in t.evaluation_criteria.actions]
            for t in results.tasks if t.evaluation_criteria and t.evaluation_criteria.actions is not None}
    seen: dict[str, int] = {}
    out = []
    for sim in results.simulations:
        index = sim.trial if sim.trial is not None else seen.get(sim.task_id, 0)
        seen[sim.task_id] = index + 1
        turns, user_calls = _tau2_turns(sim.messages)
        out.append(RecordedTrial(task_ref=sim.task_id, trial=index, turns=turns, user_calls=user_calls,
                                 reward=sim.reward_info.reward if sim.reward_info else None,
                                 gold_writes=gold.get(sim.task_id),
                                 unfinished=None if sim.termination_reason in STOPS else
                                 f"termination_reason: {sim.termination_reason}"))
    env = results.info.environment_info
    return Recording(format="tau2_results", model=results.info.agent_info.llm, trials=out,
                     domain=f"tau2_{env.domain_name}" if env and env.domain_name else None)


def _tau2_turns(messages: list[_Tau2Message]) -> tuple[list[Turn], int]:
    answers = {m.id: m for m in messages if m.role == "tool"}
    turns, user_calls = [], 0
    for m in messages:
        if m.role in ("user", "assistant") and m.content:
            turns.append(Turn(actor="agent" if m.role == "assistant" else "user", text=m.content))
        for call in m.tool_calls or []:
            if call.requestor == "user":
                user_calls += 1
                continue
            answer = answers.get(call.id)
            turns.append(Turn(actor="agent", tool=call.name, arguments=call.arguments,
                              output=answer.content if answer else None, error=answer.error if answer else None))
    return turns, user_calls


# ---- reading a file ---------------------------------------------------------------------------------------

PARSERS = {"tau2_results": _tau2, "tau_bench_trajectories": _tau_bench, "openai_messages": _plain}


def read_recording(path: str | Path) -> Recording:
    """The file's trials; its format is told by its shape (see the module docstring)."""
    path = Path(path)
    data = _load(path)
    fmt = detect(data)
    if fmt is None:
        raise RecordingError(f"{path}: not a recording: expected a τ²-bench results object (with `simulations`), "
                             "a list of τ-bench trials (with `traj`) or of OpenAI message trials (with `messages`)")
    try:
        recording = PARSERS[fmt](data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(file)"
        raise RecordingError(f"{path}: {fmt}: {field}: {err['msg']}") from None
    except RecordingError as exc:  # a field that parsed but cannot be read (a call's arguments)
        raise RecordingError(f"{path}: {fmt}: {exc}") from None
    if not recording.trials:
        raise RecordingError(f"{path}: {fmt}: no trials")
    keys = [(t.task_ref, t.trial) for t in recording.trials]
    twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if twice:
        raise RecordingError(f"{path}: {fmt}: task {twice[0]} trial {twice[1]} is recorded twice")
    trials: dict[str, list[int]] = {}
    for ref, n in keys:
        trials.setdefault(ref, []).append(n)
    gap = next((ref for ref, ns in trials.items() if sorted(ns) != list(range(len(ns)))), None)
    if gap is not None:  # a run's trials of a task are 0, 1, 2, …: a gap would be a trial the scorecard plans for
        shown = ", ".join(map(str, sorted(trials[gap])[:5]))
        raise RecordingError(f"{path}: {fmt}: task {gap} has trial(s) {shown}: a task's trials are numbered 0, 1, "
                             "2, … with none missing")
    return recording


def detect(data: Any) -> Format | None:
    if isinstance(data, dict) and "simulations" in data:
        return "tau2_results"
    if isinstance(data, list) and data and all(isinstance(d, dict) for d in data):
        if all("traj" in d for d in data):
            return "tau_bench_trajectories"
        if all("messages" in d for d in data):
            return "openai_messages"
    return None


def _load(path: Path) -> Any:
    """JSON, or JSON lines (one trial a line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read the recording: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RecordingError(f"{path}: not UTF-8 text") from None
    try:  # bounded as every JSON input is (depth; numbers left for the models to name): core.io.parse_json
        return parse_json(text, str(path), RecordingError)
    except RecordingError:
        lines = [(i, line) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]
        if len(lines) < 2:
            raise
    return [parse_json(line, str(path), RecordingError, first_line=i) for i, line in lines]
