"""The play page's web app: sign-in by name, the task list, an attempt's page and the forms that drive it.

Every request that acts on a world runs in a worker thread, in its turn on its attempt (Attempts holds the
locks); a page only reads the attempt's state. What the page will not do (a second open attempt, a command on an
attempt that has ended or has too many waiting, a page that is full) answers 409 or 429 with a sentence saying
why, never a server error. Tasks outside the desk (held out, outside the sample, or no such task) are refused
with the id they were asked by and nothing more. Requests from elsewhere (another Host, a cross-origin form) are
refused before any route (guard).
"""
from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from evalsuite.core.people import PersonNameError
from evalsuite.core.records import TraceEvent
from evalsuite.trials.agents.human import Attempt, Attempts, Desk, PlayLimits, Refused
from evalsuite.trials.play.forms import form_arguments, form_fields
from evalsuite.trials.play.guard import SameOrigin

NAME = re.compile(r"[\w .'-]{1,60}")  # letters of any script, digits, space and . ' - _
COOKIE = "evalsuite_play"
TEMPLATES = Jinja2Templates(directory=Path(__file__).with_name("templates"))
REFUSED = {"open": 409, "attempted": 409, "over": 409, "busy": 429, "full": 429}  # Refused.kind -> HTTP status


def play_app(desk: Desk, out_dir: Path, limits: PlayLimits | None = None) -> Starlette:
    """The play page as an ASGI app; attempts are recorded into out_dir/traces.jsonl (a run folder)."""
    play = _Play(desk, Attempts(desk, out_dir, limits))
    app = Starlette(middleware=[Middleware(SameOrigin)], routes=[
        Route("/", play.home), Route("/person", play.sign_in, methods=["POST"]),
        Route("/leave", play.sign_out, methods=["POST"]), Route("/open/{task_id}", play.open_task, methods=["POST"]),
        Route("/attempt", play.attempt_page), Route("/attempt/call/{tool}", play.call_tool, methods=["POST"]),
        Route("/attempt/submit", play.submit, methods=["POST"]), Route("/attempt/message", play.message,
                                                                       methods=["POST"]),
        Route("/attempt/save", play.save, methods=["POST"]),
    ])
    app.state.attempts = play.attempts  # for whoever serves the page (and tests) to see what is open
    return app


class _Play:
    """The routes over one desk's attempts, and the signed-in people (a cookie's token to a name)."""

    def __init__(self, desk: Desk, attempts: Attempts):
        self.desk, self.attempts = desk, attempts
        self.sessions: dict[str, str] = {}

    def person(self, request: Request) -> str | None:
        return self.sessions.get(request.cookies.get(COOKIE, ""))

    def attempt(self, request: Request) -> tuple[str | None, Attempt | None]:
        person = self.person(request)
        return person, self.attempts.open.get(person) if person else None

    async def act(self, request: Request, person: str, then: str, fn: Callable[..., Any], *args: Any) -> Response:
        """Run one command in a worker thread (Attempts takes its turn on the attempt); see `then`, or read why
        the command was not done."""
        try:
            await anyio.to_thread.run_sync(fn, *args)
        except Refused as exc:
            return self.page(request, "message.html", person, REFUSED[exc.kind], text=exc.text)
        return _see(then)

    def page(self, request: Request, name: str, person: str | None, status: int = 200, **context: Any) -> Response:
        return TEMPLATES.TemplateResponse(request, name, {"label": self.desk.label, "person": person, **context},
                                          status_code=status)

    def no_attempt(self, request: Request, person: str | None) -> Response:
        """A command with no attempt to act on: sign in first, or (the attempt ended meanwhile) say so."""
        if person is None:
            return _see("/")
        return self.page(request, "message.html", person, 409, text="You have no attempt open (it may have just "
                                                                   "ended), so this was not done.")

    async def home(self, request: Request) -> Response:
        person = self.person(request)
        if person is None:
            return self.page(request, "name.html", None, error=request.query_params.get("error"))
        if person in self.attempts.open:
            return _see("/attempt")
        return self.page(request, "tasks.html", person, tasks=self.desk.tasks, done=self.attempts.attempted(person),
                         sample=self.desk.sample, last=self.attempts.last.get(person))

    async def sign_in(self, request: Request) -> Response:
        name = " ".join(str((await request.form()).get("name", "")).split())
        try:
            if not NAME.fullmatch(name):
                return _see("/?error=name")
            person = self.attempts.person(name)  # "GRACE" signs in as the Grace already seen
        except PersonNameError:
            return _see("/?error=name")
        token = secrets.token_urlsafe(24)
        self.sessions[token] = person
        response = _see("/")
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    async def sign_out(self, request: Request) -> Response:
        self.sessions.pop(request.cookies.get(COOKIE, ""), None)
        response = _see("/")
        response.delete_cookie(COOKIE)
        return response

    async def open_task(self, request: Request) -> Response:
        person, task_id = self.person(request), request.path_params["task_id"]
        if person is None:
            return _see("/")
        if task_id not in self.attempts.by_id:  # held out, outside the sample, or no such task
            return self.page(request, "message.html", person, 404, text=f"Task {task_id} is not offered here.")
        return await self.act(request, person, "/", self.attempts.start, person, task_id)

    async def attempt_page(self, request: Request) -> Response:
        person, attempt = self.attempt(request)
        if attempt is None:
            return _see("/")
        if attempt.unsaved:  # ended and graded, its record kept here until the run folder takes it
            return self.page(request, "unsaved.html", person, 503, attempt=attempt)
        forms = [(t, form_fields(t["parameters"])) for t in attempt.tools]
        return self.page(request, "attempt.html", person, attempt=attempt, view=attempt.view, forms=forms,
                         calls=[(c, _shown(c)) for c in attempt.calls])

    async def call_tool(self, request: Request) -> Response:
        person, attempt = self.attempt(request)
        tool = request.path_params["tool"]
        if attempt is None:
            return self.no_attempt(request, person)
        schemas = {t["name"]: t["parameters"] for t in attempt.tools}
        if tool not in schemas:  # a tool the attempt does not offer: back to its page, which has no form for it
            return _see("/")
        arguments = form_arguments(form_fields(schemas[tool]), {k: str(v) for k, v in (await request.form()).items()})
        return await self.act(request, person, "/attempt", self.attempts.call, attempt, tool, arguments)

    async def save(self, request: Request) -> Response:
        person, attempt = self.attempt(request)
        if attempt is None:
            return self.no_attempt(request, person)
        return await self.act(request, person, "/", self.attempts.save, attempt)

    async def message(self, request: Request) -> Response:
        return await self.with_text(request, self.attempts.message, "text", "/attempt")

    async def submit(self, request: Request) -> Response:
        return await self.with_text(request, self.attempts.submit, "message", "/")

    async def with_text(self, request: Request, act: Callable[[Attempt, str], None], field: str,
                        then: str) -> Response:
        """A form of one text field acting on the person's open attempt: a message to the user, the final one."""
        person, attempt = self.attempt(request)
        if attempt is None:
            return self.no_attempt(request, person)
        return await self.act(request, person, then, act, attempt, str((await request.form()).get(field, "")))


def _see(url: str) -> Response:
    return RedirectResponse(url, status_code=303)


def _shown(event: TraceEvent) -> str:
    """A call's result as an MCP agent reads it: the result as JSON, or `Error: ...`."""
    if event.outcome == "ok":
        return event.result if isinstance(event.result, str) else json.dumps(event.result, indent=2, default=str)
    return f"Error: {event.error or event.outcome}"
