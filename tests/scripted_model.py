"""Local endpoints that speak the chat-completions protocol: one answering from a script, one following each
task's reference solution and billing tokens.

ScriptedModel is shared by the OpenAI agent tests and the agent-config tests through the `endpoint` fixture
(conftest.py); it records every request body and its headers. ReferenceModel serves the usage and cost tests.
Worker processes reach both over loopback too. `serve_staged` answers a fixed list of replies, statuses and
headers included, counting the requests in flight at once (the model client's tests); `run_async` runs an
async agent's trial on a fresh event loop.
"""
from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evalsuite.trials.agents.model_client import close_clients
from evalsuite.trials.trial import arun_trial


class ScriptedModel(BaseHTTPRequestHandler):
    """Answers /v1/chat/completions from a script: the i-th request gets script[i]."""

    script: list[dict] = []
    seen: list[dict] = []
    headers_seen: list[dict] = []
    url = ""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ScriptedModel.seen.append(body)
        ScriptedModel.headers_seen.append(dict(self.headers))
        message = ScriptedModel.script[len(ScriptedModel.seen) - 1]
        _send(self, 200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", **message}}]})

    def log_message(self, *args):  # keep test output clean
        return


class Always(list):
    """A script that gives every request the same reply, whichever order concurrent requests arrive in."""

    def __init__(self, reply: dict):
        super().__init__()
        self.reply = reply

    def __getitem__(self, i):
        return self.reply


class ReferenceModel(BaseHTTPRequestHandler):
    """Follows each task's reference solution (tools first, then the answer) and reports usage; `flaky` triggers
    fail their first request with 503, `down` triggers every request with 500."""

    tasks: dict = {}  # trigger text -> task
    flaky: set = set()
    down: set = set()
    served: list = []  # (prompt tokens, completion tokens) of each answered request
    failed: list = []
    auth: list = []  # the Authorization header of every request

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ReferenceModel.auth.append(self.headers.get("Authorization"))
        trigger = body["messages"][1]["content"]
        flaky = trigger in ReferenceModel.flaky and trigger not in ReferenceModel.failed  # fails its first request
        if trigger in ReferenceModel.down or flaky:
            ReferenceModel.failed.append(trigger)
            return _send(self, 503 if trigger in ReferenceModel.flaky else 500, {"error": {"message": "overloaded"}})
        task = ReferenceModel.tasks[trigger]
        acted = any(m["role"] == "assistant" for m in body["messages"])
        message = {"content": task.reference_answer} if acted else {"content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": c.tool, "arguments": json.dumps(c.arguments)}}
            for i, c in enumerate(task.solution_calls())]}
        usage = (37 * len(body["messages"]) + 500, 21 if acted else 55)
        ReferenceModel.served.append(usage)
        _send(self, 200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", **message}}],
                          "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                    "total_tokens": sum(usage)}})

    def log_message(self, *args):
        return


def run_async(world, task, agent, **kwargs):
    """arun_trial on a fresh event loop, its model clients closed before the loop is."""
    async def trial():
        try:
            return await arun_trial(world, task, agent, **kwargs)
        finally:
            await close_clients()

    return asyncio.run(trial())


def reply(message: dict | None = None, status: int = 200, usage: tuple[int, int] | None = None,
          headers: dict | None = None) -> dict:
    """One staged reply: a chat completion carrying `message` (and `usage`), or an error status."""
    return {"status": status, "message": message or {"content": "done"}, "usage": usage, "headers": headers or {}}


@dataclass
class Staged:
    """What a staged endpoint saw: requests in arrival order (parsed, as sent, their headers) and the most requests
    in flight at once."""

    replies: list[dict]
    delay: float = 0.0
    url: str = ""
    seen: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)  # each request's headers, names in lower case
    bodies: list[bytes] = field(default_factory=list)  # each request's body as sent
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _staged_handler(staged: Staged, stop) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            body = json.loads(raw)
            with staged.lock:
                staged.seen.append(body)
                staged.headers.append({k.lower(): v for k, v in self.headers.items()})
                staged.bodies.append(raw)
                n, staged.in_flight = len(staged.seen), staged.in_flight + 1
                staged.max_in_flight = max(staged.max_in_flight, staged.in_flight)
            time.sleep(staged.delay)
            with staged.lock:
                staged.in_flight -= 1
            if n > len(staged.replies):  # past the script: refuse (not retried) and stop serving
                threading.Thread(target=stop, daemon=True).start()
                return _send(self, 400, {"error": {"message": "script exhausted"}}, {})
            r = staged.replies[n - 1]
            if r["status"] != 200:
                return _send(self, r["status"], {"error": {"message": "staged error"}}, r["headers"])
            payload = {"id": f"r{n}", "object": "chat.completion", "created": 0, "model": body["model"],
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", **r["message"]}}]}
            if r["usage"]:
                payload["usage"] = {"prompt_tokens": r["usage"][0], "completion_tokens": r["usage"][1],
                                    "total_tokens": sum(r["usage"])}
            _send(self, 200, payload, r["headers"])

        def log_message(self, *args):
            return

    return Handler


class _Server(ThreadingHTTPServer):
    # the listen backlog: socketserver's 5 refuses connections when a run's trials in flight (32 for a model
    # agent) connect at once
    request_queue_size = 128


class _QuietServer(_Server):
    def handle_error(self, request, client_address):
        # a client that timed out hangs up before its reply, by design of the timeout test
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


@contextmanager
def serve_staged(replies: list[dict], delay: float = 0.0) -> Iterator[Staged]:
    """An endpoint on a free loopback port answering `replies` in order, each after `delay` seconds; it stops
    after one request past them."""
    staged = Staged(replies, delay)
    server = _QuietServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.RequestHandlerClass = _staged_handler(staged, server.shutdown)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    staged.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield staged
    finally:
        server.shutdown()
        server.server_close()


def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    # honoured by the model client's backoff, so retries take milliseconds; a staged reply sets its own
    for name, value in ({"retry-after-ms": "5"} if headers is None else headers).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler], monkeypatch: pytest.MonkeyPatch, key: str) -> Iterator[str]:
    """The handler on a free loopback port; OPENAI_BASE_URL and OPENAI_API_KEY point at it."""
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[ScriptedModel]]:
    """The scripted model on a free loopback port; OPENAI_BASE_URL and OPENAI_API_KEY point at it."""
    ScriptedModel.seen, ScriptedModel.headers_seen = [], []
    with _serving(ScriptedModel, monkeypatch, "test") as url:
        ScriptedModel.url = url
        yield ScriptedModel


@contextmanager
def serve_reference(monkeypatch: pytest.MonkeyPatch, tasks, key: str) -> Iterator[type[ReferenceModel]]:
    """The reference-following model for `tasks`, billed, on a free loopback port; the environment's key is `key`."""
    ReferenceModel.tasks = {t.trigger.text: t for t in tasks}
    ReferenceModel.flaky, ReferenceModel.down, ReferenceModel.served = set(), set(), []
    ReferenceModel.failed, ReferenceModel.auth = [], []
    with _serving(ReferenceModel, monkeypatch, key):
        yield ReferenceModel
