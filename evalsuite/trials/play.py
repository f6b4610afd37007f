"""`evalsuite play`: staff attempt tasks on a local web page, each attempt a trial graded and stored like an agent's.

A person is an agent whose run() is driven from a browser. Each attempt runs
run_job in a thread of its own (reset and its hash check, the role's tools
under the step budget, grading, the record's stamp), and the page hands it one
tool call at a time. The page shows what an MCP agent is shown (task_view and
the tool schemas), never the goal state or the reference solution; held-out
and conversational tasks are never offered, and every task opened is written
to the access log. The person is an agent config of kind human named
`human:NAME`, so the scorecard can keep people apart from agents.
"""
from __future__ import annotations

import contextlib
import json
import queue
import re
import secrets
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from evalsuite.core.identity import AgentConfig, RunIdentity, identity_sha256
from evalsuite.core.records import TaskRecord, TraceEvent
from evalsuite.tasks.heldout import log_access, without_held_out
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.jobs import Stamp, run_job
from evalsuite.trials.mcp_server import task_view
from evalsuite.trials.tracelog import (
    SUMMARY,
    TRACES,
    TraceWriter,
    TrialRecord,
    read_traces,
    repair_traces,
    write_summary,
)
from evalsuite.trials.users.base import ConversationOver
from evalsuite.worlds.ref import WorldRef
from evalsuite.worlds.world import World

PURPOSE = "human_baseline"  # the access log's word for a task read by `evalsuite play`
HUMAN = "human"
NAME = re.compile(r"[\w .'-]{1,60}")  # letters of any script, digits, space and . ' - _
COOKIE = "evalsuite_play"
REPLY_SECONDS = 300.0  # a tool call or a grade takes milliseconds; this long means the attempt's thread is stuck
TEMPLATES = Jinja2Templates(directory=Path(__file__).with_name("templates"))


def playable(tasks: list[TaskRecord]) -> list[TaskRecord]:
    """The tasks a person may be offered: never a held-out one. On a conversational task the person talks to
    the task's simulated user through a message form, as an MCP agent does through message_user."""
    return without_held_out(tasks)


def person_config(name: str) -> AgentConfig:
    """A person as an agent config: one per name, so records are keyed by who made them."""
    return AgentConfig(name=f"{HUMAN}:{name}", kind=HUMAN)


@dataclass(frozen=True)
class Desk:
    """What a play page offers: the tasks in order, the world to reset for each attempt, and the identity and
    run seed of the run folder its records join."""

    label: str  # "suite version", shown on every page
    tasks: list[TaskRecord]
    world_ref: WorldRef
    identity: RunIdentity
    run_seed: int
    sample: int | None = None  # the --sample the tasks were drawn with, shown on the task list


@dataclass(frozen=True)
class FormField:
    """One argument of a tool as a form field."""

    name: str
    label: str
    kind: str  # choice, text, integer, number, boolean, json (typed list/object) or any (no declared type)
    required: bool
    choices: tuple[str, ...] = ()
    hint: str = ""  # the schema's description

    @property
    def note(self) -> str:
        """What the person is told beside the label: the type the text is read as, and the description."""
        return " ".join(x for x in (_KIND_NOTES.get(self.kind, ""), self.hint) if x)


_KIND_NOTES = {"integer": "(whole number)", "number": "(number)", "boolean": "(true or false)", "json": "(JSON)",
               "any": "(text, or a JSON list or object)"}


def form_fields(schema: Mapping[str, Any]) -> list[FormField]:
    """The fields of a tool's argument schema (JSON Schema, as agents get it), in its order."""
    required = set(schema.get("required", ()))
    return [_field(name, prop, name in required) for name, prop in schema.get("properties", {}).items()]


