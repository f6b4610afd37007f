"""The fast agent boundary: one long-lived agent per worker (persistent, or a zygote forking a fresh Python agent per
trial) and one long-lived tool server, with every trial on a fresh session, URL and world, and nothing carried over."""
import json
import sys
from pathlib import Path

import pytest
from harness_support import make_release

from evalsuite.core import sandbox
from evalsuite.core.identity import AgentConfig
from evalsuite.core.records import TrialProtocol
from evalsuite.core.sandbox import Sandbox
from evalsuite.releases.release import Release
from evalsuite.trials import zygote
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.mcp_agent import MCPAgent
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.trial import run_trial

HERE = Path(__file__).parent
PROBE, STALE, LOOPBACK = HERE / "state_probe_agent.py", HERE / "stale_session_agent.py", HERE / "loopback_agent.py"
UNSEALED = Sandbox("none")  # where the property tested is the harness's, not the sandbox's: faster to start


def _plans(tasks) -> str:
    def plan(task) -> dict:
        return {"calls": [{"tool": c.tool, "arguments": c.arguments} for c in task.solution_calls()],
                "answer": task.reference_answer}

    return json.dumps({t.trigger.text: plan(t) for t in tasks})


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="bubblewrap is not usable here (its private /tmp is tested)")
def test_zygote_trials_come_from_one_warm_process_yet_see_nothing_of_each_other(ap, tmp_path):
    """Sealed by bwrap: one zygote (same parent) forks a new agent (new pid) per trial; no trial finds the
    markers an earlier one left in /tmp, its home, its TMPDIR, the interpreter's memory or its imported modules.
    The config says zygote on every record."""
    release = Release(make_release(ap, tmp_path / "releases", n_tasks=2))
    config = AgentConfig(name="probe", kind="mcp", command=[sys.executable, str(PROBE)], boundary="zygote")
    records = run_trials(release.world_ref(), release.tasks(), [config], 2,  # one in flight: one zygote for all
                         TrialSettings(release.run_identity(), workers=1, max_in_flight=1))
    reports = [json.loads(r.final_message) for r in records]
    assert [r.outcome for r in records] == ["fail"] * 4, records[0].error  # it submits a report, not a decision
    assert {r.agent_config.boundary for r in records} == {"zygote"}
    assert {r.agent_config.sandbox for r in records} == {"sealed"}
    # a module one trial imported is not imported for the next: the zygote learns only from its warm-up
    assert [rep["seen"] for rep in reports] == [dict.fromkeys(("tmp", "home", "tmpdir", "memory", "module"),
                                                              False)] * 4
    assert len({rep["pid"] for rep in reports}) == 4 and len({rep["ppid"] for rep in reports}) == 1
    assert len({rep["random"] for rep in reports}) == 4  # each fork reseeds: no shared random sequence


@pytest.mark.parametrize("sealed", [False, pytest.param(True, marks=pytest.mark.skipif(
    not sandbox.bwrap_works(), reason="bubblewrap is not usable here"))], ids=["unsealed", "sealed"])
def test_a_stale_session_of_one_trial_never_reaches_the_next(ap, sealed):
    """A persistent agent keeps trial N's session open and replays its URL and session id in trial N+1: the old
    session's write fails, the old URL answers 404, the old session id is unknown to the new trial, and no
    world sees the write. The agent itself did persist (it counts the trials it served). Sealed, it reaches every
    trial's URL from its own network namespace, through the one relay to the tool server's socket."""
    seal = sandbox.sandbox_for("sealed") if sealed else UNSEALED
    agent = MCPAgent("mcp:stale", [sys.executable, str(STALE)], boundary="persistent", sandbox=seal)
    try:
        results = [run_trial(ap.world, t, agent, i) for i, t in enumerate([ap.tasks[0], ap.tasks[1], ap.tasks[0]])]
    finally:
        agent.close()
    assert [r.outcome for r in results] == ["fail"] * 3, results[0].error
    assert [r.trace for r in results] == [[], [], []]  # the stale write reached no world
    reports = [json.loads(r.final_message) for r in results]
    assert [rep["served"] for rep in reports] == [1, 2, 3] and {rep["own url"] for rep in reports} == {200}
    for rep in reports[1:]:
        assert rep["old session write"].startswith("failed"), rep
        assert rep["old url"] == 404 and rep["old session id on new url"] == 404, rep
    for r in results:  # nothing changed anywhere in any trial's world
        checks = {c.name: c.passed for c in r.verdict.checks}
        assert checks["no collateral change"] and checks["no forbidden call"], r.verdict.failures()


HANG_ONCE = """
import os, sys, time
marker = sys.argv[1]
if not os.path.exists(marker):  # the first worker takes its trial and never answers
    open(marker, "w").close()
    sys.stdin.readline()
    time.sleep(600)
os.execv(sys.executable, [sys.executable, sys.argv[2], "--serve"])  # its replacement serves properly
"""


def test_a_persistent_agent_out_of_time_is_killed_and_the_next_trial_gets_a_fresh_one(ap, tmp_path):
    task = ap.tasks[0]
    script = tmp_path / "hang_once.py"
    script.write_text(HANG_ONCE)
    agent = MCPAgent("mcp:hang-once", [sys.executable, str(script), str(tmp_path / "marker"), str(LOOPBACK)],
                     boundary="persistent", sandbox=UNSEALED, seconds_per_step=0.1, kill_grace=0.2,
                     env={"EVALSUITE_AGENT_PLANS": _plans([task])})
    short = task.model_copy(update={"trial_protocol": TrialProtocol(max_steps=10)})
    try:
        first = run_trial(ap.world, short, agent, 0)
        agent.seconds_per_step = 30  # the replacement's start (interpreter, imports) counts against its trial
        second = run_trial(ap.world, task, agent, 1)
    finally:
        agent.close()
    assert first.outcome == "budget_exhausted" and first.trace == []
    assert second.outcome == "pass", (second.error, second.verdict and second.verdict.failures())


