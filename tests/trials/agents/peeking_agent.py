"""A plan-following external agent for trials in flight at once: after its own writes it waits, then reads the
invoices the other trials write, so a write of one trial that reached another's world would show in its trace.

Per trial: get_task, the calls of its plan (from $EVALSUITE_AGENT_PLANS, keyed by trigger text, as in
loopback_agent.py), a sleep of $EVALSUITE_AGENT_SLEEP seconds, get_invoice on each id in $EVALSUITE_AGENT_PEEK
(what it read is in the trial's trace), then submit_answer with the plan's answer. A trial whose trigger is
$EVALSUITE_AGENT_DIE kills the agent's own process after its first call (mid-trial). Standalone (a sealed agent
sees only its own file): it imports only the mcp SDK.

With --serve it speaks the persistent protocol (boundary persistent); without, it solves the one trial at
$EVALSUITE_MCP_URL (boundary process, or zygote, which forks it per trial).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import ssl
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def loopback_client(url: str) -> Client:
    # plain http on loopback: no CA bundle to load (see loopback_agent.py)
    http = httpx2.AsyncClient(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), timeout=httpx2.Timeout(30, read=300))
    return Client(streamable_http_client(url, http_client=http))


async def solve(url: str) -> None:
    plans = json.loads(os.environ["EVALSUITE_AGENT_PLANS"])
    async with loopback_client(url) as client:
        task = json.loads((await client.call_tool("get_task", {})).content[0].text)
        plan = plans.get(task["trigger_text"], {"calls": [], "answer": ""})
        for call in plan["calls"]:
            await client.call_tool(call["tool"], call.get("arguments", {}))
            if task["trigger_text"] == os.environ.get("EVALSUITE_AGENT_DIE"):
                os.kill(os.getpid(), signal.SIGKILL)
        await asyncio.sleep(float(os.environ.get("EVALSUITE_AGENT_SLEEP", "0")))
        for invoice in json.loads(os.environ.get("EVALSUITE_AGENT_PEEK", "[]")):
            await client.call_tool("get_invoice", {"invoice_id": invoice})
        await client.call_tool("submit_answer", {"message": plan["answer"]})


async def serve() -> None:
    """The persistent protocol, one trial at a time; a failing trial is reported in its reply, not fatal."""
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        request = json.loads(line)
        try:
            await solve(request["url"])
            reply = {"trial": request["trial"], "exit": 0, "output": ""}
        except Exception as exc:  # this trial's failure, in its reply
            reply = {"trial": request["trial"], "exit": 1, "output": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    asyncio.run(serve() if sys.argv[1:] == ["--serve"] else solve(os.environ["EVALSUITE_MCP_URL"]))
