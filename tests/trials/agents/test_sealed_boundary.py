"""The sealed boundary around external agents: a hostile agent reads none of the answers and scores nothing,
while an honest agent still passes; the opt-out is recorded, and a boundary that cannot be made is one line."""
import json
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from harness_support import make_release

from evalsuite.core import sandbox
from evalsuite.core.identity import AgentConfig
from evalsuite.core.sandbox import BASE_ENV
from evalsuite.releases.release import Release
from evalsuite.tasks.taskfile import write_tasks
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.mcp_agent import URL_VAR, MCPAgent
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.trial import run_trial

HOSTILE = Path(__file__).with_name("hostile_agent.py")
AGENT = Path(__file__).parents[3] / "examples" / "mcp_reference_agent.py"
KEY = f"deid-key-{uuid.uuid4().hex}"  # the harness's de-identification key: must reach no agent
SHELL_VARS = {"PWD", "SHLVL", "_", "LC_CTYPE"}  # what a shell or Python's locale coercion may add by itself
ROOT = os.geteuid() == 0
needs_bwrap = pytest.mark.skipif(not sandbox.bwrap_works(), reason="bubblewrap is not usable here")
needs_root = pytest.mark.skipif(not ROOT, reason="switching to the agent user needs root")


@dataclass
class Answers:
    home: Path
    release: Release
    files: list[Path]  # what the harness reads and the agent must not: task files, world file, seed


@pytest.fixture
def answers(ap, monkeypatch):
    """A home holding a release (task file, world file) and seed Parquet, plus a copy of the task file outside
    it, in a folder every user may enter (so only the home's own mode and the sandbox keep them out); the
    harness holds the de-identification key in its environment."""
    base = Path(tempfile.mkdtemp(prefix="evalsuite-open-"))
    base.chmod(0o755)
    home = base / "home"
    monkeypatch.setenv("EVALSUITE_HOME", str(home))
    monkeypatch.setenv("EVALSUITE_DEID_KEY", KEY)
    release = Release(make_release(ap, home / "releases", n_tasks=2))
    seed = home / "suites" / "ap_test" / "seed" / "invoices.parquet"
    seed.parent.mkdir(parents=True)
    pq.write_table(pa.table({"invoice_id": ["INV-1"], "total": ["10.00"]}), seed)
    given = write_tasks(base / "given" / "tasks.jsonl", release.tasks())  # a task file handed to the harness
    yield Answers(home, release, [release.path / "tasks.jsonl", release.path / "world.sqlite", seed, given])
    shutil.rmtree(base)


def hostile_record(answers: Answers, monkeypatch, *, search: bool):
    """One trial of the hostile agent, told where every answer is, run as a config the way `evalsuite run` does."""
    targets = {"home": str(answers.home), "files": [str(f) for f in answers.files], "harness_pid": os.getpid(),
               "search": search}
    monkeypatch.setenv("HOSTILE_TARGETS", json.dumps(targets))
    monkeypatch.setenv("EVALSUITE_MCP_PASS_ENV", "HOSTILE_TARGETS")
    task = answers.release.tasks()[0]
    [record] = run_trials(answers.release.world_ref(), [task], [f"mcp:{sys.executable} {HOSTILE}"], 1,
                          TrialSettings(answers.release.run_identity(), workers=1))
    return record


@needs_bwrap
def test_a_hostile_agent_reads_none_of_the_answers_and_scores_nothing(answers, monkeypatch):
    """Started per trial (boundary process, named: a Python script's default is the zygote, tested below)."""
    monkeypatch.setenv("EVALSUITE_MCP_BOUNDARY", "process")
    record = hostile_record(answers, monkeypatch, search=True)
    assert (record.agent_config.boundary, record.agent_config.sandbox) == ("process", "sealed")
    assert record.outcome == "fail" and not record.passed and record.trace == [], record.error
    report = json.loads(record.final_message)
    tried = {t["what"]: t for t in report["tried"]}
    harness = [f"list {answers.home}", *(f"read {f}" for f in answers.files),
               *(f"read /proc/{os.getpid()}/{part}" for part in ("environ", "cmdline"))]
    assert {what: tried[what]["ok"] for what in harness} == dict.fromkeys(harness, False)
    assert tried["search the disk"]["data"] == []  # no task, world or seed file anywhere it can see
    assert set(report["env"]) <= {*BASE_ENV, *SHELL_VARS, "HOME", "TMPDIR", URL_VAR, "HOSTILE_TARGETS"}
    assert report["env"]["HOME"] == sandbox.AGENT_HOME
    assert KEY not in record.final_message and str(answers.home) not in report["env"].values()


