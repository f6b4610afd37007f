"""What one trial of an external (mcp:) agent may take of the machine besides its steps, and the meters that stop it.

An untrusted agent could otherwise hold its slot for twenty minutes without answering, fill the harness's disk
through its output or its home, or hand in an answer of megabytes. Each trial gets:

- a wall-clock limit (EVALSUITE_MCP_TRIAL_SECONDS, 300 s): 40 steps of a model agent at 2-5 s a model turn take
  80-200 s, and the example agent's trial 2.6 s; past 300 s a trial is all but certainly stuck, and a stuck one
  holds its slot for a quarter of the old 1,200 s (30 s x 40 steps, which still applies when it is shorter);
  an agent config's TrialLimits.seconds replaces it;
- an output cap (EVALSUITE_MCP_OUTPUT_MB, 16 MB): what the agent writes on stdout/stderr is kept (its tail goes
  into a failed trial's record) up to the cap and dropped past it; 40 steps of full prompts logged are ~4 MB;
- a final-message cap (EVALSUITE_MCP_MESSAGE_KB, 64 KB): the largest reference answer of the bundled suites is
  227 bytes; a larger submit_answer is refused and ends the trial, so no grader ever reads a cut answer or one
  stuffed with every figure it might check for;
- a disk cap (EVALSUITE_MCP_DISK_MB, 256 MB) on its home, its TMPDIR and, under bwrap, its private /tmp (a
  tmpfs of that size, so memory: 8 trials in flight hold at most 2 GB of it). The folders on the host disk are
  measured every POLL_SECONDS, so a writer at disk speed passes the cap by what it writes in that time before it
  is stopped; the tmpfs cannot pass its size.

A trial that passes one is budget_exhausted (its effects graded), with TrialResult.exhausted naming the limit; its
agent's process group is killed at once.
"""
from __future__ import annotations

import contextlib
import math
import os
import signal
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import anyio
from anyio.abc import ByteReceiveStream

TRIAL_SECONDS_VAR = "EVALSUITE_MCP_TRIAL_SECONDS"
OUTPUT_MB_VAR = "EVALSUITE_MCP_OUTPUT_MB"
MESSAGE_KB_VAR = "EVALSUITE_MCP_MESSAGE_KB"
DISK_MB_VAR = "EVALSUITE_MCP_DISK_MB"
TRIAL_SECONDS, OUTPUT_MB, MESSAGE_KB, DISK_MB = 300.0, 16.0, 64.0, 256.0
POLL_SECONDS = 0.1
BLOCK = 4096  # every file or folder counts at least one block: a flood of empty files fills the cap too
MB, KB = 1 << 20, 1 << 10


def positive(var: str, default: float) -> float:
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise ValueError(f"{var}={raw!r}: expected a positive number")
    return value


@dataclass(frozen=True)
class AgentLimits:
    """One external agent's per-trial limits beyond its steps (the module doc says why each default)."""

    trial_seconds: float = TRIAL_SECONDS
    output_bytes: int = int(OUTPUT_MB * MB)
    message_bytes: int = int(MESSAGE_KB * KB)
    disk_bytes: int = int(DISK_MB * MB)

    @classmethod
    def from_env(cls, seconds: float | None = None) -> AgentLimits:
        """The limits the environment sets; `seconds` (an agent config's TrialLimits.seconds) replaces the wall
        time. A value that is not a positive number is a one-line ValueError."""
        return cls(trial_seconds=seconds or positive(TRIAL_SECONDS_VAR, TRIAL_SECONDS),
                   output_bytes=int(positive(OUTPUT_MB_VAR, OUTPUT_MB) * MB),
                   message_bytes=int(positive(MESSAGE_KB_VAR, MESSAGE_KB) * KB), disk_bytes=tmp_bytes())


def tmp_bytes() -> int:
    """The size of the sandbox's private /tmp (a tmpfs): the disk cap, EVALSUITE_MCP_DISK_MB."""
    return int(positive(DISK_MB_VAR, DISK_MB) * MB)


def message_over(message: str, cap: int) -> str | None:
    """Why a final message is refused (None: it is within the cap): one over the cap is refused whole, never cut, a
    live agent's submit_answer and a recording's last message alike (the module doc says why)."""
    n = len(message.encode(errors="surrogatepass"))
    return f"final message cap {size(cap)} hit ({size(n)} submitted); refused" if n > cap else None


def size(n: int) -> str:
    """A byte count as the records and messages say it: 16 MB, 64 KB, 300 bytes."""
    for unit, name in ((MB, "MB"), (KB, "KB")):
        if n >= unit:
            return f"{n / unit:.3g} {name}"
    return f"{n} bytes"


