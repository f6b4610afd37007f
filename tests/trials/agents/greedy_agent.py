"""An external agent that takes more of the machine than a trial allows, one way per mode (argv[1]):

- hold SECONDS: never answers; starts a child that never ends either, writes its pid to $GREEDY_REPORT.pid, and
  exits on its own after SECONDS;
- flood MB: writes MB megabytes on stdout (stderr with --serve), counting what got out in $GREEDY_REPORT;
- submit BYTES: submits a final message of BYTES bytes and writes whether it was refused to $GREEDY_REPORT;
- disk MB FOLDER: writes MB megabytes into FOLDER (home, tmp: $HOME, /tmp), counting in $GREEDY_REPORT; when a
  write fails (a full tmpfs) it holds on for 30 s rather than leave.

With --serve it speaks the persistent protocol: for each trial line on stdin it does its mode, then replies. The
report file is on the harness's disk; sealed, $GREEDY_REPORT is unset and nothing is reported.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

CHUNK = 1 << 20


def report(text: str) -> None:
    """Replaced whole (written aside, then renamed): killed at any moment, it leaves the last count."""
    if os.environ.get("GREEDY_REPORT"):
        path = os.environ["GREEDY_REPORT"]
        with open(path + ".new", "w") as out:
            out.write(text)
        os.replace(path + ".new", path)


def flood(mb: int, stream) -> None:
    for n in range(mb):
        stream.write("x" * CHUNK)
        stream.flush()
        report(str(n + 1))


def fill(mb: int, folder: str, home: str) -> None:
    target = home if folder == "home" else "/tmp"
    try:
        with open(os.path.join(target, "fill"), "wb") as out:
            for n in range(mb):
                out.write(b"\0" * CHUNK)
                out.flush()
                report(str(n + 1))
    except OSError as exc:  # no space left: a hostile agent stays, holding what it wrote
        print(f"fill stopped: {exc}", file=sys.stderr, flush=True)
        time.sleep(30)


def submit(size: int, url: str) -> None:
    import asyncio

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> None:
        async with Client(streamable_http_client(url)) as client:
            done = await client.call_tool("submit_answer", {"message": "x" * size})
            report(json.dumps({"refused": done.is_error, "text": done.content[0].text}))

    asyncio.run(go())


def act(mode: list[str], url: str, home: str, out) -> None:
    if mode[0] == "hold":
        child = subprocess.Popen(["sleep", "600"])
        if os.environ.get("GREEDY_REPORT"):
            with open(os.environ["GREEDY_REPORT"] + ".pid", "w") as pid:
                pid.write(str(child.pid))
        time.sleep(float(mode[1]))
    elif mode[0] == "flood":
        flood(int(mode[1]), out)
    elif mode[0] == "submit":
        submit(int(mode[1]), url)
    elif mode[0] == "disk":
        fill(int(mode[1]), mode[2], home)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--serve"]
    if "--serve" in sys.argv:
        for line in sys.stdin:
            trial = json.loads(line)
            act(args, trial["url"], trial["home"], sys.stderr)
            print(json.dumps({"trial": trial["trial"], "exit": 0, "output": ""}), flush=True)
    else:
        act(args, os.environ["EVALSUITE_MCP_URL"], os.environ["HOME"], sys.stdout)
