"""Wall time of a long-lived external agent's trials at 1 and at 8 in flight on one event loop (MCPAgent.arun).

    .venv/bin/python bench/bench_mcp_in_flight.py [--trials 16] [--sleep 0.3] [--repeats 3] [--sandbox auto|none]
                                                  [--json PATH]

The agent (tests/trials/agents/peeking_agent.py --serve, boundary persistent) replays each task's reference
solution and sleeps --sleep seconds per trial, standing in for the waits on a model. Each repeat runs the
--trials trials twice on one loop, `limit` in flight at a time as the trial engine keeps them: the first round
on a cold pool (its processes start as trials come), the second on the warm pool the first left. Every trial
must pass. Sealed as `evalsuite run` seals agents (bwrap where it works) unless --sandbox none.
"""
from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import benchlib

from evalsuite.core.sandbox import Sandbox, sandbox_for
from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.domains.ref import WorldRef
from evalsuite.trials.agents.mcp_agent import MCPAgent
from evalsuite.trials.trial import arun_trial

AGENT = Path(__file__).resolve().parents[1] / "tests" / "trials" / "agents" / "peeking_agent.py"
LIMITS = (1, 8)


def rounds(agent: MCPAgent, ref: WorldRef, tasks, limit: int) -> tuple[float, float]:
    """(cold, warm) wall seconds of two rounds of the tasks' trials on one loop, `limit` in flight at a time."""
    async def one_round() -> float:
        gate, start = asyncio.Semaphore(limit), time.perf_counter()

        async def one(i: int, task):
            async with gate:
                return await arun_trial(ref.open(), task, agent, i)

        results = await asyncio.gather(*(one(i, t) for i, t in enumerate(tasks)))
        bad = [r for r in results if r.outcome != "pass"]
        if bad:
            raise RuntimeError(f"{len(bad)} trials did not pass; first: {bad[0].outcome} {bad[0].error}")
        return time.perf_counter() - start

    async def both() -> tuple[float, float]:
        try:
            return await one_round(), await one_round()
        finally:
            await agent.aclose()

    return asyncio.run(both())


def main() -> None:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--sleep", type=float, default=0.3, help="seconds the agent waits per trial")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sandbox", choices=("auto", "none"), default="auto")
    args = ap.parse_args()
    example = ap_example(Path(tempfile.mkdtemp(prefix="bench-in-flight-")))
    tasks = example.tasks[:args.trials]
    plans = {t.trigger.text: {"calls": [{"tool": c.tool, "arguments": c.arguments} for c in t.solution_calls()],
                              "answer": t.reference_answer} for t in tasks}
    seal = Sandbox("none") if args.sandbox == "none" else sandbox_for()
    res = benchlib.Result("mcp_in_flight", benchlib.command_line())
    res.note(f"{len(tasks)} trials of a persistent agent sleeping {args.sleep:g} s per trial, sandbox "
             f"{seal.mechanism}; cold: the pool's processes start during the round; warm: the second round")
    for limit in LIMITS:
        cold, warm = [], []
        for _ in range(args.repeats):
            agent = MCPAgent("mcp:bench", [sys.executable, str(AGENT), "--serve"], boundary="persistent",
                             sandbox=seal, env={"EVALSUITE_AGENT_PLANS": json.dumps(plans),
                                                "EVALSUITE_AGENT_SLEEP": str(args.sleep)})
            try:
                first, second = rounds(agent, WorldRef.from_world(example.world), tasks, limit)
            finally:
                agent.close()
            cold.append(first)
            warm.append(second)
        res.add(f"{len(tasks)} trials, {limit} in flight, cold pool", cold, "s")
        res.add(f"{len(tasks)} trials, {limit} in flight, warm pool", warm, "s")
    res.write(args.json)


if __name__ == "__main__":
    main()
