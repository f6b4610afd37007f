"""Celery workers started on this machine for the Celery trial job (tests, benchmarks): started at once, stopped on
exit even on error; `ready()` waits until each reports ready."""
import contextlib
import os
import subprocess
import time
from pathlib import Path

from evalsuite_dagster.trials.celery import CELERY_CONFIG_DIR, worker_command


class LocalWorkers:
    """Celery workers started on this machine; `ready()` waits until each reports ready (or fails naming its log)."""

    def __init__(self, procs: dict[str, subprocess.Popen], log_dir: Path):
        self.procs, self.log_dir = procs, log_dir

    @property
    def names(self) -> list[str]:
        return list(self.procs)

    def ready(self, timeout: float = 120.0) -> "LocalWorkers":
        deadline = time.monotonic() + timeout
        waiting = set(self.procs)
        while waiting:
            for name in sorted(waiting):
                log = self.log_dir / f"{name}.log"
                if self.procs[name].poll() is not None:
                    raise RuntimeError(f"celery worker {name} exited with {self.procs[name].returncode}: see {log}")
                if " ready." in log.read_text():
                    waiting.discard(name)
            if waiting and time.monotonic() > deadline:
                raise RuntimeError(f"celery worker(s) {sorted(waiting)} not ready after {timeout:.0f} s: "
                                   f"see {self.log_dir}")
            time.sleep(0.2)
        return self


@contextlib.contextmanager
def local_workers(n: int, dagster_home: str | Path, broker: str, log_dir: Path):
    """n Celery workers on this machine (tests, benchmarks), stopped on exit even on error.

    They start importing at once, so the caller can do other work before `ready()`. Each logs to
    log_dir/<name>.log.
    """
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home), "EVALSUITE_CELERY_BROKER": broker,
           "EVALSUITE_CELERY_BACKEND": broker,
           "PYTHONPATH": os.pathsep.join([str(CELERY_CONFIG_DIR), *filter(None, [os.environ.get("PYTHONPATH")])])}
    procs: dict[str, subprocess.Popen] = {}
    try:
        for i in range(n):
            name = f"w{i}"
            with open(log_dir / f"{name}.log", "w") as log:
                procs[name] = subprocess.Popen(worker_command(name), env=env, stdout=log, stderr=subprocess.STDOUT)
        yield LocalWorkers(procs, log_dir)
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # a warm shutdown waits for its task; the run is over, so cut it
                proc.kill()
                proc.wait()
