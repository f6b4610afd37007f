"""A trial as an MCP server: the domain's tools, the task as an untrusted agent may see it, and submit_answer.

Every domain call is forwarded to AgentEnv.call in the evalsuite process, so the
role check, the step budget and the trace stay with the harness; the agent
process holds only a URL. The server speaks streamable HTTP on a loopback port
under a random path, so another local process cannot guess its way into a trial,
and on a Unix socket in a folder of its own, which a sealed agent reaches from its
own network namespace through netgate (evalsuite.core.sandbox).
One ToolServer per event loop serves every trial in flight on it, each on a fresh path with
a fresh session manager, closed (404) when the trial ends.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from evalsuite.core.agent_limits import message_over, size
from evalsuite.core.records import TaskRecord
from evalsuite.core.sandbox import SOCKET_NAME, Endpoint
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.trials.users.base import ConversationOver

TASK_TOOL = "get_task"
SUBMIT_TOOL = "submit_answer"
USER_TOOL = "message_user"  # only in a conversation with a user (dual control): the agent's one line to them
STARTUP_SECONDS = 10.0


def task_view(task: TaskRecord, env: AgentEnv) -> dict[str, Any]:
    """What an untrusted agent may see of a task, built field by field: never a dump of the record,
    so a field added to TaskRecord later (a goal, a reference) cannot leak by default.

    With a user to talk to, the trigger is what the user says when greeted (as every agent hears it first),
    not the ticket written for the no-user mode; the greeting and the reply are in the trace."""
    trigger = task.trigger.text if env.user is None else env.user.reply() or ""
    return {"role": task.role.name, "policy_doc": task.policy.doc, "policy_version": task.policy.version,
            "policy_text": env.policy_text, "trigger_type": task.trigger.type, "trigger_text": trigger,
            "max_steps": env.max_steps}


_HARNESS_TOOLS = [
    types.Tool(name=TASK_TOOL, description="The task: your role, the policy to follow and the item to work on.",
               input_schema={"type": "object", "properties": {}, "additionalProperties": False}),
    types.Tool(name=SUBMIT_TOOL, description="Submit your closing note (decision and the figures behind it). "
                                             "This ends the trial: no tool call is accepted after it.",
               input_schema={"type": "object", "properties": {"message": {"type": "string"}},
                             "required": ["message"], "additionalProperties": False}),
]
_USER_TOOL = types.Tool(
    name=USER_TOOL, description="Send the customer a message and get their reply. Steps on the customer's own "
                                "device are theirs to take: ask them to.",
    input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"],
                  "additionalProperties": False})


class TrialSession:
    """One trial's MCP server state. Create it inside the event loop (it holds an anyio Event)."""

    def __init__(self, env: AgentEnv, view: dict[str, Any], message_bytes: int | None = None):
        harness = _HARNESS_TOOLS + ([_USER_TOOL] if env.user is not None else [])
        clash = {t.name for t in harness} & {t["name"] for t in env.tools}
        if clash:
            raise ValueError(f"domain tools {sorted(clash)} clash with the MCP harness tools")
        self.env = env
        self.view = view
        self.message_bytes = message_bytes  # the final-message cap (evalsuite.core.agent_limits); None: none
        self.answer: str | None = None
        self.failure: BaseException | None = None  # BudgetExhausted, or a harness error met while serving a call
        self.ended = anyio.Event()  # set on submit or failure: the runner then stops the agent process
        read_only, reads = types.ToolAnnotations(read_only_hint=True), env.read_tools  # read_tools sorts: once
        self._tools = [types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"],
                                  annotations=read_only if t["name"] in reads else None)
                       for t in env.tools] + harness
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
            return self._submit(args.get("message"))
        if name == USER_TOOL and self.env.user is not None:
            return self._message_user(args)
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

    def _submit(self, message: Any) -> types.CallToolResult:
        """Record the answer and end the trial. One over the cap is refused whole, never cut: a grader then reads
        either the agent's whole answer or none (the trial is budget_exhausted, its record says why)."""
        if not isinstance(message, str):
            return _error("submit_answer needs a string 'message'")
        over = message_over(message, self.message_bytes) if self.message_bytes is not None else None
        if over:
            n, cap = len(message.encode(errors="surrogatepass")), size(self.message_bytes)
            return self._stop(BudgetExhausted(over),
                              f"the message is {size(n)}, over the {cap} cap: refused, and the trial is over")
        self.answer = message
        self.ended.set()
        return types.CallToolResult(content=[_text("answer recorded; the trial is over")])

    def _message_user(self, args: dict[str, Any]) -> types.CallToolResult:
        """One turn of the conversation (in the trace as two message events); as many turns as steps at most."""
        if not isinstance(args.get("message"), str):
            return _error("message_user needs a string 'message'")
        try:
            return types.CallToolResult(content=[_text(self.env.user.turn(args["message"], self.env.max_steps))])
        except ConversationOver as exc:
            return _error(str(exc))

    def _stop(self, exc: BaseException, message: str) -> types.CallToolResult:
        self.failure = exc
        self.ended.set()
        return _error(message)


