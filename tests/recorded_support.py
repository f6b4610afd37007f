"""Recorded runs made for the tests from a τ²-retail release: real tool outputs from replaying calls in its world,
written in each format `evalsuite import-run` reads, with the mistakes a recording can hold put in on purpose.

The plan (task ids of the bundled suite; both tasks are Yusuf Rossi's exchange of one order):
- task 0, trial 0: the gold calls, reward 1; one read's recorded output edited (a text difference, not an effect)
- task 0, trial 1: the gold calls with one deliberately wrong write (another new item), recorded reward 1
- task 1, trial 0: the calls of the task as recorded then (its older gold: task 0's exchange), reward 1
- task 1, trial 1: the gold calls, the write recorded as an error and reward 0 (the replay now succeeds)
- task 2 (quarantined in the release: a gold read raises), trial 0: graded from the build's task records, and
  said to be quarantined
- task 999 (no such task): skipped
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.domains.tau2_retail import tool_message
from evalsuite.releases.release import Release

USER = "yusuf_rossi_9620"
WRONG_ITEM = "7706410293"  # a valid new item of task 0's exchange, put where another belongs


def gold(task: TaskRecord) -> list[ToolCall]:
    return list(task.reference_solution)


def wrong(calls: list[ToolCall]) -> list[ToolCall]:
    """The calls with the last write's new items all set to one other item: one deliberately wrong call."""
    out = list(calls)
    i = max(j for j, c in enumerate(out) if c.tool.endswith("_items"))
    args = dict(out[i].arguments)
    args["new_item_ids"] = [WRONG_ITEM for _ in args["new_item_ids"]]
    out[i] = out[i].model_copy(update={"arguments": args})
    return out


def plan(release: Release) -> list[dict[str, Any]]:
    """The trials: task, trial, reward, calls, edits to recorded outputs (by call index), the task as recorded."""
    tasks = {t.task_id: t for t in release.tasks()}
    t0, t1 = tasks["0"], tasks["1"]
    last = len(gold(t1)) - 1
    return [
        {"task": "0", "trial": 0, "reward": 1.0, "calls": gold(t0), "edits": {1: "EDITED"}},
        {"task": "0", "trial": 1, "reward": 1.0, "calls": wrong(gold(t0))},
        {"task": "1", "trial": 0, "reward": 1.0, "calls": gold(t0), "recorded_gold": gold(t0)},
        {"task": "1", "trial": 1, "reward": 0.0, "calls": gold(t1),
         "edits": {last: "Error: Non-delivered order cannot be exchanged"}},
        {"task": "2", "trial": 0, "reward": 0.0, "calls": gold(t0)},
        {"task": "999", "trial": 0, "reward": 0.0, "calls": gold(t0)},
    ]


def outputs(release: Release, task: TaskRecord, calls: list[ToolCall]) -> list[str]:
    """What the world answers each call, as tau2 shows it."""
    trial = release.open_world().reset(task.role)
    return [tool_message(trial.call(c.tool, c.arguments)) for c in calls]


def _recorded(release: Release, entry: dict) -> list[tuple[ToolCall, str]]:
    task = {t.task_id: t for t in release.tasks()}["0"]  # any task of the role: outputs do not depend on it
    said = outputs(release, task, entry["calls"])
    for i, text in entry.get("edits", {}).items():
        said[i] = json.dumps({**json.loads(said[i]), "status": text}) if text == "EDITED" else text
    return list(zip(entry["calls"], said))


def tau2_results(release: Release, path: Path) -> Path:
    """A τ²-bench results file of the plan (the recorded task 1 carries its older gold)."""
    sims, tasks = [], []
    for n, e in enumerate(plan(release)):
        messages: list[dict] = [{"role": "assistant", "content": "Hi! How can I help you today?"},
                                {"role": "user", "content": "I want to exchange some items."}]
        for i, (call, out) in enumerate(_recorded(release, e)):
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "name": call.tool, "arguments": call.arguments, "requestor": "assistant"}]})
            messages.append({"role": "tool", "id": f"c{i}", "content": out, "requestor": "assistant",
                             "error": out.startswith("Error")})
        messages.append({"role": "assistant", "content": "Your exchange is done."})
        sims.append({"id": f"sim-{n}", "task_id": e["task"], "trial": e["trial"], "messages": messages,
                     "termination_reason": "user_stop", "reward_info": {"reward": e["reward"]}})
        if "recorded_gold" in e:
            tasks.append({"id": e["task"], "evaluation_criteria": {"actions": [
                {"action_id": f"{e['task']}_{i}", "name": c.tool, "arguments": c.arguments}
                for i, c in enumerate(e["recorded_gold"])]}})
    body = {"info": {"agent_info": {"implementation": "llm_agent", "llm": "scripted-test-model"}},
            "tasks": tasks, "simulations": sims}
    path.write_text(json.dumps(body, indent=1))
    return path


def openai_messages(release: Release, path: Path) -> Path:
    """The same trials as JSON lines of OpenAI-format messages."""
    lines = []
    for e in plan(release):
        messages: list[dict] = [{"role": "user", "content": "I want to exchange some items."}]
        for i, (call, out) in enumerate(_recorded(release, e)):
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function",
                 "function": {"name": call.tool, "arguments": json.dumps(call.arguments)}}]})
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "name": call.tool, "content": out})
        messages.append({"role": "assistant", "content": "Your exchange is done."})
        lines.append(json.dumps({"task_id": e["task"], "trial": e["trial"], "reward": e["reward"],
                                 "messages": messages}))
    path.write_text("\n".join(lines) + "\n")
    return path
