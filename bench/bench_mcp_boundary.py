"""Per-trial cost the MCP boundary adds to a trial, old per-trial path against the long-lived ones.

    .venv/bin/python bench/bench_mcp_boundary.py [--trials 20] [--sandbox auto|none] [--json PATH]

Each trial of an external agent replaying the reference solution over MCP is paired with a trial of the
in-process reference agent on the same task, run just before it; the added cost is the difference of
their wall times. Modes (evalsuite.trials.agents.mcp_agent):

- old: what every trial paid before: a new tool server per trial (started and stopped) and a new agent
  process (interpreter start, `import mcp`, a session), examples/mcp_reference_agent.py;
- process: the same agent process per trial, on one long-lived tool server;
- zygote: the agent forked per trial from a zygote that has done its imports; with the example agent,
  and with tests/trials/agents/loopback_agent.py, the same agent whose HTTP client skips loading the CA
  bundle (a loopback http URL needs none; the stock client loads it for every new client);
- persistent: loopback_agent.py --serve, one process serving trial after trial (a fresh session each);
- default: the example agent as `mcp:python SCRIPT.py` names it with no boundary (AgentConfig.parse picks one):
  what a user who sets nothing pays.

The first trial of a long-lived agent pays its start; it is reported on its own row and left out of the
per-trial figures. Sealed as `evalsuite run` seals agents (bwrap where it works) unless --sandbox none.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import benchlib

from evalsuite.core.identity import AgentConfig
from evalsuite.core.sandbox import Sandbox, sandbox_for
from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.mcp_agent import MCPAgent
from evalsuite.trials.trial import run_trial

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mcp_reference_agent.py"
LOOPBACK = ROOT / "tests" / "trials" / "agents" / "loopback_agent.py"
TARGET_MS = 50.0
# mode name -> (boundary, agent command after the interpreter, a new agent (and server) per trial, held to target)
MODES = {
    "old: process + per-trial server, example agent": ("process", [str(EXAMPLE)], True, False),
    "process, long-lived server, example agent": ("process", [str(EXAMPLE)], False, False),
    "zygote, example agent": ("zygote", [str(EXAMPLE)], False, False),
    "zygote, loopback client": ("zygote", [str(LOOPBACK)], False, True),
    "persistent, loopback client (--serve)": ("persistent", [str(LOOPBACK), "--serve"], False, True),
}
DEFAULT = "default (mcp:python SCRIPT.py, no boundary named), example agent"
DEFAULT_TARGET_MS = 100.0


def run_mode(world, task, boundary: str, args: list[str], fresh: bool, trials: int, seal: Sandbox,
             env: dict[str, str]) -> tuple[list[float], list[float], float | None]:
    """(added wall ms per trial, added harness CPU ms per trial, the first trial's added wall ms for a long-lived
    agent) over `trials` paired trials. The CPU is this thread's: the harness's share, not the agent's."""
    reference = make_agent("reference")

    def build() -> MCPAgent:
        return MCPAgent("mcp:bench", [sys.executable, *args], boundary=boundary, sandbox=seal, env=env)

    agent, added, cpu = None if fresh else build(), [], []
    try:
        for i in range(trials + (0 if fresh else 1)):
            base, base_cpu, ref = benchlib.timed_cpu(lambda: run_trial(world, task, reference, i))
            one = build() if fresh else agent
            wall, used, result = benchlib.timed_cpu(lambda: run_trial(world, task, one, i))
            if fresh:  # the old path stopped its server inside every trial
                stop, stop_cpu, _ = benchlib.timed_cpu(one.close)
                wall, used = wall + stop, used + stop_cpu
            if not (ref.passed and result.passed):
                raise SystemExit(f"trial {i} did not pass: {result.outcome} {result.error or ''}")
            added.append(wall - base)
            cpu.append(used - base_cpu)
    finally:
        if agent is not None:
            agent.close()
    return (added, cpu, None) if fresh else (added[1:], cpu[1:], added[0])


def main() -> None:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--trials", type=int, default=20, help="trials per mode (after a long-lived agent's first)")
    ap.add_argument("--sandbox", choices=("auto", "none"), default="auto")
    args = ap.parse_args()
    seal = Sandbox("none") if args.sandbox == "none" else sandbox_for("sealed")
    res = benchlib.Result("mcp_boundary", benchlib.command_line())
    ex = ap_example(tempfile.mkdtemp(prefix="bench-mcp-"))
    task = next(t for t in ex.tasks if t.category == "price_variance")
    plan = {"calls": [{"tool": c.tool, "arguments": c.arguments} for c in task.solution_calls()],
            "answer": task.reference_answer}
    env = {"EVALSUITE_AGENT_PLAN": json.dumps(plan), "EVALSUITE_AGENT_PLANS": json.dumps({task.trigger.text: plan})}
    default = AgentConfig.parse(f"mcp:{sys.executable} {EXAMPLE}").boundary
    modes = {**MODES, DEFAULT: (default, [str(EXAMPLE)], False, True)}
    for name, (boundary, command, fresh, held) in modes.items():
        added, cpu, first = run_mode(ex.world, task, boundary, command, fresh, args.trials, seal, env)
        target = DEFAULT_TARGET_MS if name == DEFAULT else TARGET_MS
        res.add(f"added per trial: {name}", added, "ms", target=f"< {target:g} ms" if held else None,
                met=benchlib.summary(added)["median"] < target if held else None)
        res.add(f"harness CPU added per trial: {name}", cpu, "ms")
        if first is not None:
            res.add(f"first trial (agent start): {name}", [first], "ms")
    res.note(f"sandbox {seal.mechanism}; task {task.task_id} ({len(task.solution_calls())} tool calls), "
             f"{args.trials} trials per mode, each paired with an in-process reference trial of the same task; "
             f"the default boundary is {default}")
    res.write(args.json)


if __name__ == "__main__":
    main()