class OutputMeter:
    """An agent's stdout/stderr on its way to the log the harness keeps: written up to the cap, counted and dropped
    past it (the trial's Guard then stops the agent). restart() begins a long-lived agent's next trial."""

    def __init__(self, log: IO[bytes], cap: int):
        self.log, self.cap = log, cap
        self.seen = 0
        self._drained = anyio.Event()

    def restart(self) -> None:
        """The log holds one trial's output: the tail a record shows is of that trial."""
        self.log.seek(0)
        self.log.truncate()
        self.seen = 0

    async def pump(self, stream: ByteReceiveStream) -> None:
        try:
            # A pipe broken or closed went with the process: its output so far is all there is.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                async for chunk in stream:
                    if self.seen < self.cap and not self.log.closed:  # closed: its worker was killed by a finalizer
                        self.log.write(chunk[:self.cap - self.seen])
                    self.seen += len(chunk)
        finally:
            self._drained.set()

    async def drained(self, seconds: float = 1.0) -> None:
        """Until what the agent wrote before it ended is in the log (a child that keeps the pipe: at most
        `seconds`)."""
        with anyio.move_on_after(seconds):
            await self._drained.wait()
        if not self.log.closed:
            self.log.flush()

    def over(self) -> str | None:
        if self.seen > self.cap:
            return f"stdout cap {size(self.cap)} hit (agent wrote more on stdout/stderr); agent killed"
        return None


class Guard:
    """One trial's watch on its agent process: its output and its disk. The first limit hit is kept in `hit` (as
    the record's `exhausted` says it) and the agent's process group is killed at once."""

    def __init__(self, limits: AgentLimits, meter: OutputMeter, folder: Path, pid: int, scratch: Sequence[str]):
        self.limits, self.meter, self.folder, self.pid, self.scratch = limits, meter, folder, pid, tuple(scratch)
        self.tmp_size = tmp_bytes()  # as the sandbox sized its /tmp at launch
        self.hit: str | None = None

    @contextlib.asynccontextmanager
    async def watching(self, output: ByteReceiveStream | None = None) -> AsyncIterator[Guard]:
        """Watch for the life of the context, pumping `output` (a process agent's stdout) into the meter."""
        async with anyio.create_task_group() as tg:
            if output is not None:
                tg.start_soon(self.meter.pump, output)
            tg.start_soon(self._watch)
            try:
                yield self
                if output is not None:  # the process has ended (the caller's job): its last words are kept
                    await self.meter.drained()
            finally:
                tg.cancel_scope.cancel()

    async def _watch(self) -> None:
        while self.hit is None:
            self.hit = self.meter.over() or await anyio.to_thread.run_sync(self._disk)
            if self.hit is not None:
                with contextlib.suppress(ProcessLookupError):  # it has already exited
                    os.killpg(self.pid, signal.SIGKILL)
                return
            await anyio.sleep(POLL_SECONDS)

    def _disk(self) -> str | None:
        cap = self.limits.disk_bytes
        used, full = sandbox_tmp_use(self.pid, self.scratch, self.tmp_size)
        try:
            used += folder_use(self.folder, cap - used)
        except PermissionError as exc:  # a folder the agent closed to the meter: its size cannot be known
            return f"disk cap {size(cap)}: {exc.filename} cannot be measured; agent killed"
        if used >= cap or full:
            where = f"{', '.join(full)} full" if full else f"{size(used)} in its home, TMPDIR and /tmp"
            return f"disk cap {size(cap)} hit ({where}); agent killed"
        return None


def folder_use(folder: Path, budget: int) -> int:
    """Bytes held below `folder` (each entry at least a block), counted until they pass `budget`: a folder of a
    million files costs the meter no more than the cap's worth of them."""
    used, pending = 0, [str(folder)]
    while pending and used <= budget:
        try:
            entries = list(os.scandir(pending.pop()))
        except FileNotFoundError:  # removed by the agent (or its trial's end) meanwhile: it holds nothing
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            used += max(st.st_blocks * 512, BLOCK)
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
    return used


def sandbox_tmp_use(pid: int, scratch: Sequence[str], tmp_size: int) -> tuple[int, list[str]]:
    """Bytes used in the sandbox's private tmpfs folders (bwrap's /tmp, of tmp_size bytes), seen through /proc of
    the first process inside the sandbox (bwrap's child, `pid` being bwrap), and which of them are full."""
    if not scratch:
        return 0, []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:  # bwrap has exited: its tmpfs went with it
        return 0, []
    used, full = 0, []
    for folder in scratch if children else ():
        try:
            st = os.statvfs(f"/proc/{children[0]}/root{folder}")
        except FileNotFoundError:
            continue
        if st.f_blocks * st.f_frsize != -(-tmp_size // st.f_frsize) * st.f_frsize:
            continue  # not (yet) the sandbox's tmpfs: bwrap's child still sees the host's /tmp until it mounts its own
        used += (st.f_blocks - st.f_bfree) * st.f_frsize
        if st.f_bavail == 0:
            full.append(folder)
    return used, full
