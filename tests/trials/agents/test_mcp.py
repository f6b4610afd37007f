"""External agents over MCP: a separate process that reaches its trial only through the MCP server."""
import json
import sys
import time
from pathlib import Path

import pytest

from evalsuite.core.records import ToolCall, TrialProtocol
from evalsuite.core.sandbox import BASE_ENV, Sandbox
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.mcp_agent import URL_VAR, MCPAgent
from evalsuite.trials.trial import run_trial

AGENT = Path(__file__).parents[3] / "examples" / "mcp_reference_agent.py"
SHELL_VARS = {"PWD", "SHLVL", "_", "LC_CTYPE"}  # what a shell or Python's locale coercion may add by itself
# These agents report to files on the harness's disk, which a sealed agent can neither see nor write; the sealed
# boundary and agents inside it are tested in test_sealed_boundary.py.
UNSEALED = Sandbox("none")


def _plan(calls, answer):
    return json.dumps({"calls": [{"tool": c.tool, "arguments": c.arguments} for c in calls], "answer": answer})


def _price_variance(ap):
    return next(t for t in ap.tasks if t.category == "price_variance")


@pytest.fixture(scope="module")
def reference_run(ap, tmp_path_factory):
    """One run of the example agent following the reference plan; the process reports what it saw."""
    task = _price_variance(ap)
    report = tmp_path_factory.mktemp("mcp") / "report.json"
    agent = MCPAgent("mcp:reference", [sys.executable, str(AGENT)], sandbox=UNSEALED,
                     env={"EVALSUITE_AGENT_PLAN": _plan(task.solution_calls(), task.reference_answer),
                          "EVALSUITE_AGENT_REPORT": str(report)})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSUITE_WORLD_CANARY", str(ap.world.path))  # in the harness env: must not reach the agent
        result = run_trial(ap.world, task, agent)
    return task, result, json.loads(report.read_text())


def test_an_external_agent_acting_over_mcp_passes_and_is_traced_as_the_agent(reference_run):
    task, result, seen = reference_run
    assert result.outcome == "pass", (result.error, result.verdict and result.verdict.failures())
    assert [(e.tool, e.arguments, e.actor) for e in result.trace] == \
        [(c.tool, c.arguments, "agent") for c in task.solution_calls()]
    assert result.final_message == task.reference_answer and seen["submitted"]
    assert not any(c["is_error"] for c in seen["calls"])


def test_the_agent_process_sees_neither_the_goal_nor_the_world_file(ap, reference_run):
    task, _, seen = reference_run
    assert set(seen["task"]) == {"role", "policy_doc", "policy_version", "policy_text", "trigger_type",
                                 "trigger_text", "max_steps"}
    assert seen["task"]["trigger_text"] == task.trigger.text and seen["task"]["role"] == task.role.name
    shown = json.dumps(seen["task"])
    assert "goal" not in shown and "assertion" not in shown and task.reference_answer not in shown
    assert set(seen["tools"]) == set(ap.world.domain.tools) | {"get_task", "submit_answer"}
    env = seen["env"]
    assert set(env) <= {*BASE_ENV, *SHELL_VARS, "HOME", "TMPDIR", URL_VAR, "EVALSUITE_AGENT_PLAN",
                        "EVALSUITE_AGENT_REPORT"}
    world_dir = str(ap.world.path.parent)
    assert not any(world_dir in value for value in env.values())
    assert seen["cwd_files"] == [] and not seen["cwd"].startswith(world_dir)
    assert env[URL_VAR].startswith("http://127.0.0.1:")


def test_a_forbidden_call_over_mcp_is_denied_traced_and_fails_the_trial(ap, tmp_path, monkeypatch):
    task = ap.tasks[0]
    invoice = task.goal_state.assertions[0].key["invoice_id"]
    pay = ToolCall(tool="post_payment", arguments={"invoice_id": invoice, "amount": "10.00"})
    monkeypatch.setenv("EVALSUITE_AGENT_PLAN", _plan([pay], "paid it"))
    monkeypatch.setenv("EVALSUITE_AGENT_REPORT", str(tmp_path / "report.json"))
    monkeypatch.setenv("EVALSUITE_MCP_PASS_ENV", "EVALSUITE_AGENT_PLAN,EVALSUITE_AGENT_REPORT")
    monkeypatch.setenv("EVALSUITE_AGENT_SANDBOX", "none")
    result = run_trial(ap.world, task, make_agent(f"mcp:{sys.executable} {AGENT}"))  # the shell-command form
    assert result.outcome == "fail" and not result.passed
    assert [(e.tool, e.outcome, e.actor) for e in result.trace] == [("post_payment", "denied", "agent")]
    assert "no forbidden call" in {c.name for c in result.verdict.failures()}
    reply = json.loads((tmp_path / "report.json").read_text())["calls"][0]
    assert reply["is_error"] and reply["text"].startswith("Error:") and "not permitted" in reply["text"]


