"""A Python agent's zygote: import the agent script's modules once, then fork a fresh agent for every trial.

Run by the harness (boundary "zygote" of evalsuite.trials.agents.mcp_agent) inside the agent's sandbox as

    PYTHON zygote.py SCRIPT.py [ARGS...]

It speaks the persistent-agent protocol: one JSON line per trial on stdin,
{"trial": ID, "url": URL, "home": DIR, "tmp": DIR, "clear": [DIR, ...], "ipc": BOOL, "learn": BOOL}, one reply
line on stdout, {"trial": ID, "exit": CODE, "output": TAIL}; it exits when stdin closes. Per trial it forks a
child that runs SCRIPT as __main__ (as `python SCRIPT.py ARGS` would) with EVALSUITE_MCP_URL, HOME and
TMPDIR of that trial, a fresh random seed and its output in a file of its own. The child starts from the
zygote's state after imports, never from an earlier trial's, and leaves nothing for the next:

- memory: the zygote is not dumpable, so its children cannot read or write its memory (/proc/PID/mem, ptrace),
  nor its environment or file descriptors; what a trial's agent did in its own memory dies with its child;
- processes: the zygote is their subreaper, so every process a trial started, even one that left its process
  group or session, is its descendant and is killed before the reply;
- files: the folders in "clear" (the sandbox's private /tmp, /dev/shm and message queues, the zygote's home
  that holds each trial's home and tmp) are emptied before the reply;
- System V IPC: with "ipc" (the sandbox's own IPC namespace), every shared memory segment, message queue and
  semaphore set left in it is removed.

The harness's first request is a warm-up with no task and no world, marked "learn": the modules its agent
imported on first use are imported by the zygote, so the real trials' agents start with them.

Standalone on purpose: it runs under the agent's interpreter and imports nothing but the standard library
and the modules the script imports.
"""
from __future__ import annotations

import ast
import ctypes
import importlib
import json
import os
import random
import runpy
import shutil
import signal
import sys

URL_VAR = "EVALSUITE_MCP_URL"
PR_SET_PDEATHSIG = 1  # linux/prctl.h: the child dies with the zygote
PR_SET_DUMPABLE = 4  # 0: no process of the same user may ptrace it or open its /proc/PID/mem, environ, fd
PR_SET_CHILD_SUBREAPER = 36  # orphans of its descendants become its children, not init's
IPC_RMID = 0
LIBC = ctypes.CDLL(None, use_errno=True)
OUTPUT_TAIL = 4000


def imported_modules(script: str) -> list[str]:
    """Absolute imports anywhere in the script (a lazy import inside main() is as slow as one at the top)."""
    with open(script, "rb") as f:
        tree = ast.parse(f.read(), script)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return list(dict.fromkeys(names))


def preload(script: str) -> list[str]:
    """Import what the script imports; returns the names that failed. An optional import (try/except ImportError
    in the script) may fail here by design, and a required one fails again in the trial's child, where the
    agent's own error reaches the trial record: nothing is hidden by going on."""
    failed = []
    for name in imported_modules(script):
        try:
            importlib.import_module(name)
        except ImportError:
            failed.append(name)
    return failed


def run_child(script: str, args: list[str], request: dict, output: str, replies: int) -> None:
    """In the forked child: become the trial's agent and never return. On its way out it lists the modules it
    imported, for the zygote to import before the next fork."""
    code, before = 1, set(sys.modules)
    try:
        os.setpgid(0, 0)  # its own group, so whatever it leaves behind is killed after the trial
        os.close(replies)  # the protocol is the zygote's: an agent must not answer for a trial
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        prctl(PR_SET_DUMPABLE, 1)  # an agent like any other process: its memory is its own trial's only
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        sys.stdin = open(0, closefd=False)
        os.environ.update({URL_VAR: request["url"], "HOME": request["home"], "TMPDIR": request["tmp"]})
        os.chdir(request["home"])
        random.seed()  # the zygote's random state would otherwise be every trial's
        sys.argv = [script, *args]
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException:  # the agent's crash: its traceback goes to its output, its exit code to the reply
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        with open(output + ".modules", "w") as f:
            f.write("\n".join(sorted(set(sys.modules) - before)))
        os._exit(code)


def fork_trial(script: str, args: list[str], request: dict, replies: int) -> dict:
    """One trial's agent in a forked child of the zygote; the reply line once the child has exited."""
    output = os.path.join(request["tmp"], ".agent-output")
    pid = os.fork()
    if pid == 0:
        run_child(script, args, request, output, replies)
    _, status = os.waitpid(pid, 0)
    kill_descendants()
    if request.get("learn"):
        learn(output + ".modules")
    reply = {"trial": request["trial"], "exit": os.waitstatus_to_exitcode(status), "output": tail(output)}
    for folder in request.get("clear", []):
        clear(folder)
    if request.get("ipc"):
        remove_ipc()
    return reply


