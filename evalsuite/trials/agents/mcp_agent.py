"""An external agent: any program that acts on a trial only through MCP, in its own process.

Per trial the harness serves the trial's tools (evalsuite.trials.mcp_server) on a loopback
URL and runs the agent command with that URL in EVALSUITE_MCP_URL: the world, its database
file and the task record stay in this process. The agent ends by calling submit_answer.

The command runs sealed (evalsuite.trials.sandbox): as the dedicated agent user, in a private
empty home and tmp, with an environment of PATH, the locale, HOME, TMPDIR, the URL and only the
variables asked for. Under bwrap it sees no file but the system's, its Python's and its own,
and no process of the harness; as the agent user alone, the 0700 home keeps releases, worlds
and task files below it out of reach. Its trial is reachable only through MCP.
EVALSUITE_AGENT_SANDBOX=none runs it unsealed, and its records say so.
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import anyio
from anyio.abc import Process

from evalsuite.core.identity import AgentConfig
from evalsuite.trials.agents.base import AgentEnv, BudgetExhausted
from evalsuite.trials.mcp_server import TrialSession, serve_http, task_view
from evalsuite.trials.sandbox import Sandbox, sandbox_for
from evalsuite.core.records import TaskRecord

URL_VAR = "EVALSUITE_MCP_URL"
BASE_ENV = ("PATH", "LANG", "LC_ALL", "TZ")  # enough to start a program; anything else is passed on request


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


class MCPAgent:
    """Runs `command` per trial as an MCP client of that trial; returns what it submits.

    The process gets `seconds_per_step * max_steps` seconds; past that it is killed and the
    trial is budget_exhausted (its effects graded), as for an in-process agent out of steps.
    """

    def __init__(self, name: str, command: str | Sequence[str], *, seconds_per_step: float = 30.0,
                 env: Mapping[str, str] | None = None, pass_env: Sequence[str] = (),
                 submit_grace: float = 5.0, kill_grace: float = 2.0, sandbox: Sandbox | None = None):
        self.name = name
        self.command = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        self.seconds_per_step = seconds_per_step
        self.extra_env = dict(env or {})
        self.pass_env = tuple(pass_env)
        self.submit_grace = submit_grace
        self.kill_grace = kill_grace
        self.sandbox = sandbox or sandbox_for()  # made now: a missing boundary fails before the first trial
        self.sandbox.check(self.command)

    @classmethod
    def from_config(cls, config: AgentConfig) -> MCPAgent:
        """The agent of an mcp config, running its command as given (no shell), sealed unless the config says
        sandbox none. Settings that are not part of the config come from the environment: EVALSUITE_MCP_PASS_ENV
        (comma-separated variables the agent may see, e.g. its API key), EVALSUITE_MCP_SECONDS_PER_STEP and
        the sandbox's EVALSUITE_AGENT_SANDBOX (which mechanism), EVALSUITE_AGENT_USER and EVALSUITE_AGENT_READ."""
        if config.kind != "mcp" or not config.command:
            raise ValueError(f"agent {config.name!r}: not an mcp config with a command")
        passed = [v.strip() for v in os.environ.get("EVALSUITE_MCP_PASS_ENV", "").split(",") if v.strip()]
        seconds = float(os.environ.get("EVALSUITE_MCP_SECONDS_PER_STEP", "30"))
        return cls(config.name, config.command, seconds_per_step=seconds, pass_env=passed,
                   sandbox=sandbox_for(config.sandbox))

    def run(self, task: TaskRecord, env: AgentEnv) -> str:
        timeout = self.seconds_per_step * env.max_steps
        end = anyio.run(self._run, task, env, timeout)
        # Raised here, outside the event loop's task groups, so run_trial sees BudgetExhausted itself.
        if end.failure is not None:
            raise end.failure
        if end.timed_out:
            raise BudgetExhausted(f"agent process still running after {timeout:g} s "
                                  f"({env.max_steps} steps x {self.seconds_per_step:g} s); killed")
        if not end.stopped and end.returncode != 0:
            raise AgentProcessError(f"agent command exited with {end.returncode}; output ends:\n{end.output}")
        return end.answer or ""

    async def _run(self, task: TaskRecord, env: AgentEnv, timeout: float) -> _Ending:
        session = TrialSession(env, task_view(task, env))
        with tempfile.TemporaryDirectory(prefix="agent-") as workdir, tempfile.TemporaryFile() as log:
            launch = self.sandbox.launch(self.command, Path(workdir))
            async with serve_http(session.server()) as url:
                proc = await anyio.open_process(launch.argv, cwd=launch.cwd, env=self._environment(url, launch.env),
                                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                                start_new_session=True)  # its own group: killing it takes its children
                try:
                    timed_out, stopped = await self._wait(proc, session, timeout)
                finally:
                    await self._kill_group(proc)
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

    async def _kill_group(self, proc: Process) -> None:
        """TERM then KILL the agent's process group, stragglers included; a no-op once all are gone."""
        for sig, grace in ((signal.SIGTERM, self.kill_grace), (signal.SIGKILL, None)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:  # the whole group has already exited
                break
            if grace is not None:
                with anyio.move_on_after(grace):
                    await proc.wait()
        with anyio.CancelScope(shield=True):  # reap it even when the trial is being cancelled
            await proc.wait()

    def _environment(self, url: str, private: Mapping[str, str]) -> dict[str, str]:
        env = {k: os.environ[k] for k in (*BASE_ENV, *self.pass_env) if k in os.environ}
        return env | self.extra_env | dict(private) | {URL_VAR: url}


async def _cancel_after(wait, scope: anyio.CancelScope) -> None:
    await wait()
    scope.cancel()


def _tail(log: IO[bytes], limit: int = 4000) -> str:
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - limit))
    return log.read().decode(errors="replace")
