"""A local endpoint that speaks the chat-completions protocol, answering from a script.

Shared by the OpenAI agent tests and the agent-config tests through the `endpoint` fixture (conftest.py).
It records every request body and its headers; worker processes reach it over loopback too.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


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
        payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", **message}}]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # keep test output clean
        return


class Always(list):
    """A script that gives every request the same reply, whichever order concurrent requests arrive in."""

    def __init__(self, reply: dict):
        super().__init__()
        self.reply = reply

    def __getitem__(self, i):
        return self.reply


@contextmanager
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[ScriptedModel]]:
    """The scripted model on a free loopback port; OPENAI_BASE_URL and OPENAI_API_KEY point at it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ScriptedModel.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", ScriptedModel.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    ScriptedModel.seen, ScriptedModel.headers_seen = [], []
    try:
        yield ScriptedModel
    finally:
        server.shutdown()
        server.server_close()