def prctl(option: int, value: int) -> None:
    if LIBC.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value})")


def kill_descendants() -> None:
    """SIGKILL every process the trial left, until none is left: the zygote being their subreaper, each one's
    orphans come to it in turn, however they detached (a new session, a double fork)."""
    while pids := children():
        for pid in pids:
            os.kill(pid, signal.SIGKILL)  # a child not yet reaped: it exists, if only as a zombie
        for pid in pids:
            os.waitpid(pid, 0)


def children() -> list[int]:
    """The zygote's children (/proc/self/task/*/children, or its whole /proc where the kernel lacks that file)."""
    tasks = os.listdir("/proc/self/task")
    if os.path.exists(f"/proc/self/task/{tasks[0]}/children"):
        pids: list[int] = []
        for task in tasks:
            with open(f"/proc/self/task/{task}/children") as f:
                pids += [int(pid) for pid in f.read().split()]
        return pids
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _parent(p) == os.getpid()]


def _parent(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])  # after "(comm)": state, then ppid
    except (FileNotFoundError, ProcessLookupError):  # it ended while we looked: not ours to kill
        return None


def remove_ipc() -> None:
    """Remove every System V shared memory segment, message queue and semaphore set of the zygote's IPC
    namespace (/proc/sysvipc lists that namespace's): a trial's are the only ones there. One that cannot be
    removed is raised, so the zygote ends rather than hand it to the next trial."""
    removers = {"shm": lambda i: LIBC.shmctl(i, IPC_RMID, None), "msg": lambda i: LIBC.msgctl(i, IPC_RMID, None),
                "sem": lambda i: LIBC.semctl(i, 0, IPC_RMID)}
    for kind, remove in removers.items():
        with open(f"/proc/sysvipc/{kind}") as f:
            ids = [int(line.split()[1]) for line in f.read().splitlines()[1:] if line.strip()]
        for ident in ids:
            if remove(ident) != 0:
                raise OSError(ctypes.get_errno(), f"cannot remove System V {kind} {ident} a trial left")


def learn(listing: str) -> None:
    """Import what the warm-up's agent imported lazily (on first use, inside its libraries), so every later fork
    has it already. Only a request marked "learn" (the harness's warm-up, which holds no task and no world) is
    learned from: what a real trial imports never changes the zygote, or it would be a channel to the next
    trial. A module that cannot be imported here is left to the child, as in preload."""
    if not os.path.exists(listing):  # the child died before it could list them
        return
    with open(listing) as f:
        names = [n for n in f.read().split() if n not in sys.modules and not n.startswith("__")]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - any failure just means the child imports it itself, as before
            continue


def clear(folder: str, mounts: list[str] | None = None) -> None:
    """Empty a trial's private folder. What the sandbox mounted into it stays: when the harness's interpreter or
    venv live below /tmp (a checkout in /tmp), their read-only mounts sit inside the private /tmp. Folders that only
    lead to a mount are cleared around it, so no file a trial wrote there reaches the next."""
    mounts = _mount_points() if mounts is None else mounts
    for entry in os.scandir(folder):
        path = entry.path
        if path in mounts:
            continue
        if any(m.startswith(path + "/") for m in mounts):
            clear(path, mounts)
        elif entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _mount_points() -> list[str]:
    """Every mount point this process sees (field 5 of /proc/self/mountinfo, with its octal escapes undone)."""
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4].encode().decode("unicode_escape") for line in f]


def tail(path: str) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, os.fstat(f.fileno()).st_size - OUTPUT_TAIL))
        return f.read().decode(errors="replace")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: zygote.py SCRIPT.py [ARGS...]", file=sys.stderr)
        return 2
    script, args = os.path.abspath(argv[1]), argv[2:]
    prctl(PR_SET_DUMPABLE, 0)  # before any child exists: none may ever reach the memory every trial forks from
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    sys.path[0] = os.path.dirname(script)  # as `python SCRIPT.py` sets it, not this file's folder
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything printed while importing goes to the log, never into the protocol
    failed = preload(script)
    if failed:
        print(f"zygote: not preloaded (the agent imports them itself): {', '.join(failed)}", file=sys.stderr)
    for line in sys.stdin:
        if line.strip():
            replies.write(json.dumps(fork_trial(script, args, json.loads(line), replies.fileno())) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
