"""Helpers for the harness and scorecard tests: a small release folder, agents that crash, and a run folder's lock
held by another process.

Importable by spawned worker processes (pytest puts tests/ on sys.path and
spawn passes sys.path on), which is how a test makes a worker die.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

from evalsuite.releases.release import ReleaseManifest, write_release
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.agents.baselines import ReferenceAgent
from evalsuite.trials.agents.factory import make_agent as builtin_agent

DIES_ON = "ap-exc-9103"  # the task whose trials kill their worker process


def make_release(ap, root: Path, n_tasks: int | None = None) -> Path:
    """The AP example (or any tasks and the world they run in) as a release folder, with a hand-made manifest;
    n_tasks keeps only its first tasks."""
    domain = ap.world.domain
    tasks = ap.tasks[:n_tasks]
    manifest = ReleaseManifest(
        suite="ap_test", version="t1", domain=domain.name, task_set_sha256=task_set_sha256(tasks),
        seed_sha256=ap.world.seed_sha256, environment_image=domain.image,
        tool_schemas_sha256=domain.tool_schemas_sha256(), policy_versions=["v6", "v7"],
        rights_decision={"allowed": True}, quarantined=[], n_tasks=len(tasks),
        acceptance={"tasks": len(tasks), "accepted": len(tasks), "quarantined": 0, "releasable": True},
    )
    return write_release(root, manifest, tasks, ap.world.path)


class CrashingAgent(ReferenceAgent):
    """The reference agent, except that it raises on the tasks it is told to."""

    name = "crashy"

    def __init__(self, crash_on: set[str]):
        self.crash_on = crash_on

    def run(self, task, env):
        if task.task_id in self.crash_on:
            raise RuntimeError(f"boom on {task.task_id}")
        return super().run(task, env)


class DyingAgent(ReferenceAgent):
    """The reference agent, except that it kills its whole process on one task (a segfault, an OOM kill)."""

    name = "dies"

    def run(self, task, env):
        if task.task_id == DIES_ON:
            os._exit(3)
        return super().run(task, env)


def make_agent(config):
    """An agent factory (agent_factory="harness_support:make_agent"): called with an AgentConfig."""
    return DyingAgent() if config.name == "dies" else builtin_agent(config)


# Another process writing the run folder, as `evalsuite run --out` into it does: it holds the folder's lock
# until its stdin closes, then says how many bytes the folder's traces held as it let go.
HOLDER = """import sys
from pathlib import Path
from evalsuite.trials.tracelog import folder_lock
with folder_lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
    traces = Path(sys.argv[1], "traces.jsonl")
    print(traces.stat().st_size if traces.exists() else 0, flush=True)
"""


@contextmanager
def lock_held(folder: Path, release_after: float | None = None) -> Iterator[SimpleNamespace]:
    """The folder's lock held by another process for the block, or only its first release_after seconds; the
    namespace's `traces_bytes` is what the folder's traces.jsonl held as the holder let go, once the block is over."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    if release_after is not None:
        threading.Timer(release_after, holder.stdin.close).start()
    held = SimpleNamespace(traces_bytes=None)
    try:
        yield held
    finally:
        if not holder.stdin.closed:
            holder.stdin.close()
        held.traces_bytes = int(holder.stdout.readline())
        holder.wait(timeout=30)