def _field(name: str, prop: Mapping[str, Any], required: bool) -> FormField:
    options = [p for p in prop.get("anyOf", ()) if p.get("type") != "null"]
    if len(options) == 1:  # an optional value: the one type it takes when given
        prop = {**prop, **options[0]}
    label, hint = prop.get("title", name), prop.get("description", "")
    if "enum" in prop:
        return FormField(name, label, "choice", required, tuple(str(v) for v in prop["enum"]), hint)
    types = {prop.get("type")} if "type" in prop else {p.get("type") for p in options}
    if "string" in types or not types - {None}:  # a string among the choices, or none declared
        return FormField(name, label, "text" if "string" in types else "any", required, (), hint)
    if types <= {"integer", "number", "boolean"} and len(types) == 1:
        return FormField(name, label, types.pop(), required, (), hint)
    return FormField(name, label, "json", required, (), hint)


def form_arguments(fields: list[FormField], form: Mapping[str, str]) -> dict[str, Any]:
    """A tool call's arguments from a submitted form. A blank field is left out, as an agent leaves out an
    argument; a value that does not convert to its field's type is passed as typed, so the tool answers with
    the same error an agent sending it would get."""
    args = {}
    for f in fields:
        text = form.get(f.name, "")
        if text.strip() == "":
            continue
        args[f.name] = _convert(f, text)
    return args


def _convert(f: FormField, text: str) -> Any:
    if f.kind == "choice":
        return text
    if f.kind == "integer" and re.fullmatch(r"\s*[-+]?\d+\s*", text):
        return int(text)
    if f.kind == "number":
        with contextlib.suppress(ValueError):  # not a number: passed as typed, for the tool to refuse
            return float(text)
    if f.kind == "boolean" and text in ("true", "false"):
        return text == "true"
    if f.kind == "json" or (f.kind == "any" and text.lstrip()[:1] in ("[", "{")):
        with contextlib.suppress(ValueError):  # not JSON: passed as typed, for the tool to refuse
            return json.loads(text)
    return text


@dataclass
class _Ready:
    """The attempt's first reply: what the person is shown, built from the trial's own env."""

    view: dict[str, Any]
    tools: list[dict[str, Any]]
    talks: bool  # a user to talk to (dual control)


@dataclass
class _Said:
    """One turn of the conversation: the person's message and the user's reply (or why there was none)."""

    message: str
    reply: str


MESSAGE = object()  # the command that sends a message to the user instead of calling a tool


class _Person:
    """The agent of one attempt: hands the page the task view, then makes the calls the page sends."""

    def __init__(self, name: str):
        self.name = name
        self.commands: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        env.actor = HUMAN
        self.replies.put(_Ready(task_view(task, env), env.tools, env.user is not None))
        while True:
            tool, payload = self.commands.get()
            if tool is None:
                return payload  # the final message; the trial is graded on return
            if tool is MESSAGE:
                self.replies.put(_Said(payload, _turn(env, payload)))
            else:
                self.replies.put(env.call(tool, payload))  # a call past the budget raises and ends the trial


def _turn(env: AgentEnv, message: str) -> str:
    try:
        return env.user.turn(message, env.max_steps, HUMAN)
    except ConversationOver as exc:
        return f"({exc})"


class Attempt:
    """One person's attempt at one task: a trial running in its own thread until the final message."""

    def __init__(self, person: str, task: TaskRecord, world: World, stamp: Stamp):
        self.person, self.task, self.world = person, task, world
        self.agent = _Person(person_config(person).name)
        self.calls: list[TraceEvent] = []
        self.conversation: list[tuple[str, str]] = []  # (who, text): "customer" or "you"
        self.talks = False
        self.record: TrialRecord | None = None
        self.view: dict[str, Any] = {}
        self.tools: list[dict[str, Any]] = []
        threading.Thread(target=self._run, args=(stamp,), daemon=True, name=f"play-{task.task_id}").start()
        self._take(self.agent.replies.get(timeout=REPLY_SECONDS))

    def _run(self, stamp: Stamp) -> None:
        self.agent.replies.put(run_job(self.world, self.task, self.agent, 0, stamp))  # an error is an infra record

    def call(self, tool: str, arguments: dict[str, Any]) -> None:
        self._send(tool, arguments)

    def message(self, text: str) -> None:
        if self.talks:
            self._send(MESSAGE, text)

    def submit(self, message: str) -> None:
        self._send(None, message)

    def _send(self, tool: str | None, payload: Any) -> None:
        if self.record is not None:
            raise RuntimeError(f"attempt at {self.task.task_id} is over")
        self.agent.commands.put((tool, payload))
        self._take(self.agent.replies.get(timeout=REPLY_SECONDS))

    def _take(self, reply: Any) -> None:
        if isinstance(reply, _Ready):
            self.view, self.tools, self.talks = reply.view, reply.tools, reply.talks
            if self.talks:  # the user opened the conversation when greeted
                self.conversation.append(("customer", self.view["trigger_text"]))
        elif isinstance(reply, _Said):
            self.conversation += [("you", reply.message), ("customer", reply.reply)]
        elif isinstance(reply, TraceEvent):
            self.calls.append(reply)
        else:  # the trial ended: submitted, out of budget, or a reset or harness failure
            self.record = reply


