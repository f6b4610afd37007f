"""The example external agent (examples/mcp_reference_agent.py) as a user meets it: given a plan it acts on it;
without one it still works its trial over MCP (the task, the tools, the reads it can make without deciding) and
says in its closing note and on stderr what to set, instead of passing for the no-op."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from evalsuite.core.sandbox import Sandbox
from evalsuite.trials.agents.mcp_agent import MCPAgent
from evalsuite.trials.trial import run_trial

AGENT = Path(__file__).parents[3] / "examples" / "mcp_reference_agent.py"
UNSEALED = Sandbox("none")  # the example's behaviour is tested here, the boundary in test_sealed_boundary


def test_without_a_plan_the_example_reads_what_it_can_and_says_what_to_set(ap, tmp_path):
    task = ap.tasks[0]
    report = tmp_path / "report.json"
    agent = MCPAgent("mcp:example", [sys.executable, str(AGENT)], sandbox=UNSEALED,
                     env={"EVALSUITE_AGENT_REPORT": str(report)})
    result = run_trial(ap.world, task, agent)
    seen = json.loads(report.read_text())
    reads = sorted(n for n, t in ap.world.domain.tools.items() if t.kind == "read")
    assert sorted(seen["read_only"]) == reads  # MCP's readOnlyHint marks exactly the domain's reads
    assert [(e.tool, e.arguments, e.outcome) for e in result.trace] == [("get_policy", {}, "ok")]
    assert result.outcome == "fail" and result.error is None  # graded like any agent: it decided nothing
    assert result.final_message == ("Read the task (role ap_clerk_agent) and called get_policy: no "
                                    "EVALSUITE_AGENT_PLAN, so no action taken; set it to JSON {\"calls\": "
                                    "[{\"tool\": ..., \"arguments\": {...}}], \"answer\": \"...\"} and pass it "
                                    "with EVALSUITE_MCP_PASS_ENV=EVALSUITE_AGENT_PLAN.")


def test_given_a_plan_the_example_makes_its_calls_and_submits_its_answer(ap):
    task = next(t for t in ap.tasks if t.category == "quantity_mismatch")
    plan = json.dumps({"calls": [{"tool": c.tool, "arguments": c.arguments} for c in task.solution_calls()],
                       "answer": task.reference_answer})
    agent = MCPAgent("mcp:example", [sys.executable, str(AGENT)], sandbox=UNSEALED,
                     env={"EVALSUITE_AGENT_PLAN": plan})
    result = run_trial(ap.world, task, agent)
    assert result.outcome == "pass", (result.error, result.verdict and result.verdict.failures())
    assert [(e.tool, e.arguments) for e in result.trace] == [(c.tool, c.arguments) for c in task.solution_calls()]