@needs_bwrap
def test_a_hostile_agent_forked_by_the_zygote_reads_none_of_the_answers(answers, monkeypatch):
    """The zygote (the default boundary of a Python script) starts inside the same boundary, so what it forks can
    read no more."""
    monkeypatch.delenv("EVALSUITE_MCP_BOUNDARY", raising=False)
    record = hostile_record(answers, monkeypatch, search=False)
    assert (record.agent_config.boundary, record.agent_config.sandbox) == ("zygote", "sealed")
    assert record.outcome == "fail" and not record.passed and record.trace == [], record.error
    report = json.loads(record.final_message)
    tried = {t["what"]: t["ok"] for t in report["tried"]}
    harness = [f"list {answers.home}", *(f"read {f}" for f in answers.files),
               *(f"read /proc/{os.getpid()}/{part}" for part in ("environ", "cmdline"))]
    assert {what: tried[what] for what in harness} == dict.fromkeys(harness, False)
    assert report["env"]["HOME"].startswith(sandbox.AGENT_HOME + "/") and KEY not in record.final_message


def _host_ports() -> list[int]:
    """Every TCP port the host listens on, and Redis's (the Celery broker's) whether or not it runs here."""
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sorted({int(f[1].split(":")[1], 16) for f in (line.split() for line in lines) if f[3] == "0A"} | {6379})


@pytest.fixture
def loopback_service():
    """A service on the host's loopback, as a broker or a web server would be: a connection to it succeeds."""
    with socket.create_server(("127.0.0.1", 0)) as service:
        yield service.getsockname()[1]


@needs_bwrap
@pytest.mark.parametrize("boundary", ["process", "persistent", "zygote"])
def test_a_hostile_agent_reaches_neither_its_parent_nor_the_network_nor_an_earlier_trial(
        answers, monkeypatch, boundary, loopback_service):
    """Two trials in turn (a long-lived agent's on one process): the agent tries to ptrace its parent, read and
    write its memory, reach every host loopback port (a service the test runs, Redis's) and the outside, and
    leaves markers for the next trial in its parent's memory, /dev/shm, /tmp, its home, a process left running,
    System V and POSIX IPC. It gets none of them; only its own tool endpoint listens where it looks."""
    ports = _host_ports()
    assert loopback_service in ports
    targets = {"home": str(answers.home), "files": [], "harness_pid": os.getpid(), "search": False,
               "ports": ports, "mark": uuid.uuid4().hex}
    monkeypatch.setenv("HOSTILE_TARGETS", json.dumps(targets))
    command = [sys.executable, str(HOSTILE), *(["--serve"] if boundary == "persistent" else [])]
    agent = MCPAgent(f"mcp:hostile-{boundary}", command, boundary=boundary, pass_env=["HOSTILE_TARGETS"])
    try:
        results = [run_trial(answers.release.open_world(), task, agent, i)
                   for i, task in enumerate(answers.release.tasks()[:2])]
    finally:
        agent.close()
    assert [(r.outcome, r.trace) for r in results] == [("fail", [])] * 2, results[0].error
    reports = [json.loads(r.final_message) for r in results]
    for report in reports:
        *reached, seen = report["trespass"]
        assert {t["what"]: t["data"] for t in reached if t["ok"]} == {}
        assert len(reached) >= len(ports) + 4  # ptrace, maps, environ, mem, each port (but its own), outside
        assert seen["data"] == [seen["own"]]  # the namespace's loopback holds its endpoint and nothing of the host
    if boundary != "persistent":  # a persistent program's memory and home are its own, kept by design
        assert [c["what"] for c in reports[0]["left"] if c["ok"]]  # it did leave markers where it could
        assert {c["what"]: c["data"] for c in reports[1]["carried"] if c["ok"]} == {}


