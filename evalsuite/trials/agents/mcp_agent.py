"""An external agent: any program that acts on a trial only through MCP, in its own process.

The harness serves each trial's tools (evalsuite.trials.mcp_server) on a loopback URL: the world, its
database file and the task record stay in this process. The agent ends by calling submit_answer. One
tool server per event loop (evalsuite.trials.agents.mcp_workers) serves every trial in flight on it and
gives each a fresh secret path and a fresh MCP session manager on its freshly reset world; the path
answers 404 once its trial ends. arun() runs a trial on the caller's loop, so the trial engine keeps many
in flight at once (each trial is an agent process: max_in_flight); run() drives arun() on a private loop.

How the agent's process meets its trials is its config's `boundary` (when it names none, zygote for a Python script
and process for any other command: evalsuite.core.identity.default_boundary):

- process: the command is started per trial with the URL in EVALSUITE_MCP_URL and stopped after.
- persistent: the command is started once and kept (a pool of them, one per trial in flight), sealed, and
  is handed one trial at a time: a JSON line {"trial", "url", "home", "tmp", "clear", "ipc", "learn"} on its
  stdin, answered by {"trial", "exit", "output"} on its stdout once that trial's work is done; it exits when stdin
  closes. Any language can speak it. Each trial has its own URL, session, world, HOME and TMPDIR; what the
  program keeps in its own memory is its responsibility, which its records say (boundary "persistent").
- zygote: a Python script (`python SCRIPT.py ARGS`) run under evalsuite/trials/zygote.py, which speaks
  the persistent protocol: it imports the script's modules once and forks a fresh agent per trial, so no
  agent state crosses trials while the interpreter start and the imports are paid once per process. Before
  its first trial it gets a warm-up session (no task, no world; "learn": true) whose first-use imports it
  keeps; it learns from no real trial.

A trial that runs out of time (or is cancelled), or whose long-lived agent does not answer within submit_grace
of the trial's end, has its whole process group killed; the pool starts a fresh one when a trial needs it. So has
one that passes a limit of evalsuite.core.agent_limits (output, disk, final message): its record's `exhausted`
names it.

The command runs sealed (evalsuite.core.sandbox): as the dedicated agent user, in a private
empty home and tmp, with an environment of PATH, the locale, HOME, TMPDIR, the URL and only the
variables asked for. Under bwrap it sees no file but the system's, its Python's and its own,
no process of the harness and no network but its tool server's socket; as the agent user alone,
the 0700 home keeps releases, worlds and task files below it out of reach. Its trial is reachable only through MCP.
EVALSUITE_AGENT_SANDBOX=none runs it unsealed, and its records say so.
"""
from __future__ import annotations

import multiprocessing.util
import os
import secrets
import shlex
import shutil
import subprocess
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
from anyio.abc import Process

from evalsuite.core.agent_limits import AgentLimits, Guard, OutputMeter
from evalsuite.core.identity import AgentConfig, default_boundary, is_python_script
from evalsuite.core.records import TaskRecord
from evalsuite.core.sandbox import BASE_ENV, Sandbox, sandbox_for
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.trials.agents.mcp_workers import LoopPool, Runtime, Worker, answered, kill_group, tail
from evalsuite.trials.mcp_server import ToolServer, TrialSession, task_view, warm_up_session

URL_VAR = "EVALSUITE_MCP_URL"
ZYGOTE = Path(__file__).parents[1] / "zygote.py"
Boundary = Literal["process", "persistent", "zygote"]
# A new zygote's warm-up (not a trial): its agent connects, lists, calls, submits. Never longer than a trial may
# take: an agent that hangs there would otherwise hold up its first trial for longer than that trial's limit.
WARM_UP_SECONDS = 60.0


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
    limit: str | None = None  # the limit of agent_limits it passed (Guard.hit), when it was killed for one


