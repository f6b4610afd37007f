"""A reference-replaying external agent whose MCP client skips the CA bundle it never needs on a loopback URL.

Like examples/mcp_reference_agent.py, it gets the task over MCP, makes the calls of its plan and submits
the plan's answer. Its plans come in $EVALSUITE_AGENT_PLANS, JSON {trigger_text: {"calls": [...], "answer":
...}}, so one long-lived worker can serve many tasks. Its HTTP client trusts no certificate authority: the
trial's URL is plain http on loopback, and loading the system's CA bundle costs ~0.2 s per client here,
which a fresh agent per trial would otherwise pay every trial. Standalone: it imports only the mcp SDK.

With --serve it speaks the persistent-agent protocol itself (boundary persistent): one JSON line per trial
on stdin ({"trial", "url", "home", "tmp", ...}), one reply line per trial on stdout ({"trial", "exit",
"output"}), until stdin closes. Each trial gets a new client and session; it keeps nothing between trials.
"""
from __future__ import annotations

import asyncio
import json
import os
import ssl
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def loopback_client(url: str) -> Client:
    # An empty trust store: http needs none, and an https URL would fail closed rather than go unverified.
    http = httpx2.AsyncClient(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), timeout=httpx2.Timeout(30, read=300))
    return Client(streamable_http_client(url, http_client=http))


async def solve(url: str, plans: dict) -> None:
    async with loopback_client(url) as client:
        task = json.loads((await client.call_tool("get_task", {})).content[0].text)
        plan = plans.get(task["trigger_text"], {"calls": [], "answer": ""})
        for call in plan["calls"]:
            await client.call_tool(call["tool"], call.get("arguments", {}))
        await client.call_tool("submit_answer", {"message": plan["answer"]})


async def serve(plans: dict) -> None:
    """The persistent protocol: trials one at a time until stdin closes; a failing trial is reported, not fatal."""
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        request = json.loads(line)
        try:
            await solve(request["url"], plans)
            reply = {"trial": request["trial"], "exit": 0, "output": ""}
        except Exception as exc:  # this trial's failure, reported in its reply; the next trial starts clean
            reply = {"trial": request["trial"], "exit": 1, "output": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    plans = json.loads(os.environ["EVALSUITE_AGENT_PLANS"])
    asyncio.run(serve(plans) if sys.argv[1:] == ["--serve"] else solve(os.environ["EVALSUITE_MCP_URL"], plans))