def test_without_the_seal_the_same_agent_replays_the_answers_and_its_records_say_so(answers, monkeypatch):
    """The attack is real: unsealed, the agent reads the task file, replays the reference solution and passes."""
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "none")
    record = hostile_record(answers, monkeypatch, search=False)
    assert record.agent_config.sandbox == "none"
    assert record.passed, (record.error, record.final_message[:300])


@needs_root
def test_as_the_agent_user_alone_the_private_home_keeps_every_answer_out(answers, monkeypatch, tmp_path):
    """Without bwrap (uid mode) file permissions are the boundary: the home is 0700, so nothing below it can be
    read, nor the harness's environment. The agent is a shell, which the agent user can run from /usr."""
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "uid")
    user = sandbox.sandbox_for().user
    with tempfile.TemporaryDirectory() as out:
        os.chown(out, *user)  # the agent's one way to report: a folder of its own
        secrets = [answers.home, *answers.files[:3], Path(f"/proc/{os.getpid()}/environ")]
        script = 'out=$1; shift; env > "$out/env"; for p; do if [ -d "$p" ]; then ls "$p"; else cat "$p"; fi ' \
                 '>/dev/null 2>&1 && echo "$p" >> "$out/read"; done; echo done >> "$out/read"'
        agent = MCPAgent("mcp:sh", ["/bin/sh", "-c", script, "sh", out, *map(str, secrets)])
        result = run_trial(answers.release.open_world(), answers.release.tasks()[0], agent)
        read = (Path(out) / "read").read_text().split()
        env = (Path(out) / "env").read_text()
    assert result.outcome == "fail" and not result.passed, result.error
    assert read == ["done"]  # every read failed
    assert KEY not in env and "EVALSUITE_DEID_KEY" not in env
    assert (answers.home.stat().st_mode & 0o777) == 0o700


@needs_bwrap
def test_the_example_agent_given_the_reference_plan_still_passes_sealed(answers):
    """Its interpreter, virtualenv and script are all it needs to see (test_agent_configs runs it sealed too)."""
    task = answers.release.tasks()[1]
    plan = json.dumps({"calls": [{"tool": c.tool, "arguments": c.arguments} for c in task.solution_calls()],
                       "answer": task.reference_answer})
    agent = MCPAgent("mcp:reference", [sys.executable, str(AGENT)], env={"EVALSUITE_AGENT_PLAN": plan})
    assert agent.sandbox.mechanism == "bwrap"
    result = run_trial(answers.release.open_world(), task, agent)
    assert result.outcome == "pass", (result.error, result.verdict and result.verdict.failures())
    assert [(e.tool, e.arguments) for e in result.trace] == [(c.tool, c.arguments) for c in task.solution_calls()]


@needs_bwrap
def test_an_mcp_command_of_relative_paths_runs_from_the_folder_evalsuite_runs_in(answers, monkeypatch):
    """The documented form, `mcp:.venv/bin/python examples/mcp_reference_agent.py` from the project folder: the
    sealed agent starts in its own home, yet it reaches its trial and passes, with no infra error."""
    task = answers.release.tasks()[1]
    plan = json.dumps({"calls": [{"tool": c.tool, "arguments": c.arguments} for c in task.solution_calls()],
                       "answer": task.reference_answer})
    monkeypatch.setenv("EVALSUITE_AGENT_PLAN", plan)
    monkeypatch.setenv("EVALSUITE_MCP_PASS_ENV", "EVALSUITE_AGENT_PLAN")
    monkeypatch.chdir(AGENT.parents[1])
    python = os.path.relpath(sys.executable)  # .venv/bin/python in the project folder itself
    [record] = run_trials(answers.release.world_ref(), [task], [f"mcp:{python} examples/{AGENT.name}"], 1,
                          TrialSettings(answers.release.run_identity(), workers=1))
    assert record.agent_config.sandbox == "sealed"
    assert (record.outcome, record.error) == ("pass", None)


