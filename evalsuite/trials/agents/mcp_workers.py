"""What outlives one trial of an MCP agent (evalsuite.trials.agents.mcp_agent): per event loop, the tool server that
serves every trial in flight on it and a pool of long-lived agent processes (boundaries persistent and zygote).

A trial takes an idle worker, or has a new one started, and hands it back when its agent answered properly; a
worker that timed out, died, broke the protocol or whose trial was cancelled is killed instead, so the pool never
holds more workers than trials were in flight at once. Processes and the server are bound to the loop they were
started on (their pipes and sockets are its transports), hence one pool per loop: the agent's own private loop
for the synchronous run(), the trial engine's for arun().
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import IO, Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from evalsuite.core.agent_limits import OutputMeter
from evalsuite.trials.loops import outside_loop, running_loop
from evalsuite.trials.mcp_server import ToolServer

REPLY_BYTES = 1 << 20  # one protocol line; a longer one is not a reply
CLOSE_SECONDS = 15.0  # how long close() waits for another thread's loop to stop a pool before killing outright


@dataclass(eq=False)  # compared (and kept in sets) by identity: two workers are never the same
class Worker:
    """A long-lived agent process (persistent or zygote) and the folder its home and trials' folders live in; its
    stderr (a pipe) is pumped into `log` up to output_cap bytes a trial (evalsuite.core.agent_limits)."""

    proc: Process
    folder: str
    log: IO[bytes]
    output_cap: int
    replies: BufferedByteReceiveStream = field(init=False)
    meter: OutputMeter = field(init=False)
    pump: asyncio.Task = field(init=False, repr=False)  # stderr into the meter, for the life of the process
    dropped: bool = False

    def __post_init__(self) -> None:
        self.replies = BufferedByteReceiveStream(self.proc.stdout)
        self.meter = OutputMeter(self.log, self.output_cap)
        self.pump = asyncio.get_running_loop().create_task(self.meter.pump(self.proc.stderr))

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
                await self.meter.drained()
                return {"trial": trial, "exit": self.proc.returncode, "output": tail(self.log), "died": True}
            except anyio.DelimiterNotFound:
                return {"broken": f"agent wrote a line of more than {REPLY_BYTES} bytes on stdout"}
        try:
            reply = json.loads(line)
        except ValueError as exc:
            return {"broken": f"agent reply is not JSON ({exc}): {line[:200]!r}"}
        if not isinstance(reply, dict) or reply.get("trial") != trial:
            return {"broken": f"agent replied {line[:200]!r} during trial {trial!r}"}
        return reply

    def kill_now(self) -> None:
        """SIGKILL its group without waiting (from any thread): the loop that reaps it may not be running."""
        with contextlib.suppress(ProcessLookupError):  # the whole group has already exited
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()
        if os.path.exists(self.folder):
            shutil.rmtree(self.folder)


def answered(reply: dict | None) -> bool:
    """The worker answered its trial by the protocol (whatever the trial's outcome): it may serve another."""
    return reply is not None and "died" not in reply and "broken" not in reply


class LoopPool:
    """One event loop's share of an agent: its tool server and its long-lived workers, idle or lent to a trial.
    Used from its loop; close() from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, kill_grace: float):
        self.loop = loop
        self.kill_grace = kill_grace
        self.server: ToolServer | None = None
        self.idle: list[Worker] = []
        self.busy: set[Worker] = set()
        self.closed = False
        self._starting: asyncio.Task | None = None  # the server's start, awaited by every trial that comes meanwhile
        self._closing: asyncio.Task | None = None

    async def tool_server(self) -> ToolServer:
        if self.server is None:
            if self._starting is None:  # trials that arrive together share one start, hence one server
                self._starting = asyncio.get_running_loop().create_task(self._start_server())
            await asyncio.shield(self._starting)  # one trial cancelled must not cancel the others' start
        return self.server

    async def _start_server(self) -> None:
        server = ToolServer()
        try:
            await server.start()
        finally:
            self._starting = None  # a failed start is retried by the next trial
        self.server = server

    async def take(self, start: Callable[[], Awaitable[Worker]]) -> Worker:
        """An idle worker that is still alive, else a new one from `start`; lent until release()."""
        await anyio.sleep(0)  # lets the loop record an exit that happened between trials
        while self.idle:
            worker = self.idle.pop()
            if worker.proc.returncode is None:
                self.busy.add(worker)
                return worker
            await self.drop(worker)  # it ended after its last trial: this trial is not to blame
        worker = await start()
        self.busy.add(worker)
        return worker

    async def release(self, worker: Worker, keep: bool) -> None:
        """Back to the idle workers when it may serve another trial, else (or once the pool is closed) killed."""
        self.busy.discard(worker)
        if keep and not self.closed and not worker.dropped and worker.proc.returncode is None:
            self.idle.append(worker)
        else:
            await self.drop(worker)

    async def drop(self, worker: Worker) -> None:
        """Kill its process group, reap it and remove its folder; once per worker, even while being cancelled."""
        if worker.dropped:
            return
        worker.dropped = True
        with anyio.CancelScope(shield=True):
            await kill_group(worker.proc, self.kill_grace)
        worker.pump.cancel()  # a child that left the group may keep the pipe open: its output is not waited for
        worker.log.close()
        if os.path.exists(worker.folder):  # kill_now may have removed it already
            shutil.rmtree(worker.folder)

    def workers(self) -> list[Worker]:
        return [*self.idle, *self.busy]

    async def aclose(self) -> None:
        """Stop every worker, lent ones too (their trials see them die), and the tool server; on the pool's loop."""
        self.closed = True
        for worker in self.workers():
            await self.drop(worker)
        self.idle, self.busy = [], set()
        if self.server is not None:
            await self.server.stop()
            self.server = None

    def close(self) -> None:
        """aclose() from any thread, whatever its loop is doing: waited for on a loop that can be waited for;
        on a closed loop, or the one running this very call (a finalizer, a sync call in one of its tasks), the
        processes are killed at once, and the rest is left to a task of that loop when it still runs."""
        if self.loop.is_closed():
            return self._kill_now()
        if self.loop.is_running():
            if running_loop() is self.loop:
                self._kill_now()
                self._closing = self.loop.create_task(self.aclose())  # reaps them and stops the server
                return
            done = asyncio.run_coroutine_threadsafe(self.aclose(), self.loop)
            try:
                return done.result(CLOSE_SECONDS)
            except TimeoutError:  # its thread is blocked (perhaps on this one): the processes must stop anyway
                return self._kill_now()
        outside_loop(lambda: self.loop.run_until_complete(self.aclose()), "mcp-agent-close")

    def _kill_now(self) -> None:
        self.closed = True
        for worker in self.workers():
            worker.kill_now()
        if self.loop.is_closed() and self.server is not None:
            self.server.abandon()  # its loop is gone, and its serving task with it


class Runtime:
    """Every pool of one agent, by loop, and the private loop its synchronous run() drives. Kept apart from MCPAgent
    so a finalizer can close it without keeping the agent alive."""

    def __init__(self, kill_grace: float):
        self.kill_grace = kill_grace
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pools: dict[asyncio.AbstractEventLoop, LoopPool] = {}
        self._lock = threading.Lock()  # close() may come from another thread while a loop adds its pool

    def run(self, coro: Any) -> Any:
        if self._loop is None or self._loop.is_closed():  # closed: an agent used again after close() starts afresh
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def pool(self) -> LoopPool:
        """The running loop's pool (made on first use); pools of loops that have closed since are killed."""
        loop = asyncio.get_running_loop()
        with self._lock:
            gone = [p for p in self._pools.values() if p.loop.is_closed()]
            for old in gone:
                del self._pools[old.loop]
            pool = self._pools.setdefault(loop, LoopPool(loop, self.kill_grace))
        for old in gone:
            old.close()
        return pool

    def workers(self) -> list[Worker]:
        with self._lock:
            return [w for p in self._pools.values() for w in p.workers()]

    async def aclose(self) -> None:
        """Close the running loop's pool, on that loop: what a trial engine awaits before its loop ends."""
        with self._lock:
            pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            await pool.aclose()

    def close(self) -> None:
        """Stop every pool's workers and server, then the private loop; a no-op once closed."""
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()
        if self._loop is not None and not self._loop.is_closed() and not self._loop.is_running():
            self._loop.close()


async def kill_group(proc: Process, kill_grace: float) -> None:
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


def tail(log: IO[bytes], limit: int = 4000) -> str:
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - limit))
    return log.read().decode(errors="replace")
