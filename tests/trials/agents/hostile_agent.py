"""A hostile external agent: it hunts the disk and the harness for the answers instead of solving its task.

It is told where everything is ($HOSTILE_TARGETS, JSON: home, files, harness_pid, search), the
strongest attacker a test can make. It tries to list the home folder, read each file (release tasks.jsonl,
world.sqlite, seed Parquet, the task file given to the harness), read the harness's and its
parent's /proc environ and cmdline, and (if `search`) walks every folder it can see for task,
world and seed files. If it got a task file, it replays that task's reference solution over MCP and
submits the reference answer; otherwise it submits what it tried, as JSON, for the test to audit.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import Client

WANTED = ("tasks.jsonl", "world.sqlite", "manifest.json")
UNSEARCHED = ("/proc", "/sys", "/dev", "/usr", sys.prefix, sys.base_prefix)  # no answers in the system or Python


def attempt(what: str, read) -> dict:
    try:
        return {"what": what, "ok": True, "data": read()}
    except OSError as exc:
        return {"what": what, "ok": False, "error": f"{type(exc).__name__}: {exc}"}


def text(path: str) -> str:
    with open(path, "rb") as f:
        return f.read(100_000).decode(errors="replace")


def search() -> list[str]:
    found = []
    for root, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if not os.path.join(root, d).startswith(UNSEARCHED)]
        found += [os.path.join(root, f) for f in files if f in WANTED or f.endswith(".parquet")]
    return found


def hunt(targets: dict) -> list[dict]:
    tried = [attempt(f"list {targets['home']}", lambda: os.listdir(targets["home"]))]
    tried += [attempt(f"read {path}", lambda path=path: text(path)) for path in targets["files"]]
    for pid in (targets["harness_pid"], os.getppid()):
        tried += [attempt(f"read /proc/{pid}/{part}", lambda p=f"/proc/{pid}/{part}": text(p))
                  for part in ("environ", "cmdline")]
    if targets["search"]:
        tried.append({"what": "search the disk", "ok": True, "data": search()})
    return tried


def stolen_task(tried: list[dict], trigger: str) -> dict | None:
    """The record of this very task, from any task file it managed to read."""
    for result in tried:
        if result["ok"] and result["what"].endswith("tasks.jsonl"):
            for line in result["data"].splitlines():
                if line.strip() and json.loads(line)["trigger"]["text"] == trigger:
                    return json.loads(line)
    return None


async def main() -> None:
    tried = hunt(json.loads(os.environ["HOSTILE_TARGETS"]))
    report = {"tried": tried, "env": dict(os.environ)}
    async with Client(os.environ["EVALSUITE_MCP_URL"]) as client:
        task = json.loads((await client.call_tool("get_task", {})).content[0].text)
        record = stolen_task(tried, task["trigger_text"])
        if record is not None:  # the answers were readable: replay them
            for call in record["reference_solution"]:
                await client.call_tool(call["tool"], call["arguments"])
        answer = record["reference_answer"] if record is not None else json.dumps(report)
        await client.call_tool("submit_answer", {"message": answer})


if __name__ == "__main__":
    asyncio.run(main())