def test_a_crashing_zygote_agent_is_an_infra_error_with_its_output_and_the_zygote_lives_on(ap, tmp_path):
    script = tmp_path / "crash.py"
    script.write_text("import sys\nprint('boom')\nsys.exit(3)\n")
    agent = MCPAgent("mcp:crash", [sys.executable, str(script)], boundary="zygote", sandbox=UNSEALED)
    try:
        results, zygotes = [], []
        for i in range(2):
            results.append(run_trial(ap.world, ap.tasks[0], agent, i))
            zygotes.append([w.proc.pid for w in agent._runtime.workers()])
    finally:
        agent.close()
    for result in results:
        assert result.outcome == "infra_error" and "exited with 3" in result.error and "boom" in result.error
    assert zygotes[0] == zygotes[1] and len(zygotes[0]) == 1  # the child died, not the zygote: no restart


LIAR = """
import json, sys
for line in sys.stdin:
    print("a line that is not a reply", flush=True)  # ignored
    print(json.dumps({"trial": "not-" + json.loads(line)["trial"], "exit": 0}), flush=True)
"""


def test_a_reply_for_another_trial_is_an_infra_error_and_the_agent_is_replaced(ap, tmp_path):
    script = tmp_path / "liar.py"
    script.write_text(LIAR)
    agent = MCPAgent("mcp:liar", [sys.executable, str(script)], boundary="persistent", sandbox=UNSEALED)
    try:
        result = run_trial(ap.world, ap.tasks[0], agent, 0)
        replaced = agent._runtime.workers() == []
    finally:
        agent.close()
    assert result.outcome == "infra_error" and "during trial" in result.error and replaced


def test_zygote_and_persistent_are_mcp_settings_and_a_zygote_runs_only_python_scripts(monkeypatch):
    with pytest.raises(ValueError, match=r"boundary zygote runs a Python script \(python SCRIPT.py ARGS...\), "
                                         r"not '/bin/sh -c true'"):
        make_agent(AgentConfig(name="sh", kind="mcp", command=["/bin/sh", "-c", "true"], boundary="zygote",
                               sandbox="none"))
    with pytest.raises(ValueError, match="boundary applies only to an mcp agent"):
        AgentConfig(name="reference", boundary="zygote")
    assert "boundary" not in AgentConfig.parse("reference").model_dump()  # other kinds' identities are unchanged
    monkeypatch.setenv("EVALSUITE_MCP_BOUNDARY", "fork")
    with pytest.raises(ValueError, match=r"^EVALSUITE_MCP_BOUNDARY='fork': expected one of process, persistent, "
                                         r"zygote$"):
        AgentConfig.parse(f"mcp:{sys.executable} {PROBE}")
    monkeypatch.setenv("EVALSUITE_MCP_BOUNDARY", "zygote")
    assert AgentConfig.parse(f"mcp:{sys.executable} {PROBE}").boundary == "zygote"
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "none")
    assert make_agent(f"mcp:{sys.executable} {PROBE}").command[1].endswith("evalsuite/trials/zygote.py")


def test_a_python_script_runs_under_the_zygote_unless_another_boundary_is_named(monkeypatch):
    """The default boundary adds no interpreter start per trial to a Python script; any other command is started
    per trial, as is a script whose boundary is named process, in the environment or in its config."""
    monkeypatch.delenv("EVALSUITE_MCP_BOUNDARY", raising=False)
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "none")
    script = f"mcp:{sys.executable} {PROBE} --flag"
    assert AgentConfig.parse(script).boundary == "zygote"
    assert make_agent(script).command[:3] == [sys.executable, str(Path(zygote.__file__)), str(PROBE)]
    assert AgentConfig(name="spec", kind="mcp", command=["python3.12", "agent.py"]).boundary == "zygote"
    for other in ("mcp:/bin/sh -c true", f"mcp:{sys.executable} -m agent", f"mcp:{sys.executable} -u {PROBE}",
                  f"mcp:{PROBE}"):
        assert AgentConfig.parse(other).boundary == "process", other
    named = AgentConfig(name="spec", kind="mcp", command=[sys.executable, str(PROBE)], boundary="process")
    assert make_agent(named).command == [sys.executable, str(PROBE)]
    monkeypatch.setenv("EVALSUITE_MCP_BOUNDARY", "process")
    assert AgentConfig.parse(script).boundary == "process" and make_agent(script).command[1] == str(PROBE)


def test_closing_an_agent_inside_another_event_loop_still_stops_its_process(ap):
    """A finalizer may close an agent while another agent's event loop runs in this thread (the garbage collector
    picks its moment): the long-lived agent process must still be stopped, not left running."""
    import asyncio
    import os

    task = ap.tasks[0]
    agent = MCPAgent("mcp:loopback", [sys.executable, str(LOOPBACK), "--serve"], boundary="persistent",
                     sandbox=UNSEALED, env={"EVALSUITE_AGENT_PLANS": _plans([task])})
    assert run_trial(ap.world, task, agent, 0).outcome == "pass"
    [worker] = agent._runtime.workers()
    pid = worker.proc.pid

    async def elsewhere() -> None:
        agent.close()

    asyncio.run(elsewhere())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
