"""An external agent that looks for traces of earlier trials before leaving its own, then reports what it found.

Each trial it checks for, then leaves: a marker in /tmp, a marker in $HOME and $TMPDIR, an attribute
on an imported module (process memory), and a module imported at run time (`wave`, named so no static
scan finds it; only in a real trial, not in the harness's warm-up). It submits, as JSON, whether it saw
any of them, its pid, its parent's pid and a random number, so a test can tell a fresh agent per trial
(nothing seen, new pid, same parent: one zygote) from a reused one. Standalone: it imports only the mcp SDK.
"""
from __future__ import annotations

import asyncio
import importlib
import json
import os
import random
import sys

from mcp import Client

MARK = "evalsuite-probe-marker"


def look_and_leave() -> dict:
    places = {"tmp": os.path.join("/tmp", MARK), "home": os.path.join(os.environ["HOME"], MARK),
              "tmpdir": os.path.join(os.environ["TMPDIR"], MARK)}
    seen = {name: os.path.exists(path) for name, path in places.items()}
    seen["memory"] = hasattr(json, "_evalsuite_probe")
    seen["module"] = "wave" in sys.modules
    for path in places.values():
        with open(path, "w") as f:
            f.write("an earlier trial was here")
    json._evalsuite_probe = True  # lives as long as this interpreter's memory
    return {"seen": seen, "pid": os.getpid(), "ppid": os.getppid(), "random": random.random()}


async def main() -> None:
    report = look_and_leave()
    async with Client(os.environ["EVALSUITE_MCP_URL"]) as client:
        task = json.loads((await client.call_tool("get_task", {})).content[0].text)
        if task["trigger_type"] != "warm_up":
            importlib.import_module("wa" + "ve")
        await client.call_tool("submit_answer", {"message": json.dumps(report)})


if __name__ == "__main__":
    asyncio.run(main())