class MCPAgent:
    """Runs `command` as an MCP client of each trial (see the module doc for the boundaries); returns what it submits.

    A trial gets `seconds_per_step * max_steps` seconds and at most limits.trial_seconds (AgentLimits: 300 s by
    default); past that the agent is killed and the trial is budget_exhausted (its effects graded), as for an
    in-process agent out of steps; so is one past its output, final-message or disk cap. close() (or the end of the
    process) stops every long-lived agent and tool server; a trial engine may await aclose() before its loop ends.
    """

    # Each trial in flight is an agent process (an interpreter, its model client, a long-lived one's memory) on
    # this machine: past a handful they contend for its cores and memory more than they overlap waits on a model.
    # A run's setting overrides it.
    max_in_flight = 8

    def __init__(self, name: str, command: str | Sequence[str], *, boundary: Boundary = "process",
                 seconds_per_step: float = 30.0, env: Mapping[str, str] | None = None, pass_env: Sequence[str] = (),
                 submit_grace: float = 5.0, kill_grace: float = 2.0, sandbox: Sandbox | None = None,
                 limits: AgentLimits | None = None):
        self.name = name
        self.boundary = boundary
        command = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        self.command = zygote_command(command) if boundary == "zygote" else command
        self.seconds_per_step = seconds_per_step
        self.extra_env = dict(env or {})
        self.pass_env = tuple(pass_env)
        self.submit_grace = submit_grace
        self.kill_grace = kill_grace
        self.limits = limits or AgentLimits.from_env()  # read now: a bad setting fails before the first trial
        self.sandbox = sandbox or sandbox_for()  # made now: a missing boundary fails before the first trial
        self.sandbox.check(self.command)
        self._runtime = Runtime(kill_grace)
        self._close = weakref.finalize(self, self._runtime.close)
        # A pool worker ends with os._exit, which skips the finalizer above but runs multiprocessing's own.
        multiprocessing.util.Finalize(self._runtime, self._runtime.close, exitpriority=10)

    @classmethod
    def from_config(cls, config: AgentConfig) -> MCPAgent:
        """The agent of an mcp config, running its command as given (no shell) at its boundary, sealed unless the
        config says sandbox none. Settings that are not part of the config come from the environment:
        EVALSUITE_MCP_PASS_ENV (comma-separated variables the agent may see, e.g. its API key),
        EVALSUITE_MCP_SECONDS_PER_STEP, the limits of evalsuite.core.agent_limits (a wall time the config's
        TrialLimits.seconds sets replaces EVALSUITE_MCP_TRIAL_SECONDS) and the sandbox's EVALSUITE_AGENT_SANDBOX
        (which mechanism), EVALSUITE_AGENT_USER and EVALSUITE_AGENT_READ."""
        if config.kind != "mcp" or not config.command:
            raise ValueError(f"agent {config.name!r}: not an mcp config with a command")
        passed = [v.strip() for v in os.environ.get("EVALSUITE_MCP_PASS_ENV", "").split(",") if v.strip()]
        seconds = float(os.environ.get("EVALSUITE_MCP_SECONDS_PER_STEP", "30"))
        limits = AgentLimits.from_env(config.limits.seconds if config.limits else None)
        boundary = config.boundary or default_boundary(config.command)
        return cls(config.name, config.command, boundary=boundary, seconds_per_step=seconds,
                   pass_env=passed, sandbox=sandbox_for(config.sandbox), limits=limits)

    def close(self) -> None:
        self._runtime.close()  # not the finalizer, which runs once: an agent used again after close() is closed too

    async def aclose(self) -> None:
        """Stop the workers and the tool server of the running loop (the trial engine's), on that loop."""
        await self._runtime.aclose()

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        """One trial at a time, on the agent's own event loop (a sequential run, a pool worker process)."""
        return self._runtime.run(self.arun(task, env))

    async def arun(self, task: TaskRecord, env: AgentEnv) -> str:
        """One trial on the caller's event loop, beside any others in flight on it (each its own session, URL,
        folders and agent process)."""
        steps_time = self.seconds_per_step * env.max_steps
        timeout = min(steps_time, self.limits.trial_seconds)
        end = await self._trial(task, env, timeout)
        # Raised here, outside the trial's task groups, so the trial sees BudgetExhausted itself.
        if end.failure is not None:
            raise end.failure
        if end.limit is not None:
            raise BudgetExhausted(end.limit)
        if end.timed_out:
            why = (f"{env.max_steps} steps x {self.seconds_per_step:g} s" if steps_time <= self.limits.trial_seconds
                   else "the trial's limit")
            raise BudgetExhausted(f"wall time: {timeout:g} s ({why}); agent process still running, killed")
        if not end.stopped and end.returncode != 0:
            raise AgentProcessError(f"agent command exited with {end.returncode}; output ends:\n{end.output}")
        return end.answer or ""

    async def _trial(self, task: TaskRecord, env: AgentEnv, timeout: float) -> _Ending:
        session = TrialSession(env, task_view(task, env), self.limits.message_bytes)
        pool = self._runtime.pool()
        server = await pool.tool_server()
        if self.boundary == "process":
            return await self._process_trial(session, server, timeout)
        return await self._served_trial(session, pool, server, timeout)

    async def _process_trial(self, session: TrialSession, server: ToolServer, timeout: float) -> _Ending:
        with tempfile.TemporaryDirectory(prefix="agent-") as workdir, tempfile.TemporaryFile() as log:
            launch = self.sandbox.launch(self.command, Path(workdir), server.endpoint)
            async with server.trial(session) as url:
                # its output goes through the harness (a pipe, metered into the log) and it is its own group:
                # killing that takes its children
                proc = await anyio.open_process(launch.argv, cwd=launch.cwd, env=self._environment(url, launch.env),
                                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT, start_new_session=True)
                guard = self._guard(OutputMeter(log, self.limits.output_bytes), workdir, proc)
                async with guard.watching(proc.stdout):
                    try:
                        timed_out, stopped = await self._wait(proc, session, timeout)
                    finally:
                        with anyio.CancelScope(shield=True):  # a cancelled trial's agent is stopped all the same
                            await kill_group(proc, self.kill_grace)
            return _Ending(session.answer, session.failure, timed_out and not guard.hit, stopped, proc.returncode,
                           tail(log), guard.hit)

    def _guard(self, meter: OutputMeter, folder: str, proc: Process) -> Guard:
        """The watch on one trial's agent: its output, and the disk of its launch folder and private /tmp."""
        return Guard(self.limits, meter, Path(folder), proc.pid, self.sandbox.scratch)

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

    async def _served_trial(self, session: TrialSession, pool: LoopPool, server: ToolServer, timeout: float
                            ) -> _Ending:
        """One trial handed to a worker of the pool; one that times out, dies, goes silent or breaks the protocol
        (or whose trial is cancelled: its state is unknown) is killed, not handed back."""
        worker = await pool.take(lambda: self._start_worker(pool, session.env.tools))
        worker.meter.restart()
        guard = self._guard(worker.meter, worker.folder, worker.proc)
        try:
            async with guard.watching():
                reply, timed_out = await self._hand_over(worker, server, session, timeout)
            output = tail(worker.log)
        except BaseException:
            await pool.release(worker, keep=False)
            raise
        await pool.release(worker, keep=answered(reply) and guard.hit is None)
        if guard.hit is not None:
            return _Ending(session.answer, session.failure, False, False, None, output, guard.hit)
        if reply is None:
            return _Ending(session.answer, session.failure, timed_out, not timed_out, None, output)
        if "broken" in reply:
            raise AgentProcessError(reply["broken"])
        return _Ending(session.answer, session.failure, False, False, reply.get("exit"), str(reply.get("output", "")))

    async def _hand_over(self, worker: Worker, server: ToolServer, session: TrialSession, timeout: float,
                         learn: bool = False) -> tuple[dict | None, bool]:
        """Serve `session` on a fresh URL, in fresh folders, and hand it to the worker; (its reply, timed out)."""
        trial = secrets.token_hex(8)
        folder, private = self.sandbox.trial_dirs(Path(worker.folder) / "home", f"trial-{trial}")
        try:
            async with server.trial(session) as url:
                await worker.send({"trial": trial, "url": url, "home": private["HOME"], "tmp": private["TMPDIR"],
                                   "clear": self._scratch(worker), "ipc": self.sandbox.private_ipc, "learn": learn})
                return await self._await_reply(worker, trial, session, timeout)
        finally:
            if folder.exists():  # gone with its worker when the agent was closed meanwhile
                shutil.rmtree(folder)

    async def _await_reply(self, worker: Worker, trial: str, session: TrialSession, timeout: float
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

    async def _start_worker(self, pool: LoopPool, tools: list[dict]) -> Worker:
        """A new long-lived agent; a zygote first gets a warm-up session (no task, no world) to learn its agent's
        first-use imports from. A warm-up that goes wrong costs only the warm-up: the trial gets a fresh zygote."""
        worker = await self._launch_worker()
        if self.boundary != "zygote":
            return worker
        try:
            reply, _ = await self._hand_over(worker, await pool.tool_server(), warm_up_session(tools),
                                             min(WARM_UP_SECONDS, self.limits.trial_seconds), learn=True)
        except BaseException:
            await pool.drop(worker)
            raise
        if not answered(reply):
            await pool.drop(worker)
            worker = await self._launch_worker()
        return worker

    def _scratch(self, worker: Worker) -> list[str]:
        """What a worker empties after each trial: the sandbox's /tmp, and for a zygote its /dev/shm, message queues
        and whole home too (a persistent program's home and IPC are its own, like its memory)."""
        if self.boundary != "zygote":
            return list(self.sandbox.scratch)
        return [*self.sandbox.scratch, *self.sandbox.ipc_dirs, self.sandbox.seen(Path(worker.folder) / "home")]

    async def _launch_worker(self) -> Worker:
        folder = tempfile.mkdtemp(prefix="agent-worker-")
        server = await self._runtime.pool().tool_server()  # this loop's, which every trial of the worker is on
        launch = self.sandbox.launch(self.command, Path(folder), server.endpoint)
        log = tempfile.TemporaryFile()
        proc = await anyio.open_process(launch.argv, cwd=launch.cwd, env=self._environment(None, launch.env),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True)  # its own group: killing it takes its children
        return Worker(proc, folder, log, self.limits.output_bytes)

    def _environment(self, url: str | None, private: Mapping[str, str]) -> dict[str, str]:
        env = {k: os.environ[k] for k in (*BASE_ENV, *self.pass_env) if k in os.environ}
        return env | self.extra_env | dict(private) | ({URL_VAR: url} if url else {})


def zygote_command(command: Sequence[str]) -> list[str]:
    """`python SCRIPT.py ARGS` as the zygote runs it: the same interpreter, the zygote, then the script."""
    if not is_python_script(command):
        raise ValueError(f"boundary zygote runs a Python script (python SCRIPT.py ARGS...), "
                         f"not {shlex.join(command)!r}")
    return [command[0], str(ZYGOTE), *command[1:]]


async def _cancel_after(wait, scope: anyio.CancelScope) -> None:
    await wait()
    scope.cancel()
