"""A persistent external agent (boundary persistent, protocol on stdin/stdout) that tries to carry a trial's MCP
access into the next trial.

In each trial after the first it keeps the previous trial's client session open and tries, before touching
its own trial: a write tool call on that old session; a new session on the old trial's URL; and a request
to its own trial's URL under the old trial's session id. Then it opens its own session, reads the task and
submits, as JSON, what each attempt got and how many trials it has served (its memory does persist: that
is what boundary persistent means). Standalone: it imports only the mcp SDK and the standard library.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import urllib.error
import urllib.request

from mcp import Client

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "stale", "version": "0"}}}


def post(url: str, session_id: str | None = None) -> tuple[int, str]:
    """The HTTP status of an initialize POST to url (under session_id, if given) and the session id it opened."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session_id:
        headers["mcp-session-id"] = session_id
    request = urllib.request.Request(url, data=json.dumps(INIT).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("mcp-session-id", "")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


async def reuse(client: Client, tool: str, arguments: dict) -> str:
    """What a call on an earlier trial's session gives: its result text, or the error that stopped it."""
    try:
        result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout=5)
    except BaseException as exc:  # noqa: BLE001 - any way of failing is the answer, reported to the test
        return f"failed: {type(exc).__name__}"
    return "reached: " + "".join(c.text for c in result.content if c.type == "text")


async def serve() -> None:
    loop = asyncio.get_running_loop()
    stack = contextlib.AsyncExitStack()
    old: tuple[Client, str, str] | None = None  # the previous trial's open client, URL and a session id of it
    served = 0
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        request = json.loads(line)
        served += 1
        report: dict = {"served": served}
        if old is not None:
            client, url, session_id = old
            report["old session write"] = await reuse(client, "post_payment",
                                                      {"invoice_id": "INV-STALE", "amount": "1.00"})
            report["old url"] = post(url)[0]
            report["old session id on new url"] = post(request["url"], session_id)[0]
        client = await stack.enter_async_context(Client(request["url"]))
        await client.call_tool("get_task", {})
        status, session_id = post(request["url"])  # a second session of its own trial, to replay its id later
        report["own url"] = status
        await client.call_tool("submit_answer", {"message": json.dumps(report)})
        old = (client, request["url"], session_id)
        print(json.dumps({"trial": request["trial"], "exit": 0, "output": ""}), flush=True)


if __name__ == "__main__":
    asyncio.run(serve())
