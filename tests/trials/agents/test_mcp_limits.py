"""Resource limits of an external agent's trial (evalsuite.core.agent_limits): wall time, output, final message
and disk. Each one passed ends the trial as budget_exhausted, its effects graded, its agent killed, and the record's
`exhausted` names the limit."""
import json
import sys
import time
from pathlib import Path

import pytest

from evalsuite.core import sandbox
from evalsuite.core.identity import AgentConfig, TrialLimits
from evalsuite.core.sandbox import Sandbox
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.mcp_agent import MCPAgent
from evalsuite.trials.trial import run_trial

GREEDY = Path(__file__).parent / "greedy_agent.py"
UNSEALED = Sandbox("none")  # the agent reports to a file on the harness's disk; the sealed run is tested below


def _greedy(mode: list[str], report: Path, boundary: str = "process", **kw) -> MCPAgent:
    serve = ["--serve"] if boundary == "persistent" else []
    return MCPAgent(f"mcp:greedy-{mode[0]}", [sys.executable, str(GREEDY), *mode, *serve], boundary=boundary,
                    sandbox=kw.pop("sandbox", UNSEALED), env={"GREEDY_REPORT": str(report)}, kill_grace=0.3, **kw)


def _run(ap, agent: MCPAgent):
    start = time.monotonic()
    try:
        result = run_trial(ap.world, ap.tasks[0], agent)
    finally:
        agent.close()
    return result, time.monotonic() - start


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"  # a zombie is gone too
    except FileNotFoundError:
        return True


def test_the_default_wall_time_of_a_trial_is_minutes_and_a_config_can_set_its_own(monkeypatch):
    monkeypatch.delenv("EVALSUITE_MCP_TRIAL_SECONDS", raising=False)
    assert MCPAgent("mcp:x", ["true"], sandbox=UNSEALED).limits.trial_seconds == 300  # not 30 s x 40 steps
    config = AgentConfig(name="x", kind="mcp", command=["true"], sandbox="none", limits=TrialLimits(seconds=42))
    assert make_agent(config).limits.trial_seconds == 42
    monkeypatch.setenv("EVALSUITE_MCP_TRIAL_SECONDS", "soon")
    with pytest.raises(ValueError, match="EVALSUITE_MCP_TRIAL_SECONDS='soon'"):
        MCPAgent("mcp:x", ["true"], sandbox=UNSEALED)


def test_an_agent_that_never_answers_ends_at_the_trial_wall_time_with_its_children(ap, tmp_path, monkeypatch):
    """40 steps x 30 s would let it hold its slot 20 minutes (here: until it gives up after 8 s); the trial's
    limit ends it at 1 s, budget_exhausted and graded, its whole process group killed."""
    monkeypatch.setenv("EVALSUITE_MCP_TRIAL_SECONDS", "1")
    result, took = _run(ap, _greedy(["hold", "8"], tmp_path / "report"))
    assert result.outcome == "budget_exhausted" and result.verdict is not None, result.error
    assert result.exhausted.startswith("wall time: 1 s"), result.exhausted
    assert took < 5
    assert _gone(int((tmp_path / "report.pid").read_text()))  # the agent's own child went with it


def test_the_agent_configs_wall_time_is_enforced_in_a_sequential_run(ap, tmp_path, monkeypatch):
    """TrialLimits.seconds on the config holds for run_trial too, not only on the trial engine."""
    monkeypatch.setenv("EVALSUITE_MCP_PASS_ENV", "GREEDY_REPORT")
    monkeypatch.setenv("GREEDY_REPORT", str(tmp_path / "report"))
    config = AgentConfig(name="hold", kind="mcp", command=[sys.executable, str(GREEDY), "hold", "8"], sandbox="none",
                         limits=TrialLimits(seconds=1))
    result, took = _run(ap, make_agent(config))
    assert result.outcome == "budget_exhausted" and result.exhausted.startswith("wall time: 1 s"), result.error
    assert took < 5


@pytest.mark.parametrize("boundary", ["process", "persistent"])
def test_an_agent_that_floods_its_output_is_stopped_at_the_output_cap(ap, tmp_path, monkeypatch, boundary):
    """200 MB of output were kept before; now past 1 MB (lowered here) the agent is killed mid-flood."""
    monkeypatch.setenv("EVALSUITE_MCP_OUTPUT_MB", "1")
    result, took = _run(ap, _greedy(["flood", "200"], tmp_path / "report", boundary))
    assert result.outcome == "budget_exhausted" and result.verdict is not None, result.error
    assert result.exhausted.startswith("stdout cap 1 MB hit"), result.exhausted
    assert int((tmp_path / "report").read_text()) < 200 and took < 10  # it did not get to write it all


def test_a_final_message_over_the_cap_is_refused_whole_and_recorded(ap, tmp_path):
    """The default cap (64 KB) against the 3.9 MB answer that was accepted: the agent is told it is refused, no
    part of it is graded or stored, and the record says why."""
    result, _ = _run(ap, _greedy(["submit", str(3_900_000)], tmp_path / "report"))
    assert result.outcome == "budget_exhausted" and result.final_message == "", result.error
    assert result.exhausted == "final message cap 64 KB hit (3.72 MB submitted); refused"
    seen = json.loads((tmp_path / "report").read_text())
    assert seen["refused"] and "over the 64 KB cap" in seen["text"]


def test_a_final_message_at_the_cap_is_accepted(ap, tmp_path):
    result, _ = _run(ap, _greedy(["submit", str(64 * 1024)], tmp_path / "report"))  # the default cap
    assert result.outcome == "fail" and len(result.final_message) == 64 * 1024  # graded: it is no decision


@pytest.mark.parametrize("boundary", ["process", "persistent"])
def test_an_agent_that_fills_its_home_is_stopped_at_the_disk_cap(ap, tmp_path, monkeypatch, boundary):
    """800 MB in the home were accepted before; now past 8 MB (lowered here) the agent is killed mid-write."""
    monkeypatch.setenv("EVALSUITE_MCP_DISK_MB", "8")
    result, took = _run(ap, _greedy(["disk", "800", "home"], tmp_path / "report", boundary))
    assert result.outcome == "budget_exhausted" and result.verdict is not None, result.error
    assert result.exhausted.startswith("disk cap 8 MB hit"), result.exhausted
    assert int((tmp_path / "report").read_text()) < 800 and took < 10


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="bubblewrap is not usable here (its sized /tmp is tested)")
@pytest.mark.parametrize("folder", ["tmp", "home"])
def test_a_sealed_agent_cannot_write_past_the_disk_cap(ap, tmp_path, monkeypatch, folder):
    """Under bwrap /tmp is a tmpfs of the cap's size (writes past it fail) and the home is measured: either way
    the agent that fills it and stays is killed, and the record says the disk cap was hit."""
    monkeypatch.setenv("EVALSUITE_MCP_DISK_MB", "8")
    agent = MCPAgent("mcp:greedy-disk", [sys.executable, str(GREEDY), "disk", "800", folder], kill_grace=0.3)
    assert agent.sandbox.mechanism == "bwrap"
    result, took = _run(ap, agent)
    assert result.outcome == "budget_exhausted" and result.exhausted.startswith("disk cap 8 MB hit"), result.error
    assert ("(/tmp full)" in result.exhausted) == (folder == "tmp"), result.exhausted  # the tmpfs stopped it
    assert took < 15  # not the 30 s it holds on for