class PlayState:
    """The server's state: sessions, open attempts, worlds free for the next attempt, the run folder."""

    def __init__(self, desk: Desk, out_dir: Path):
        self.desk, self.out_dir = desk, Path(out_dir)
        self.by_id = {t.task_id: t for t in desk.tasks}
        self.lock = threading.Lock()  # one request's world work at a time: worlds and the traces file are shared
        self.sessions: dict[str, str] = {}
        self.open: dict[str, Attempt] = {}
        self.last: dict[str, TrialRecord] = {}
        self.free_worlds: list[World] = []
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.done = {(r.agent, r.task_id) for r in repair_traces(self.out_dir / TRACES).records}

    def attempted(self, person: str) -> set[str]:
        name = person_config(person).name
        return {task_id for agent, task_id in self.done if agent == name}

    def start(self, person: str, task_id: str) -> None:
        """Open a task for a person (logged first: opening is reading), resetting a world for the attempt.
        A person has one attempt open at a time and one attempt per task; anything else is ignored."""
        if person in self.open or task_id in self.attempted(person):
            return
        task = self.by_id[task_id]
        log_access({"purpose": PURPOSE, "what": self.desk.label, "person": person, "opened": [task_id]})
        config = person_config(person)
        identity = self.desk.identity.with_agents([config])
        fields = identity.fields(config.name)
        stamp = Stamp(fields=fields, run_seed=self.desk.run_seed,
                      identity_sha256=identity_sha256(fields, self.desk.run_seed))
        world = self.free_worlds.pop() if self.free_worlds else self.desk.world_ref.open()
        attempt = Attempt(person, task, world, stamp)
        self.open[person] = attempt
        self._settle(attempt)

    def _settle(self, attempt: Attempt) -> None:
        """An attempt that has ended: its record joins the run folder and its world is free again."""
        if attempt.record is None:
            return
        writer = TraceWriter(self.out_dir / TRACES)
        try:
            writer.write(attempt.record)
        finally:
            writer.close()
        write_summary(read_traces(self.out_dir / TRACES).records, self.out_dir / SUMMARY)
        self.done.add((attempt.record.agent, attempt.record.task_id))
        self.last[attempt.person] = attempt.record
        self.open.pop(attempt.person, None)
        self.free_worlds.append(attempt.world)

    def call(self, attempt: Attempt, tool: str, form: Mapping[str, str]) -> None:
        schema = next(t["parameters"] for t in attempt.tools if t["name"] == tool)
        attempt.call(tool, form_arguments(form_fields(schema), form))
        self._settle(attempt)

    def submit(self, attempt: Attempt, message: str) -> None:
        attempt.submit(message)
        self._settle(attempt)

    def message(self, attempt: Attempt, text: str) -> None:
        attempt.message(text)
        self._settle(attempt)


