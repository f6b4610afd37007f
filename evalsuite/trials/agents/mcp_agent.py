"""An external agent: any program that acts on a trial only through MCP, in its own process.

The harness serves each trial's tools (evalsuite.trials.mcp_server) on a loopback URL: the world, its
database file and the task record stay in this process. The agent ends by calling submit_answer. One
tool server lives as long as the agent object (one per worker) and gives every trial a fresh secret
path and a fresh MCP session manager on its freshly reset world; the path answers 404 once its trial ends.

How the agent's process meets its trials is its config's `boundary`:

- process (default): the command is started per trial with the URL in EVALSUITE_MCP_URL and stopped after.
- persistent: the command is started once per worker, sealed, and is handed one trial at a time: a JSON
  line {"trial", "url", "home", "tmp", "clear", "learn"} on its stdin, answered by {"trial", "exit", "output"} on
  its stdout once that trial's work is done; it exits when stdin closes. Any language can speak it. Each
  trial has its own URL, session, world, HOME and TMPDIR; what the program keeps in its own memory is its
  responsibility, which its records say (boundary "persistent").
- zygote: a Python script (`python SCRIPT.py ARGS`) run under evalsuite/trials/zygote.py, which speaks
  the persistent protocol: it imports the script's modules once and forks a fresh agent per trial, so no
  agent state crosses trials while the interpreter start and the imports are paid once per worker. Before
  its first trial it gets a warm-up session (no task, no world; "learn": true) whose first-use imports it
  keeps; it learns from no real trial.

A trial that runs out of time, or whose long-lived agent does not answer within submit_grace of the
trial's end, has its whole process group killed; the next trial starts a fresh one.

The command runs sealed (evalsuite.trials.sandbox): as the dedicated agent user, in a private
empty home and tmp, with an environment of PATH, the locale, HOME, TMPDIR, the URL and only the
variables asked for. Under bwrap it sees no file but the system's, its Python's and its own,
and no process of the harness; as the agent user alone, the 0700 home keeps releases, worlds
and task files below it out of reach. Its trial is reachable only through MCP.
EVALSUITE_AGENT_SANDBOX=none runs it unsealed, and its records say so.
"""
from __future__ import annotations

import asyncio
import json
import multiprocessing.util
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from evalsuite.core.identity import AgentConfig
from evalsuite.core.records import TaskRecord
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.trials.mcp_server import ToolServer, TrialSession, task_view, warm_up_session
from evalsuite.trials.sandbox import Sandbox, sandbox_for

URL_VAR = "EVALSUITE_MCP_URL"
BASE_ENV = ("PATH", "LANG", "LC_ALL", "TZ")  # enough to start a program; anything else is passed on request
ZYGOTE = Path(__file__).parents[1] / "zygote.py"
Boundary = Literal["process", "persistent", "zygote"]
REPLY_BYTES = 1 << 20  # one protocol line; a longer one is not a reply
WARM_UP_SECONDS = 60.0  # a new zygote's warm-up (not a trial): its agent connects, lists, calls, submits


class AgentProcessError(RuntimeError):
    """The agent program failed on its own (non-zero exit, not started): recorded as infra_error."""


@dataclass
class _Ending:
    answer: str | None
    failure: BaseException | None
    timed_out: bool
    stopped: bool  # the harness stopped it after the trial ended (submit or failure)
    returncode: int | None
    output: str


@dataclass
class _Worker:
    """A long-lived agent process (persistent or zygote) and the folder its home and trials' folders live in."""

    proc: Process
    folder: str
    log: IO[bytes]
    replies: BufferedByteReceiveStream = field(init=False)

    def __post_init__(self) -> None:
        self.replies = BufferedByteReceiveStream(self.proc.stdout)

    async def send(self, request: dict) -> None:
        """Hand it a trial; a process that has gone is left for receive() to report (its stdout is at its end)."""
        try:
            await self.proc.stdin.send((json.dumps(request) + "\n").encode())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return

    async def receive(self, trial: str) -> dict:
        """The reply to `trial`; a process that died first answers with its exit code and the end of its log, a
        reply that breaks the protocol with "broken" (raised by the caller, outside the task group)."""
        line = b""
        while not line.lstrip().startswith(b"{"):  # stdout is for replies; any other line is not one
            try:
                line = await self.replies.receive_until(b"\n", REPLY_BYTES)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                await self.proc.wait()
                return {"trial": trial, "exit": self.proc.returncode, "output": _tail(self.log), "died": True}
            except anyio.DelimiterNotFound:
                return {"broken": f"agent wrote a line of more than {REPLY_BYTES} bytes on stdout"}
        try:
            reply = json.loads(line)
        except ValueError as exc:
            return {"broken": f"agent reply is not JSON ({exc}): {line[:200]!r}"}
        if not isinstance(reply, dict) or reply.get("trial") != trial:
            return {"broken": f"agent replied {line[:200]!r} during trial {trial!r}"}
        return reply


