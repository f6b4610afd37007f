"""Serving the play page on loopback: a socket bound before the server starts, served until Ctrl-C or a context."""
from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import uvicorn
from starlette.applications import Starlette


def loopback_socket(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:port (0: any free port), so the URL is known before the server starts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # connections made before the server runs wait in the backlog instead of being refused
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}/"


def serve(app: Starlette, sock: socket.socket) -> None:
    """Serve the app on a loopback socket until interrupted (Ctrl-C)."""
    with sock:
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


@contextlib.contextmanager
def serving(app: Starlette, port: int = 0) -> Iterator[str]:
    """Serve the app from a background thread for the life of the context; yields its URL (tests, screenshots)."""
    sock = loopback_socket(port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="play-server")
    thread.start()
    try:
        _wait_started(server)
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _wait_started(server: uvicorn.Server, seconds: float = 10.0) -> None:
    done = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if server.started:
            return
        done.wait(0.01)
    raise RuntimeError(f"play server did not start within {seconds:.0f} s")
