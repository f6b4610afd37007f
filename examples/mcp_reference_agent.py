"""A minimal external agent: it reaches its trial only through MCP at $EVALSUITE_MCP_URL.

It reads the task (get_task), lists the tools, makes the calls of a plan and submits
the plan's answer. Having no model, it takes its decisions from $EVALSUITE_AGENT_PLAN,
JSON {"calls": [{"tool": ..., "arguments": {...}}], "answer": "..."}, which whoever
launches it prepares; it never reads a task file. A real agent would put a model here.

Without a plan it still works its trial over MCP, as far as it can without deciding
anything: it calls the read-only tools (MCP's readOnlyHint) that need no argument, takes
no action, and submits a closing note saying so and what to set; it says the same in one
line on stderr.

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

PLAN_VAR = "EVALSUITE_AGENT_PLAN"
NO_PLAN = (f"no {PLAN_VAR}, so no action taken; set it to JSON {{\"calls\": [{{\"tool\": ..., \"arguments\": "
           f"{{...}}}}], \"answer\": \"...\"}} and pass it with EVALSUITE_MCP_PASS_ENV={PLAN_VAR}")


def free_reads(tools: list) -> list[dict]:
    """Calls of the tools that only read and need no argument: what an agent does before deciding anything."""
    return [{"tool": t.name, "arguments": {}} for t in tools
            if t.annotations and t.annotations.read_only_hint and not t.input_schema.get("required")]


async def main() -> None:
    given = os.environ.get(PLAN_VAR)
    seen: dict = {"env": dict(os.environ), "cwd": os.getcwd(), "cwd_files": os.listdir("."), "calls": []}
    async with Client(os.environ["EVALSUITE_MCP_URL"]) as client:
        task = await client.call_tool("get_task", {})
        seen["task"] = json.loads(task.content[0].text)
        tools = (await client.list_tools()).tools
        seen["tools"] = [t.name for t in tools]
        seen["read_only"] = [t.name for t in tools if t.annotations and t.annotations.read_only_hint]
        plan = json.loads(given) if given else {"calls": free_reads(tools)[:seen["task"]["max_steps"]]}
        for call in plan["calls"]:
            result = await client.call_tool(call["tool"], call.get("arguments", {}))
            text = "".join(c.text for c in result.content if c.type == "text")
            seen["calls"].append({"tool": call["tool"], "is_error": result.is_error, "text": text})
            if result.is_error:
                print(f"{call['tool']}: {text}", file=sys.stderr)
        if not given:
            read = ", ".join(c["tool"] for c in plan["calls"]) or "no tool"
            plan["answer"] = f"Read the task (role {seen['task']['role']}) and called {read}: {NO_PLAN}."
            print(f"{sys.argv[0]}: {NO_PLAN}", file=sys.stderr)
        submitted = await client.call_tool("submit_answer", {"message": plan["answer"]})
        seen["submitted"] = not submitted.is_error
    if os.environ.get("EVALSUITE_AGENT_REPORT"):
        with open(os.environ["EVALSUITE_AGENT_REPORT"], "w") as f:
            json.dump(seen, f)


if __name__ == "__main__":
    asyncio.run(main())