class _Runtime:
    """What outlives one trial: the event loop the tool server and a long-lived agent live on. Kept apart from
    MCPAgent so a finalizer can close it without keeping the agent alive."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: ToolServer | None = None
        self.worker: _Worker | None = None
        self.kill_grace = 2.0

    def run(self, coro: Any) -> Any:
        if self.loop is None or self.loop.is_closed():  # closed: an agent used again after close() starts afresh
            self.loop = asyncio.new_event_loop()
        return self.loop.run_until_complete(coro)

    async def tool_server(self) -> ToolServer:
        if self.server is None:
            server = ToolServer()
            await server.start()
            self.server = server
        return self.server

    async def drop_worker(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            await _kill_group(worker.proc, self.kill_grace)
            worker.log.close()
            shutil.rmtree(worker.folder)

    def close(self) -> None:
        """Stop the agent process and the tool server; a no-op once closed. Called (by a finalizer too) while
        another event loop runs in this thread, it closes this one from a thread of its own: a thread runs one
        loop at a time, and the agent process must be stopped all the same."""
        if self.loop is None or self.loop.is_closed():
            return
        if not _loop_running_here():
            return self._close_loop()
        closer = threading.Thread(target=self._close_loop, name="mcp-agent-close")
        closer.start()
        closer.join()

    def _close_loop(self) -> None:
        self.loop.run_until_complete(self._aclose())
        self.loop.close()

    async def _aclose(self) -> None:
        await self.drop_worker()
        if self.server is not None:
            await self.server.stop()
            self.server = None


class MCPAgent:
    """Runs `command` as an MCP client of each trial (see the module doc for the boundaries); returns what it submits.

    A trial gets `seconds_per_step * max_steps` seconds; past that the agent is killed and the trial is
    budget_exhausted (its effects graded), as for an in-process agent out of steps. close() (or the end of the
    process) stops a long-lived agent and the tool server.
    """

    def __init__(self, name: str, command: str | Sequence[str], *, boundary: Boundary = "process",
                 seconds_per_step: float = 30.0, env: Mapping[str, str] | None = None, pass_env: Sequence[str] = (),
                 submit_grace: float = 5.0, kill_grace: float = 2.0, sandbox: Sandbox | None = None):
        self.name = name
        self.boundary = boundary
        command = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        self.command = zygote_command(command) if boundary == "zygote" else command
        self.seconds_per_step = seconds_per_step
        self.extra_env = dict(env or {})
        self.pass_env = tuple(pass_env)
        self.submit_grace = submit_grace
        self.kill_grace = kill_grace
        self.sandbox = sandbox or sandbox_for()  # made now: a missing boundary fails before the first trial
        self.sandbox.check(self.command)
        self._runtime = _Runtime()
        self._runtime.kill_grace = kill_grace
        self._close = weakref.finalize(self, self._runtime.close)
        # A pool worker ends with os._exit, which skips the finalizer above but runs multiprocessing's own.
        multiprocessing.util.Finalize(self._runtime, self._runtime.close, exitpriority=10)

    @classmethod
    def from_config(cls, config: AgentConfig) -> MCPAgent:
        """The agent of an mcp config, running its command as given (no shell) at its boundary, sealed unless the
        config says sandbox none. Settings that are not part of the config come from the environment:
        EVALSUITE_MCP_PASS_ENV (comma-separated variables the agent may see, e.g. its API key),
        EVALSUITE_MCP_SECONDS_PER_STEP and the sandbox's EVALSUITE_AGENT_SANDBOX (which mechanism),
        EVALSUITE_AGENT_USER and EVALSUITE_AGENT_READ."""
        if config.kind != "mcp" or not config.command:
            raise ValueError(f"agent {config.name!r}: not an mcp config with a command")
        passed = [v.strip() for v in os.environ.get("EVALSUITE_MCP_PASS_ENV", "").split(",") if v.strip()]
        seconds = float(os.environ.get("EVALSUITE_MCP_SECONDS_PER_STEP", "30"))
        return cls(config.name, config.command, boundary=config.boundary or "process", seconds_per_step=seconds,
                   pass_env=passed, sandbox=sandbox_for(config.sandbox))

    def close(self) -> None:
        self._runtime.close()  # not the finalizer, which runs once: an agent used again after close() is closed too

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        timeout = self.seconds_per_step * env.max_steps
        end = self._runtime.run(self._trial(task, env, timeout))
        # Raised here, outside the event loop's task groups, so run_trial sees BudgetExhausted itself.
        if end.failure is not None:
            raise end.failure
        if end.timed_out:
            raise BudgetExhausted(f"agent process still running after {timeout:g} s "
                                  f"({env.max_steps} steps x {self.seconds_per_step:g} s); killed")
        if not end.stopped and end.returncode != 0:
            raise AgentProcessError(f"agent command exited with {end.returncode}; output ends:\n{end.output}")
        return end.answer or ""

    async def _trial(self, task: TaskRecord, env: AgentEnv, timeout: float) -> _Ending:
        session = TrialSession(env, task_view(task, env))
        server = await self._runtime.tool_server()
        if self.boundary == "process":
            return await self._process_trial(session, server, timeout)
        return await self._served_trial(session, server, timeout)

    async def _process_trial(self, session: TrialSession, server: ToolServer, timeout: float) -> _Ending:
        with tempfile.TemporaryDirectory(prefix="agent-") as workdir, tempfile.TemporaryFile() as log:
            launch = self.sandbox.launch(self.command, Path(workdir))
            async with server.trial(session) as url:
                proc = await anyio.open_process(launch.argv, cwd=launch.cwd, env=self._environment(url, launch.env),
                                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                                start_new_session=True)  # its own group: killing it takes its children
                try:
                    timed_out, stopped = await self._wait(proc, session, timeout)
                finally:
                    await _kill_group(proc, self.kill_grace)
            return _Ending(session.answer, session.failure, timed_out, stopped, proc.returncode, _tail(log))

    async def _wait(self, proc: Process, session: TrialSession, timeout: float) -> tuple[bool, bool]:
        """Until the process exits, the trial ends or time is up; returns (timed out, stopped by us)."""
        with anyio.move_on_after(timeout) as timer:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_after, proc.wait, tg.cancel_scope)
                tg.start_soon(_cancel_after, session.ended.wait, tg.cancel_scope)
        if timer.cancelled_caught:
            return True, False
        if proc.returncode is None:  # the trial ended first: the agent may still exit on its own
            with anyio.move_on_after(self.submit_grace):
                await proc.wait()
        return False, proc.returncode is None

    async def _served_trial(self, session: TrialSession, server: ToolServer, timeout: float) -> _Ending:
        """One trial handed to the long-lived agent; a worker that times out, dies or goes silent is replaced."""
        await anyio.sleep(0)  # lets the loop record an exit that happened between trials
        if self._runtime.worker is not None and self._runtime.worker.proc.returncode is not None:
            await self._runtime.drop_worker()  # it ended after its last trial: this trial is not to blame
        worker = self._runtime.worker or await self._start_worker(session.env.tools)
        reply, timed_out = await self._hand_over(worker, server, session, timeout)
        output = _tail(worker.log)
        if reply is None or "died" in reply or "broken" in reply:
            await self._runtime.drop_worker()  # the next trial gets a fresh one
        if reply is None:
            return _Ending(session.answer, session.failure, timed_out, not timed_out, None, output)
        if "broken" in reply:
            raise AgentProcessError(reply["broken"])
        return _Ending(session.answer, session.failure, False, False, reply.get("exit"), str(reply.get("output", "")))

    async def _hand_over(self, worker: _Worker, server: ToolServer, session: TrialSession, timeout: float,
                         learn: bool = False) -> tuple[dict | None, bool]:
        """Serve `session` on a fresh URL, in fresh folders, and hand it to the worker; (its reply, timed out)."""
        trial = secrets.token_hex(8)
        folder, private = self.sandbox.trial_dirs(Path(worker.folder) / "home", f"trial-{trial}")
        try:
            async with server.trial(session) as url:
                await worker.send({"trial": trial, "url": url, "home": private["HOME"], "tmp": private["TMPDIR"],
                                   "clear": list(self.sandbox.scratch), "learn": learn})
                return await self._await_reply(worker, trial, session, timeout)
        finally:
            shutil.rmtree(folder)

    async def _await_reply(self, worker: _Worker, trial: str, session: TrialSession, timeout: float
                           ) -> tuple[dict | None, bool]:
        """(the agent's reply or None, timed out): until it replies or time is up; once the trial has ended (submit
        or failure) it has submit_grace seconds left to reply."""
        got: list[dict] = []

        async def reply() -> None:
            got.append(await worker.receive(trial))

        with anyio.move_on_after(timeout) as timer:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_after, reply, tg.cancel_scope)
                tg.start_soon(_cancel_after, session.ended.wait, tg.cancel_scope)
        if timer.cancelled_caught:
            return None, True
        if not got:
            with anyio.move_on_after(self.submit_grace):
                await reply()
        return (got[0] if got else None), False

    async def _start_worker(self, tools: list[dict]) -> _Worker:
        """A new long-lived agent; a zygote first gets a warm-up session (no task, no world) to learn its agent's
        first-use imports from. A warm-up that goes wrong costs only the warm-up: the trial gets a fresh zygote."""
        worker = await self._launch_worker()
        if self.boundary != "zygote":
            return worker
        reply, _ = await self._hand_over(worker, await self._runtime.tool_server(), warm_up_session(tools),
                                         WARM_UP_SECONDS, learn=True)
        if reply is None or "died" in reply or "broken" in reply:
            await self._runtime.drop_worker()
            worker = await self._launch_worker()
        return worker

    async def _launch_worker(self) -> _Worker:
        folder = tempfile.mkdtemp(prefix="agent-worker-")
        launch = self.sandbox.launch(self.command, Path(folder))
        log = tempfile.TemporaryFile()
        proc = await anyio.open_process(launch.argv, cwd=launch.cwd, env=self._environment(None, launch.env),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                        start_new_session=True)  # its own group: killing it takes its children
        self._runtime.worker = _Worker(proc, folder, log)
        return self._runtime.worker

    def _environment(self, url: str | None, private: Mapping[str, str]) -> dict[str, str]:
        env = {k: os.environ[k] for k in (*BASE_ENV, *self.pass_env) if k in os.environ}
        return env | self.extra_env | dict(private) | ({URL_VAR: url} if url else {})


def _loop_running_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # the documented way to ask: no loop runs in this thread
        return False
    return True


def zygote_command(command: Sequence[str]) -> list[str]:
    """`python SCRIPT.py ARGS` as the zygote runs it: the same interpreter, the zygote, then the script."""
    if len(command) < 2 or not re.fullmatch(r"python[\d.]*", os.path.basename(command[0])) \
            or not command[1].endswith(".py"):
        raise ValueError(f"boundary zygote runs a Python script (python SCRIPT.py ARGS...), "
                         f"not {shlex.join(command)!r}")
    return [command[0], str(ZYGOTE), *command[1:]]


async def _kill_group(proc: Process, kill_grace: float) -> None:
    """TERM then KILL the agent's process group, stragglers included; a no-op once all are gone."""
    for sig, grace in ((signal.SIGTERM, kill_grace), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:  # the whole group has already exited
            break
        if grace is not None:
            with anyio.move_on_after(grace):
                await proc.wait()
    with anyio.CancelScope(shield=True):  # reap it even when the trial is being cancelled
        await proc.wait()


async def _cancel_after(wait, scope: anyio.CancelScope) -> None:
    await wait()
    scope.cancel()


def _tail(log: IO[bytes], limit: int = 4000) -> str:
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - limit))
    return log.read().decode(errors="replace")
