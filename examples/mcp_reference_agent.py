"""A minimal external agent: it reaches its trial only through MCP at $EVALSUITE_MCP_URL.

It reads the task (get_task), lists the tools, makes the calls of a plan and submits
the plan's answer. Having no model, it takes its decisions from $EVALSUITE_AGENT_PLAN,
JSON {"calls": [{"tool": ..., "arguments": {...}}], "answer": "..."}, which whoever
launches it prepares; it never reads a task file. A real agent would put a model here.

If $EVALSUITE_AGENT_REPORT names a file, it writes there what it saw (the task, the
tools, each call's result, its environment and working directory) for a test to audit.

Standalone on purpose: it imports only the mcp SDK, never evalsuite.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import Client


async def main() -> None:
    plan = json.loads(os.environ.get("EVALSUITE_AGENT_PLAN", '{"calls": [], "answer": ""}'))
    seen: dict = {"env": dict(os.environ), "cwd": os.getcwd(), "cwd_files": os.listdir("."), "calls": []}
    async with Client(os.environ["EVALSUITE_MCP_URL"]) as client:
        task = await client.call_tool("get_task", {})
        seen["task"] = json.loads(task.content[0].text)
        seen["tools"] = [t.name for t in (await client.list_tools()).tools]
        for call in plan["calls"]:
            result = await client.call_tool(call["tool"], call.get("arguments", {}))
            text = "".join(c.text for c in result.content if c.type == "text")
            seen["calls"].append({"tool": call["tool"], "is_error": result.is_error, "text": text})
            if result.is_error:
                print(f"{call['tool']}: {text}", file=sys.stderr)
        submitted = await client.call_tool("submit_answer", {"message": plan["answer"]})
        seen["submitted"] = not submitted.is_error
    if os.environ.get("EVALSUITE_AGENT_REPORT"):
        with open(os.environ["EVALSUITE_AGENT_REPORT"], "w") as f:
            json.dump(seen, f)


if __name__ == "__main__":
    asyncio.run(main())