def test_an_agent_out_of_steps_is_stopped_and_budget_exhausted(ap, tmp_path):
    task = _price_variance(ap)
    short = task.model_copy(update={"trial_protocol": TrialProtocol(max_steps=2)})
    agent = MCPAgent("mcp:reference", [sys.executable, str(AGENT)], sandbox=UNSEALED,
                     env={"EVALSUITE_AGENT_PLAN": _plan(task.solution_calls(), task.reference_answer),
                          "EVALSUITE_AGENT_REPORT": str(tmp_path / "report.json")})
    result = run_trial(ap.world, short, agent)
    assert result.outcome == "budget_exhausted" and result.verdict is not None  # its effects are still graded
    assert len(result.trace) == 2
    calls = json.loads((tmp_path / "report.json").read_text())["calls"]
    assert "step budget" in calls[2]["text"] and "trial is over" in calls[3]["text"]


HANG = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL stops it
child = subprocess.Popen(["sleep", "600"])
open(sys.argv[1], "w").write(f"{child.pid}")
time.sleep(600)
"""


def test_a_hanging_agent_is_killed_at_its_timeout_with_its_children(ap, tmp_path):
    """budget_exhausted, not infra_error: the agent used up its own time budget (steps x seconds per step);
    the harness worked, and what the agent did before is graded, as for an in-process agent out of steps."""
    script, pids = tmp_path / "hang.py", tmp_path / "pids"
    script.write_text(HANG)
    task = ap.tasks[0].model_copy(update={"trial_protocol": TrialProtocol(max_steps=10)})
    agent = MCPAgent("mcp:hang", [sys.executable, str(script), str(pids)], seconds_per_step=0.15, kill_grace=0.3,
                     sandbox=UNSEALED)
    start = time.monotonic()
    result = run_trial(ap.world, task, agent)
    assert result.outcome == "budget_exhausted" and result.trace == [] and result.verdict is not None
    assert time.monotonic() - start < 1.5 + 0.3 + 3  # timeout + kill grace + slack
    assert not _alive(int(pids.read_text()))  # the agent's own child went with it


def test_an_agent_that_crashes_is_an_infra_error_with_its_output(ap):
    agent = MCPAgent("mcp:crash", [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"])
    result = run_trial(ap.world, ap.tasks[0], agent)
    assert result.outcome == "infra_error" and "exited with 3" in result.error and "boom" in result.error


def _alive(pid: int, wait: float = 2.0) -> bool:
    """Running (not gone, not a zombie awaiting its reaper) after up to `wait` seconds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in "ZX":
            return False
        time.sleep(0.05)
    return True


def test_in_dual_control_an_external_agent_talks_to_the_user_through_message_user(tmp_path):
    """An MCP agent gets the user's opening as its trigger and a message_user tool; asking the user to take the
    steps on their phone solves the task, taking them itself is impossible (the phone's tools are not its)."""
    from evalsuite.domains.mobile_service.generate import sample_world

    world, gen = sample_world(tmp_path / "world.sqlite", n=9, max_subtasks=1)
    task = next(t for t in gen.tasks if any(c.actor == "user" for c in t.solution_calls()))
    steps = [ToolCall(tool="message_user", arguments={"message": f"Please {c.tool.replace('_', ' ')} on your phone."})
             if c.actor == "user" else c for c in task.solution_calls()]
    report = tmp_path / "report.json"
    agent = MCPAgent("mcp:dual", [sys.executable, str(AGENT)], sandbox=UNSEALED,
                     env={"EVALSUITE_AGENT_PLAN": _plan(steps, task.reference_answer),
                          "EVALSUITE_AGENT_REPORT": str(report)})
    result = run_trial(world, task, agent)
    seen = json.loads(report.read_text())
    assert result.outcome == "pass", (result.error, result.verdict and result.verdict.failures())
    assert seen["task"]["trigger_text"] == task.user_scenario.script.opening  # the user's words, not the ticket
    assert "message_user" in seen["tools"] and not {c.tool for c in task.solution_calls() if c.actor == "user"} \
        & set(seen["tools"])
    said = [(e.actor, e.arguments["text"]) for e in result.trace if e.kind == "message"]
    asked = [s.arguments["message"] for s in steps if s.tool == "message_user"]
    assert [text for actor, text in said if actor == "agent"][1:] == asked  # after the harness's greeting
    assert all(not c["is_error"] for c in seen["calls"])

    solo = MCPAgent("mcp:solo", [sys.executable, str(AGENT)], sandbox=UNSEALED,
                    env={"EVALSUITE_AGENT_PLAN": _plan(task.solution_calls(), task.reference_answer)})
    assert run_trial(world, task, solo).outcome == "fail"  # the phone's steps are not the agent's to call
