"""A local OpenAI-compatible chat-completions endpoint that solves a release's tasks, for benchmarks and docs.

A request whose first user message is a known task's trigger text is answered from that task's reference solution,
one tool call per turn (the k-th assistant turn calls the k-th step), then the reference answer: a trial makes
len(solution) + 1 requests. Such a request asking for a `workflow_decision` (the non-adaptive model workflow,
evalsuite.trials.agents.workflow) gets the decision the reference makes, in one answer. Any other conversation
(Inspect AI's samples in the benchmark) gets the generic script: the first tool the request lists, `turns` times,
then "done". Every answer reports usage (prompt tokens about the request's characters / 4, a fixed completion
figure) and comes after a latency drawn from a seeded lognormal around `median_ms`.

It listens on 127.0.0.1 only and answers `max_requests` completions; later requests get 503 (`request budget
spent`) until the listener closes, then the connection is refused, and the process ends once the answered
requests are sent. `serve_local_model` runs it in a subprocess so that its CPU time never counts as the
harness's (the benchmark measures CPU per trial of the harness process); `serve` runs it in this process
(`evalsuite local-model`).
"""
from __future__ import annotations

import asyncio
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from evalsuite.core.io import parse_json
from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.tasks.taskfile import read_tasks, write_tasks
from evalsuite.trials.play.guard import SameHost

LOOPBACK = "127.0.0.1"
GENERIC_ANSWER = "done"
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text; the figure only has to be stable


class LocalModelError(RuntimeError):
    """The local endpoint could not start or was asked for something it does not do (another host)."""


class LocalModelSettings(BaseModel):
    """How the endpoint answers: its request budget, its latency distribution and the generic script's turns."""

    max_requests: int = Field(ge=1)  # completions answered before it stops (required: it never runs unbounded)
    median_ms: float = Field(400.0, ge=0)
    sigma: float = Field(0.25, ge=0)  # of the latency's log; the mean is median * exp(sigma^2 / 2), 3% above it
    seed: int = 0
    turns: int = Field(3, ge=0)  # tool turns of the generic script
    completion_tokens: int = Field(20, ge=0)


class LocalModelStats(BaseModel):
    answered: int = 0
    refused: int = 0
    cpu_seconds: float = 0.0  # the serving process's CPU time, so a benchmark can tell whether the endpoint limits it


class Script:
    """What the endpoint says next in a conversation: a task's reference solution step by step, or the generic
    script for a conversation it does not know."""

    def __init__(self, tasks: list[TaskRecord], turns: int):
        self.by_trigger = {t.trigger.text: t for t in tasks}
        self.turns = turns

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message answering this request."""
        messages = body.get("messages") or []
        task = self.by_trigger.get(_first_user_text(messages))
        decisions = _decision_menu(body)
        if task is not None and decisions:
            return {"role": "assistant", "content": json.dumps(decide_as_reference(task, decisions))}
        if task is not None:
            calls, answer = task.solution_calls(), task.reference_answer or ""
        else:
            calls, answer = [generic_call(body.get("tools") or [])] * self.turns, GENERIC_ANSWER
        done = sum(1 for m in messages if m.get("role") == "assistant")
        if done >= len(calls):
            return {"role": "assistant", "content": answer}
        call = calls[done]
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{done}", "type": "function",
             "function": {"name": call.tool, "arguments": json.dumps(call.arguments)}}]}


def _decision_menu(body: dict[str, Any]) -> list[str]:
    """The decisions a non-adaptive model workflow offers (evalsuite.trials.agents.workflow), or none."""
    fmt = (body.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") != "workflow_decision":
        return []
    return list(((fmt.get("schema") or {}).get("properties") or {}).get("decision", {}).get("enum") or [])


def decide_as_reference(task: TaskRecord, decisions: list[str]) -> dict[str, str]:
    """The decision the task's reference makes: the first of its calls that is a listed decision (decisions are
    named by the write tool they lead to); the first listed when none is. The note is the reference answer."""
    made = next((c.tool for c in task.solution_calls() if c.tool in decisions), decisions[0])
    return {"decision": made, "note": task.reference_answer or ""}


def _first_user_text(messages: list[dict[str, Any]]) -> str:
    """The first user message's text: a plain string, or the text parts of a content list (Inspect sends one)."""
    for m in messages:
        if m.get("role") == "user":
            content = m.get("content") or ""
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content)
    return ""


def generic_call(tools: list[dict[str, Any]]) -> ToolCall:
    """A call of the first listed tool with a fixed value for each required property of its JSON schema."""
    if not tools:
        raise LocalModelError("the generic script needs a request that lists at least one tool")
    fn = tools[0].get("function", tools[0])
    schema = fn.get("parameters") or {}
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    return ToolCall(tool=fn["name"], arguments={k: _fixed_value(props.get(k) or {}) for k in required})