def play_app(desk: Desk, out_dir: Path) -> Starlette:
    """The play page as an ASGI app; attempts are recorded into out_dir/traces.jsonl (a run folder)."""
    state = PlayState(desk, out_dir)

    async def locked(fn: Callable[..., Any], *args: Any) -> Any:
        def run() -> Any:
            with state.lock:
                return fn(*args)
        return await anyio.to_thread.run_sync(run)

    def page(request: Request, name: str, person: str | None, status: int = 200, **context: Any) -> Response:
        return TEMPLATES.TemplateResponse(request, name, {"label": desk.label, "person": person, **context},
                                          status_code=status)

    async def home(request: Request) -> Response:
        person = _person(state, request)
        if person is None:
            return page(request, "name.html", None, error=request.query_params.get("error"))
        if person in state.open:
            return _see("/attempt")
        done = state.attempted(person)
        return page(request, "tasks.html", person, tasks=desk.tasks, done=done, sample=desk.sample,
                    last=state.last.get(person))

    async def sign_in(request: Request) -> Response:
        name = " ".join(str((await request.form()).get("name", "")).split())
        if not NAME.fullmatch(name):
            return _see("/?error=name")
        token = secrets.token_urlsafe(24)
        state.sessions[token] = name
        response = _see("/")
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    async def sign_out(request: Request) -> Response:
        state.sessions.pop(request.cookies.get(COOKIE, ""), None)
        response = _see("/")
        response.delete_cookie(COOKIE)
        return response

    async def open_task(request: Request) -> Response:
        person = _person(state, request)
        task_id = request.path_params["task_id"]
        if person is None:
            return _see("/")
        if task_id not in state.by_id:  # held out, conversational, outside the sample, or no such task
            return page(request, "message.html", person, 404, text=f"Task {task_id} is not offered here.")
        await locked(state.start, person, task_id)
        return _see("/")

    async def attempt_page(request: Request) -> Response:
        person = _person(state, request)
        attempt = state.open.get(person) if person else None
        if attempt is None:
            return _see("/")
        forms = [(t, form_fields(t["parameters"])) for t in attempt.tools]
        return page(request, "attempt.html", person, attempt=attempt, view=attempt.view, forms=forms,
                    calls=[(c, _shown(c)) for c in attempt.calls])

    async def call_tool(request: Request) -> Response:
        person = _person(state, request)
        attempt = state.open.get(person) if person else None
        tool = request.path_params["tool"]
        if attempt is None or tool not in {t["name"] for t in attempt.tools}:
            return _see("/")
        form = {k: str(v) for k, v in (await request.form()).items()}
        await locked(state.call, attempt, tool, form)
        return _see("/attempt" if attempt.record is None else "/")

    async def with_text(request: Request, act: Callable[[Attempt, str], None], field: str, then: str) -> Response:
        """A form of one text field acting on the person's open attempt: a message to the user, the final one."""
        person = _person(state, request)
        attempt = state.open.get(person) if person else None
        if attempt is None:
            return _see("/")
        await locked(act, attempt, str((await request.form()).get(field, "")))
        return _see(then)

    async def message(request: Request) -> Response:
        return await with_text(request, state.message, "text", "/attempt")

    async def submit(request: Request) -> Response:
        return await with_text(request, state.submit, "message", "/")

    return Starlette(routes=[
        Route("/", home), Route("/person", sign_in, methods=["POST"]), Route("/leave", sign_out, methods=["POST"]),
        Route("/open/{task_id}", open_task, methods=["POST"]), Route("/attempt", attempt_page),
        Route("/attempt/call/{tool}", call_tool, methods=["POST"]), Route("/attempt/submit", submit, methods=["POST"]),
        Route("/attempt/message", message, methods=["POST"]),
    ])


def _person(state: PlayState, request: Request) -> str | None:
    return state.sessions.get(request.cookies.get(COOKIE, ""))


def _see(url: str) -> Response:
    return RedirectResponse(url, status_code=303)


def _shown(event: TraceEvent) -> str:
    """A call's result as an MCP agent reads it: the result as JSON, or `Error: ...`."""
    if event.outcome == "ok":
        return event.result if isinstance(event.result, str) else json.dumps(event.result, indent=2, default=str)
    return f"Error: {event.error or event.outcome}"


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
