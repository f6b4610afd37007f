"""dagster-webserver for the UI tests and the docs' screenshots: started on a free loopback port over an
instance and a suite, waited for until its code location loads, stopped with its process group."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def wait(what: str, probe, timeout: float = 180):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = probe()
            if result:
                return result
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what} ({last})")


@contextmanager
def serve(dagster_home: Path, spec: Path, home: Path, log_path: Path) -> Iterator[str]:
    """dagster-webserver over an instance and a suite; stopped (its own process group) afterwards."""
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home), "EVALSUITE_SUITES": str(spec), "EVALSUITE_HOME": str(home)}
    log = open(log_path, "w")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port),
                             "-w", "workspace.yaml"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait("/server_info", lambda: proc.poll() is None and get(f"{base}/server_info"))
        wait("the code location to load", lambda: loaded(base))
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def loaded(base: str) -> bool:
    entries = get(f"{base}/graphql", {"query": "{ workspaceOrError { ... on Workspace { locationEntries { name "
                                                "loadStatus locationOrLoadError { __typename ... on PythonError "
                                                "{ message } } } } } }"})["data"]["workspaceOrError"]["locationEntries"]
    for e in entries:
        error = e["locationOrLoadError"] or {}
        assert error.get("__typename") != "PythonError", error.get("message")
    return bool(entries) and all(e["loadStatus"] == "LOADED" for e in entries)
