"""A sealed agent's one way out of its network namespace: to its tool server, and nowhere else.

Run by the sandbox (evalsuite.core.sandbox) as the first program inside bwrap, before the agent:

    PYTHON -I -S netgate.py SOCKET PORT -- COMMAND [ARGS...]

Under bwrap the agent has a network namespace of its own, with nothing but loopback: none of the host's
loopback services (a Redis broker, another web server) and no outside network can be reached from it. This
listens on 127.0.0.1:PORT in that namespace and relays every connection to SOCKET, the tool server's Unix socket
bound into the sandbox, so EVALSUITE_MCP_URL (http://127.0.0.1:PORT/SECRET/mcp) works unchanged. It then runs
COMMAND (the agent, which drops to the agent user first) as its child and exits with its status.

It holds nothing of a trial but the bytes it relays, yet a long-lived agent's trials all pass through it: it is
not dumpable, so no process of the agent can read or write its memory (and when the harness is root it is
root's, so the agent cannot signal it either). Standalone on purpose: the standard library only.
"""
from __future__ import annotations

import ctypes
import os
import socket
import sys
import threading

PR_SET_DUMPABLE = 4  # linux/prctl.h
CHUNK = 1 << 16


def pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy one direction until its end, then pass the end on. A peer that resets or vanishes ends the
    connection, which is how every relayed connection ends sooner or later: nothing to report."""
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        return
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:  # the other side has gone already
            sink.close()


def relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError as exc:  # the tool server has stopped: the agent sees its connection closed
        print(f"netgate: cannot reach the tool server: {exc}", file=sys.stderr)
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        # Without it every response would wait for the client's delayed ACK (~40 ms), as on the server's side.
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=relay, args=(client, path), daemon=True).start()


def exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        print("usage: netgate.py SOCKET PORT -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    path, port, command = argv[1], int(argv[2]), argv[4:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", port))  # bound before the agent starts: its first connection finds it
    listener.listen(64)
    pid = os.fork()
    if pid == 0:
        listener.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:  # as a shell says it: the trial's output names the program that did not start
            print(f"netgate: {command[0]}: {exc.strerror}", file=sys.stderr)
            os._exit(127)
    # The agent's stdin and stdout are its own: a worker's end of the protocol must close when the agent exits.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    _, status = os.waitpid(pid, 0)
    return exit_code(status)


if __name__ == "__main__":
    os._exit(main(sys.argv))  # daemon threads may be blocked in accept() or recv(): leave at once