HANG = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL stops it
subprocess.Popen(["sleep", sys.argv[1]], start_new_session=True)  # a child that even leaves the process group
time.sleep(600)
"""


@needs_bwrap
def test_a_hanging_sealed_agent_is_killed_with_every_process_it_started(ap):
    """Under bwrap the agent has its own PID namespace: when it goes, everything it started goes with it."""
    marker = f"{600 + uuid.uuid4().int % 10_000}.5"  # a sleep nobody else runs
    task = ap.tasks[0].model_copy(update={"trial_protocol": ap.tasks[0].trial_protocol.model_copy(
        update={"max_steps": 10})})
    agent = MCPAgent("mcp:hang", [sys.executable, "-c", HANG, marker], seconds_per_step=0.15, kill_grace=0.3)
    result = run_trial(ap.world, task, agent)
    assert result.outcome == "budget_exhausted"
    assert not _running(["sleep", marker])


def test_each_mcp_config_says_whether_its_agent_runs_sealed(monkeypatch):
    """The opt-out is part of the config (so of every record and the run identity); a config decides for itself."""
    command = [sys.executable, str(AGENT)]
    assert AgentConfig.parse(f"mcp:{sys.executable} {AGENT}").sandbox == "sealed"
    unsealed = AgentConfig(name="mcp:open", kind="mcp", command=command, sandbox="none")
    assert make_agent(unsealed).sandbox.mechanism == "none"
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "none")
    assert AgentConfig.parse(f"mcp:{sys.executable} {AGENT}").sandbox == "none"
    sealed = AgentConfig(name="mcp:shut", kind="mcp", command=command, sandbox="sealed")
    assert make_agent(sealed).sandbox.mechanism != "none"
    with pytest.raises(ValueError, match="sandbox applies only to an mcp agent"):
        AgentConfig(name="reference", sandbox="none")


def test_a_boundary_that_cannot_be_made_is_one_line_before_any_trial(monkeypatch, tmp_path):
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "chroot")
    with pytest.raises(sandbox.SandboxError, match=r"^EVALSUITE_AGENT_SANDBOX='chroot': expected one of auto, "
                                                   r"bwrap, uid, none$"):
        make_agent(f"mcp:{sys.executable} {AGENT}")
    monkeypatch.delenv(sandbox.SANDBOX_VAR)
    inside = Path(os.environ["EVALSUITE_HOME"]) / "agent.py"
    inside.parent.mkdir(parents=True, exist_ok=True)
    inside.write_text("")
    if sandbox.sandbox_for().mechanism == "bwrap":
        with pytest.raises(sandbox.SandboxError, match=r"agent path .* lies inside the home folder"):
            make_agent(f"mcp:{sys.executable} {inside}")
        monkeypatch.chdir(inside.parent)  # named relative to the folder evalsuite runs in, it is refused alike
        with pytest.raises(sandbox.SandboxError, match=rf"agent path {inside} lies inside the home folder"):
            make_agent(f"mcp:{sys.executable} {inside.name}")


@needs_root
def test_the_agent_user_must_reach_its_program(monkeypatch, tmp_path):
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "uid")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    program = closed / "agent"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    with pytest.raises(sandbox.SandboxError, match=rf"cannot run {program}: .* is closed to other users"):
        make_agent(f"mcp:{program}")


def _running(argv: list[str]) -> bool:
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        if not any(_cmdline(p) == argv for p in Path("/proc").iterdir() if p.name.isdigit()):
            return False
        time.sleep(0.05)
    return True


def _cmdline(proc: Path) -> list[str]:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:  # the process ended while we looked
        return []
