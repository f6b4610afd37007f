"""Running analysis code inside the sealed boundary external agents run in (evalsuite.core.sandbox), never a
second one: a fresh private home holding only the dataset and the code, no network, a private /tmp, bounded time,
memory and file size, and everything it wrote removed when the run ends.

Limits: EVALSUITE_ANALYSIS_SECONDS (60 s of wall time, the same of CPU) and EVALSUITE_ANALYSIS_MEMORY_MB (1024 MB
of address space; numpy and pandas import in about 300 MB). The disk cap is the sandbox's
(EVALSUITE_MCP_DISK_MB), as a file-size limit.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from evalsuite.core.agent_limits import MB, positive, tmp_bytes
from evalsuite.core.sandbox import BASE_ENV, sandbox_for

RUNNER = Path(__file__).with_name("runner.py")
SECONDS_VAR, MEMORY_VAR = "EVALSUITE_ANALYSIS_SECONDS", "EVALSUITE_ANALYSIS_MEMORY_MB"
SECONDS, MEMORY_MB = 60.0, 1024.0
OUTPUT_CHARS = 8000  # of stdout kept for the trace (the result is its last line) and of stderr's tail
DATA, SCRIPT = "data.csv", "analysis.py"
NUMBERS = ("estimate", "ci_low", "ci_high")
# one thread each: the address-space limit would otherwise go to BLAS thread buffers
THREADS = {v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


@dataclass(frozen=True)
class AnalysisRun:
    """One run of analysis code: how it ended, what it printed, and what it tried to reach and was refused."""

    exit_code: int | None  # None: stopped at the time limit
    stdout: str
    stderr: str
    blocked: tuple[str, ...] = field(default_factory=tuple)
    sandbox: str = ""
    seconds: float = 0.0

    @property
    def result(self) -> dict[str, float] | None:
        """The numbers of its last stdout line ({"estimate", "ci_low", "ci_high"}), or None."""
        lines = self.stdout.strip().splitlines()
        try:
            found = json.loads(lines[-1]) if lines else None
            numbers = {k: float(found[k]) for k in NUMBERS}
        except (ValueError, TypeError, KeyError):
            return None
        return numbers if all(math.isfinite(v) for v in numbers.values()) else None

    def failure(self) -> str | None:
        """Why the run gave no numbers, in one line; None when it did."""
        if self.exit_code is None:
            return f"stopped at the time limit ({seconds():g} s)"
        if self.exit_code != 0:
            last = (self.stderr.strip().splitlines() or [""])[-1]
            return f"exited with {self.exit_code}" + (f": {last}" if last else "")
        if self.result is None:
            return "printed no result line ({\"estimate\": ..., \"ci_low\": ..., \"ci_high\": ...}) last"
        return None

    def view(self) -> dict:
        """What the agent sees of the run (run_analysis's result)."""
        return {"exit_code": self.exit_code, "stdout": self.stdout, "stderr": self.stderr,
                "result": self.result, "blocked": list(self.blocked), "sandbox": self.sandbox,
                "seconds": round(self.seconds, 3)}


def seconds() -> float:
    return positive(SECONDS_VAR, SECONDS)


def run_code(code: str, data: str) -> AnalysisRun:
    """Run `code` as analysis.py beside `data` as data.csv, sealed, in a folder made for this run alone."""
    box = sandbox_for()
    report_r, report_w = os.pipe()
    folder = Path(tempfile.mkdtemp(prefix="analysis-"))
    try:
        folder.chmod(0o755)  # the agent user reaches its home below (the sandbox makes home and tmp 0700)
        (folder / "run").mkdir()
        launch = box.launch([sys.executable, "-I", str(RUNNER), str(report_w), SCRIPT], folder / "run")
        home = folder / "run" / "home"
        for name, text in ((DATA, data), (SCRIPT, code)):
            (home / name).write_text(text)
            (home / name).chmod(0o644)
        env = {k: os.environ[k] for k in BASE_ENV if k in os.environ} | THREADS | launch.env
        out, err = folder / "stdout", folder / "stderr"
        start = time.monotonic()
        with out.open("wb") as o, err.open("wb") as e:
            proc = subprocess.Popen([*_limits(), *launch.argv], cwd=launch.cwd, env=env, stdin=subprocess.DEVNULL,
                                    stdout=o, stderr=e, pass_fds=(report_w,), start_new_session=True)
            os.close(report_w)
            report_w = -1
            code_ = _wait(proc)
        return AnalysisRun(exit_code=code_, stdout=_head(out), stderr=_tail(err), blocked=_reports(report_r),
                           sandbox=box.mechanism, seconds=time.monotonic() - start)
    finally:
        for fd in (report_r, report_w):
            if fd >= 0:
                os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)  # nothing the code wrote outlives its run


def _limits() -> list[str]:
    """prlimit: CPU seconds, address space and the largest file the run may write."""
    prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
    memory = int(positive(MEMORY_VAR, MEMORY_MB) * MB)
    return [prlimit, f"--cpu={math.ceil(seconds())}", f"--as={memory}", f"--fsize={tmp_bytes()}", "--"]


def _wait(proc: subprocess.Popen) -> int | None:
    try:
        return proc.wait(timeout=seconds())
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its own group: whatever it started goes too
        proc.wait()
        return None


def _head(path: Path) -> str:
    with path.open("rb") as f:
        return f.read(OUTPUT_CHARS).decode("utf-8", "replace")


def _tail(path: Path) -> str:
    with path.open("rb") as f:
        f.seek(max(path.stat().st_size - OUTPUT_CHARS, 0))
        return f.read().decode("utf-8", "replace")


def _reports(fd: int) -> tuple[str, ...]:
    os.set_blocking(fd, False)
    try:
        raw = os.read(fd, 1 << 16)
    except BlockingIOError:
        raw = b""
    return tuple(dict.fromkeys(line for line in raw.decode("utf-8", "replace").splitlines() if line))