def _fixed_value(prop: dict[str, Any]) -> Any:
    if prop.get("enum"):
        return prop["enum"][0]
    kind = prop.get("type", "string")
    if isinstance(kind, list):  # ["string", "null"]: the first that is not null
        kind = next((k for k in kind if k != "null"), "string")
    return {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(kind, "x")


class Latency:
    """Seeded lognormal delays: the i-th request to arrive waits the i-th draw."""

    def __init__(self, median_ms: float, sigma: float, seed: int):
        self.median_s, self.sigma, self.rng = median_ms / 1000, sigma, random.Random(seed)

    def draw(self) -> float:
        if self.median_s == 0:
            return 0.0
        return self.rng.lognormvariate(math.log(self.median_s), self.sigma)


def local_model_app(tasks: list[TaskRecord], settings: LocalModelSettings,
                    on_spent: Callable[[], None] = lambda: None) -> Starlette:
    """The endpoint's routes: chat completions (within the budget; `on_spent` is called when the last one is
    taken) and its counters (GET /v1/local/stats)."""
    script, stats = Script(tasks, settings.turns), LocalModelStats()
    latency = Latency(settings.median_ms, settings.sigma, settings.seed)

    async def completions(request: Request) -> JSONResponse:
        raw = await request.body()
        try:  # a request it cannot read is the client's error: 400, and no answer of the budget spent on it
            body = _request_body(raw)
            message = script.reply(body)
        except (BadRequest, LocalModelError) as exc:
            return JSONResponse({"error": {"message": str(exc), "type": "invalid_request_error"}}, status_code=400)
        if stats.answered >= settings.max_requests:
            stats.refused += 1
            return JSONResponse({"error": {"message": f"request budget spent ({settings.max_requests} answered)",
                                           "type": "request_budget_spent"}}, status_code=503,
                                headers={"Connection": "close"})
        stats.answered += 1
        if stats.answered == settings.max_requests:
            on_spent()  # the server stops taking connections; requests already taken are still answered
        await asyncio.sleep(latency.draw())
        prompt = len(raw) // CHARS_PER_TOKEN
        return JSONResponse({
            "id": f"local-{stats.answered}", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": settings.completion_tokens,
                      "total_tokens": prompt + settings.completion_tokens}})

    async def counters(request: Request) -> JSONResponse:
        stats.cpu_seconds = time.process_time()
        return JSONResponse(stats.model_dump())

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                             Route("/chat/completions", completions, methods=["POST"]),
                             Route("/v1/local/stats", counters, methods=["GET"])],
                     middleware=[Middleware(SameHost)])


class BadRequest(ValueError):
    """A chat completions request the endpoint cannot read; the message says why."""


class _Request(BaseModel):
    """What the script reads of a chat completions request (the rest is the client's business)."""

    model_config = ConfigDict(extra="allow")
    messages: list[dict[str, Any]] = Field(min_length=1)
    tools: list[dict[str, Any]] = []


def _request_body(raw: bytes) -> dict[str, Any]:
    """The request body as the script reads it; BadRequest for bytes that are not UTF-8 JSON (bounded as every JSON
    input is) holding an object with a list of messages."""
    try:
        body = parse_json(raw.decode("utf-8"), "request body", BadRequest)
    except UnicodeDecodeError as exc:
        raise BadRequest("request body: not UTF-8") from exc
    try:
        return _Request.model_validate(body).model_dump()
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadRequest(f"request body: {'.'.join(map(str, first['loc'])) or 'top level'}: {first['msg']}") from exc


def loopback_listener(port: int, host: str = LOOPBACK) -> socket.socket:
    """A listening socket on 127.0.0.1:port (0: any free port); any other host is refused."""
    if host != LOOPBACK:
        raise LocalModelError(f"{host}: the local model listens on {LOOPBACK} only")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it; without it every response waits ~40 ms for the client's delayed ACK
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)  # a burst of 128+ new connections waits in the backlog instead of being refused
    return sock


def serve(tasks: list[TaskRecord], settings: LocalModelSettings, sock: socket.socket) -> None:
    """Serve on the socket (see loopback_listener) in this process until the request budget is spent and every
    answered request has been sent, or until interrupted."""
    app = local_model_app(tasks, settings, on_spent=lambda: setattr(server, "should_exit", True))
    # A request still in flight 10 s after SIGTERM is cut, so serve_local_model's 30 s wait always ends.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", ws="none",
                                           backlog=2048, timeout_keep_alive=30, timeout_graceful_shutdown=10))
    with sock:
        server.run(sockets=[sock])


@contextmanager
def serve_local_model(tasks: list[TaskRecord], *, max_requests: int, median_ms: float = 400.0,
                      **settings: Any) -> Iterator[str]:
    """The endpoint in a subprocess for the life of the context; yields its base URL (http://127.0.0.1:P/v1).
    `settings` as LocalModelSettings. A subprocess keeps the endpoint's CPU out of this process's CPU time."""
    chosen = LocalModelSettings(max_requests=max_requests, median_ms=median_ms, **settings)
    with tempfile.TemporaryDirectory(prefix="evalsuite-local-model-") as tmp:
        if tasks:  # none: every conversation gets the generic script
            write_tasks(Path(tmp) / "tasks.jsonl", tasks)
        (Path(tmp) / "settings.json").write_text(chosen.model_dump_json())
        root = str(Path(__file__).resolve().parents[2])  # this checkout's evalsuite, not another installed one
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
        proc = subprocess.Popen([sys.executable, "-m", "evalsuite.trials.local_model", tmp], stdout=subprocess.PIPE,
                                text=True, env=env)
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            if not line.startswith("port "):
                raise LocalModelError(f"the local model exited with status {proc.wait()} before listening")
            yield f"http://{LOOPBACK}:{int(line.split()[1])}/v1"
        finally:
            if proc.poll() is None:
                proc.terminate()  # graceful in uvicorn: requests in flight are answered first
            proc.wait(timeout=30)
            if proc.stdout:
                proc.stdout.close()


def _main(folder: str) -> None:
    """The subprocess of serve_local_model: settings and tasks from the folder, the port on stdout once bound."""
    settings = LocalModelSettings.model_validate_json((Path(folder) / "settings.json").read_text())
    path = Path(folder) / "tasks.jsonl"
    tasks = read_tasks(path) if path.is_file() else []
    # An ignored SIGTERM survives exec (a parent that ignores it passes that on); the SIGTERM that ends
    # serve_local_model's context may come before uvicorn installs its handler, and must stop us then too.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sock = loopback_listener(0)
    print(f"port {sock.getsockname()[1]}", flush=True)
    serve(tasks, settings, sock)


if __name__ == "__main__":
    _main(sys.argv[1])
