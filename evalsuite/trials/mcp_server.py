"""A trial as an MCP server: the domain's tools, the task as an untrusted agent may see it, and submit_answer.

Every domain call is forwarded to AgentEnv.call in the evalsuite process, so the
role check, the step budget and the trace stay with the harness; the agent
process holds only a URL. The server speaks streamable HTTP on a loopback port
under a random path, so another local process cannot guess its way into a trial.
"""
from __future__ import annotations

import contextlib
import json
import secrets
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server

from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.core.records import TaskRecord

TASK_TOOL = "get_task"
SUBMIT_TOOL = "submit_answer"
STARTUP_SECONDS = 10.0


def task_view(task: TaskRecord, env: AgentEnv) -> dict[str, Any]:
    """What an untrusted agent may see of a task, built field by field: never a dump of the record,
    so a field added to TaskRecord later (a goal, a reference) cannot leak by default."""
    return {"role": task.role.name, "policy_doc": task.policy.doc, "policy_version": task.policy.version,
            "policy_text": env.policy_text, "trigger_type": task.trigger.type, "trigger_text": task.trigger.text,
            "max_steps": env.max_steps}


_HARNESS_TOOLS = [
    types.Tool(name=TASK_TOOL, description="The task: your role, the policy to follow and the item to work on.",
               input_schema={"type": "object", "properties": {}, "additionalProperties": False}),
    types.Tool(name=SUBMIT_TOOL, description="Submit your closing note (decision and the figures behind it). "
                                             "This ends the trial: no tool call is accepted after it.",
               input_schema={"type": "object", "properties": {"message": {"type": "string"}},
                             "required": ["message"], "additionalProperties": False}),
]


class TrialSession:
    """One trial's MCP server state. Create it inside the event loop (it holds an anyio Event)."""

    def __init__(self, env: AgentEnv, view: dict[str, Any]):
        clash = {t.name for t in _HARNESS_TOOLS} & {t["name"] for t in env.tools}
        if clash:
            raise ValueError(f"domain tools {sorted(clash)} clash with the MCP harness tools")
        self.env = env
        self.view = view
        self.answer: str | None = None
        self.failure: BaseException | None = None  # BudgetExhausted, or a harness error met while serving a call
        self.ended = anyio.Event()  # set on submit or failure: the runner then stops the agent process
        self._tools = [types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
                       for t in env.tools] + _HARNESS_TOOLS
        self._schemas = {t.name: t.input_schema for t in self._tools}

    def server(self) -> Server:
        return Server("evalsuite-trial", on_list_tools=self._list_tools, on_call_tool=self._call_tool,
                      get_tool_input_schema=self._schemas.get)

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Handlers run on the event loop thread and env.call never awaits, so concurrent requests
        # from the agent are served one at a time, in arrival order, as the trace records them.
        name, args = params.name, params.arguments or {}
        if self.ended.is_set():
            return _error("the trial is over: an answer was submitted or the trial was stopped")
        if name == TASK_TOOL:
            return types.CallToolResult(content=[_text(json.dumps(self.view))], structured_content=self.view)
        if name == SUBMIT_TOOL:
            if not isinstance(args.get("message"), str):
                return _error("submit_answer needs a string 'message'")
            self.answer = args["message"]
            self.ended.set()
            return types.CallToolResult(content=[_text("answer recorded; the trial is over")])
        try:
            event = self.env.call(name, args)
        except BudgetExhausted as exc:
            return self._stop(exc, f"step budget used: {exc}")
        except Exception as exc:  # a harness fault, not the agent's: kept for the runner to raise
            return self._stop(exc, "harness error; the trial is stopped")
        if event.outcome == "ok":
            result = event.result if isinstance(event.result, str) else json.dumps(event.result, default=str)
            return types.CallToolResult(content=[_text(result)])
        return _error(event.error or event.outcome)

    def _stop(self, exc: BaseException, message: str) -> types.CallToolResult:
        self.failure = exc
        self.ended.set()
        return _error(message)


def _text(text: str) -> types.TextContent:
    return types.TextContent(text=text)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(f"Error: {message}")], is_error=True)


class _Uvicorn(uvicorn.Server):
    def capture_signals(self):
        # uvicorn would take SIGINT/SIGTERM for itself; the harness owns them, so Ctrl-C stops the trial.
        return contextlib.nullcontext()


@contextlib.asynccontextmanager
async def serve_http(server: Server, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve `server` on a free loopback port for the life of the context; yields its URL."""
    path = f"/{secrets.token_urlsafe(16)}/mcp"
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))  # bound before uvicorn starts, so the port is known without racing for it
    web = _Uvicorn(uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1))
    url = f"http://{host}:{sock.getsockname()[1]}{path}"
    with sock:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_serve, web, sock)
            with anyio.fail_after(STARTUP_SECONDS):
                while not web.started:
                    await anyio.sleep(0.01)
            try:
                yield url
            finally:
                web.should_exit = True


async def _serve(web: uvicorn.Server, sock: socket.socket) -> None:
    try:
        await web.serve(sockets=[sock])
    except SystemExit as exc:  # uvicorn exits the process on a failed startup; here that is an ordinary error
        raise RuntimeError(f"MCP server failed to start (uvicorn exit {exc.code})") from exc