class _NoWorld:
    """What a warm-up session serves instead of a trial: the tools' schemas and no world (a call ends it)."""

    max_steps = 0
    policy_text = ""
    user = None
    read_tools: frozenset[str] = frozenset()  # nothing to read: every call ends a warm-up

    def __init__(self, tools: list[dict[str, Any]]):
        self.tools = tools

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        raise BudgetExhausted("a warm-up has no world to act on")


def warm_up_session(tools: list[dict[str, Any]]) -> TrialSession:
    """A session with no task and no world, for a new long-lived agent to exercise its client on before its first
    trial. It holds nothing of any trial: the tool schemas are the same for every trial of the domain."""
    view = {"role": "", "policy_doc": "", "policy_version": "", "policy_text": "", "trigger_type": "warm_up",
            "trigger_text": "A warm-up, not a trial: there is nothing to do; submit anything.", "max_steps": 0}
    return TrialSession(_NoWorld(tools), view)  # type: ignore[arg-type]


def _text(text: str) -> types.TextContent:
    return types.TextContent(text=text)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(f"Error: {message}")], is_error=True)


class _Uvicorn(uvicorn.Server):
    def capture_signals(self):
        # uvicorn would take SIGINT/SIGTERM for itself; the harness owns them, so Ctrl-C stops the trial.
        return contextlib.nullcontext()


def _loopback_security() -> TransportSecuritySettings:
    """What the SDK's own loopback app turns on: DNS-rebinding protection, so a web page cannot reach a trial."""
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                                     allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])


class ToolServer:
    """One loopback HTTP server that serves many trials, in turn or at once: an agent starts (and stops) one per
    event loop, not one per trial.

    Each trial gets a fresh secret path, a fresh MCP session manager and its own TrialSession (its world, its
    budget, its trace): nothing of one trial's server state is reachable from another's. When a trial ends its
    path is removed, so its URL answers 404, and its sessions are closed; a session id of one trial is unknown to
    every other trial's manager. Start and use it inside one event loop.
    """

    def __init__(self, host: str = "127.0.0.1"):
        self.host = host
        self._routes: dict[str, StreamableHTTPSessionManager] = {}
        self._web: _Uvicorn | None = None
        self._task: asyncio.Task | None = None
        self._socks: list[socket.socket] = []
        self._folder: str | None = None
        self.base = ""
        self.endpoint: Endpoint | None = None

    async def start(self) -> None:
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socks.append(tcp)
        # Accepted connections inherit it. asyncio sets it only on sockets whose proto is IPPROTO_TCP, which a
        # plain socket() is not; without it every response waits ~40 ms for the client's delayed ACK.
        tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        tcp.bind((self.host, 0))  # bound before uvicorn starts, so the port is known without racing for it
        port = tcp.getsockname()[1]
        self.base = f"http://{self.host}:{port}"
        self._folder = tempfile.mkdtemp(prefix="evalsuite-mcp-")  # 0700: the harness's, and a sandbox's netgate's
        uds = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socks.append(uds)
        uds.bind(os.path.join(self._folder, SOCKET_NAME))
        self.endpoint = Endpoint(self._folder, port)
        # asgi3: a bound method would pass for an ASGI2 app; MCP speaks HTTP only, so no websockets either
        config = uvicorn.Config(self._app, interface="asgi3", ws="none", log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=1)
        self._web = _Uvicorn(config)
        self._task = asyncio.get_running_loop().create_task(_serve(self._web, self._socks))
        with anyio.fail_after(STARTUP_SECONDS):
            while not self._web.started:
                if self._task.done():
                    self._task.result()  # raises why it stopped
                await anyio.sleep(0.005)

    async def stop(self) -> None:
        if self._web is None or self._task is None:
            return
        self._web.should_exit = True
        await self._task
        self.abandon()

    def abandon(self) -> None:
        """Free the port and the socket of a server that has stopped or whose event loop has closed (its serving
        task went with the loop)."""
        for sock in self._socks:
            sock.close()
        self._socks = []
        if self._folder is not None:
            shutil.rmtree(self._folder)
            self._folder = None
        self._web = self._task = None

    @contextlib.asynccontextmanager
    async def trial(self, session: TrialSession) -> AsyncIterator[str]:
        """Serve one trial's session for the life of the context; yields its URL (fresh per trial)."""
        path = f"/{secrets.token_urlsafe(16)}/mcp"
        # json_response: each answer is one JSON body (a trial's server sends no progress or notifications)
        manager = StreamableHTTPSessionManager(app=session.server(), security_settings=_loopback_security(),
                                               session_idle_timeout=None, json_response=True)
        async with manager.run():
            self._routes[path] = manager
            try:
                yield self.base + path
            finally:
                del self._routes[path]  # from here on the URL answers 404, before its sessions close

    async def _app(self, scope: dict, receive: Any, send: Any) -> None:
        manager = self._routes.get(scope.get("path", "")) if scope["type"] == "http" else None
        if manager is None:
            await _not_found(send)
            return
        await manager.handle_request(scope, receive, send)


async def _not_found(send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"no such trial"})


async def _serve(web: uvicorn.Server, socks: list[socket.socket]) -> None:
    try:
        await web.serve(sockets=socks)
    except SystemExit as exc:  # uvicorn exits the process on a failed startup; here that is an ordinary error
        raise RuntimeError(f"MCP server failed to start (uvicorn exit {exc.code})") from exc
