"""Many trials of one external agent in flight at once on one event loop (MCPAgent.arun, as the trial engine runs
them): each on its own world opened from the same WorldRef, with its own URL, session and agent process from a pool
of at most as many processes as trials in flight. The outcomes are those of one trial at a time, and no trial's
writes reach another trial's world or grade."""
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from evalsuite.core import sandbox
from evalsuite.core.sandbox import Sandbox
from evalsuite.domains.ref import WorldRef
from evalsuite.trials.agents.mcp_agent import MCPAgent
from evalsuite.trials.trial import arun_trial, run_trial
from evalsuite.worlds.trial_world import TrialWorld

PEEKER = Path(__file__).parent / "peeking_agent.py"
# Sealed where bubblewrap works (the boundary trials run in); where it does not, unsealed, as the other MCP tests
# of harness properties run.
SANDBOX = sandbox.sandbox_for() if sandbox.bwrap_works() else Sandbox("none")
IN_FLIGHT = 8


def _invoice(task) -> str:
    return task.trigger.text.split()[0]  # "INV-55101 blocked: ..."


def _agent(tasks, boundary: str, **env: str) -> MCPAgent:
    """The peeking agent following each task's reference plan, then reading every task's invoice."""
    plans = {t.trigger.text: {"calls": [{"tool": c.tool, "arguments": c.arguments} for c in t.solution_calls()],
                              "answer": t.reference_answer} for t in tasks}
    command = [sys.executable, str(PEEKER), *(["--serve"] if boundary == "persistent" else [])]
    return MCPAgent(f"mcp:peek-{boundary}", command, boundary=boundary, sandbox=SANDBOX,
                    env={"EVALSUITE_AGENT_PLANS": json.dumps(plans),
                         "EVALSUITE_AGENT_PEEK": json.dumps([_invoice(t) for t in tasks]), **env})


def _count_launches(agent: MCPAgent) -> list[int]:
    """The pid of every long-lived agent process the agent starts, in order."""
    launched, launch = [], agent._launch_worker

    async def counted():
        worker = await launch()
        launched.append(worker.proc.pid)
        return worker

    agent._launch_worker = counted
    return launched


def _in_flight(agent: MCPAgent, ref: WorldRef, tasks, limit: int = IN_FLIGHT, rounds: int = 1,
               between=lambda: None) -> list[list]:
    """Rounds of the tasks' trials on one event loop, `limit` in flight at a time (as the trial engine keeps them),
    each on its own world; the agent's pool on that loop is closed before the loop ends, as the engine does."""
    async def one_round() -> list:
        gate = asyncio.Semaphore(limit)

        async def one(i: int, task):
            async with gate:
                return await arun_trial(ref.open(), task, agent, i)

        return await asyncio.gather(*(one(i, t) for i, t in enumerate(tasks)))

    async def trials() -> list[list]:
        done = []
        try:
            for _ in range(rounds):
                between()
                done.append(await one_round())
        finally:
            await agent.aclose()
        return done

    return asyncio.run(trials())


@pytest.fixture
def calls(monkeypatch) -> list[tuple[float, int, str, str]]:
    """Every tool call on any trial's world as (time, world, tool, invoice), to see the order across trials."""
    seen: list[tuple[float, int, str, str]] = []
    call = TrialWorld.call

    def spied(self, tool, arguments=None, **kw):
        seen.append((time.monotonic(), id(self), tool, (arguments or {}).get("invoice_id", "")))
        return call(self, tool, arguments, **kw)

    monkeypatch.setattr(TrialWorld, "call", spied)
    return seen


def _sequential(ap, tasks, boundary: str) -> list:
    agent = _agent(tasks, boundary)
    try:
        return [run_trial(ap.world, t, agent, i) for i, t in enumerate(tasks)]
    finally:
        agent.close()


def _summary(results) -> list:
    return [(r.task_id, r.outcome, [(c.name, c.passed) for c in r.verdict.checks]) for r in results]


@pytest.mark.parametrize("boundary", ["persistent", "zygote"])
def test_trials_in_flight_at_once_match_one_at_a_time_and_never_see_each_others_writes(ap, boundary, calls):
    tasks = ap.tasks[:IN_FLIGHT]
    alone = _sequential(ap, tasks, boundary)
    agent = _agent(tasks, boundary, EVALSUITE_AGENT_SLEEP="1.0")
    launched = _count_launches(agent)
    ref = WorldRef.from_world(ap.world)
    starts = []

    def between() -> None:
        starts.append(len(launched))
        del calls[:]

    try:  # a cold pool, whose processes start as the trials come, then a warm one: they overlap from the first call
        _, together = _in_flight(agent, ref, tasks, rounds=2, between=between)
    finally:
        agent.close()
    assert [r.outcome for r in alone] == ["pass"] * IN_FLIGHT, alone[0].error
    assert _summary(together) == _summary(alone), [r.error for r in together]
    assert starts[1] == len(launched) <= IN_FLIGHT  # the second round reused the first round's processes
    # Each trial read every other trial's invoice, after that trial had written it, and saw it untouched.
    pristine = {_invoice(t): r.trace[0].result["status"] for t, r in zip(tasks, alone)}
    for task, result in zip(tasks, together):
        others = [e for e in result.trace if e.tool == "get_invoice" and e.arguments["invoice_id"] != _invoice(task)]
        assert {e.arguments["invoice_id"]: e.result["status"] for e in others} == \
            {inv: status for inv, status in pristine.items() if inv != _invoice(task)}
    wrote = {inv: (t, w) for t, w, tool, inv in calls if tool in {"hold_invoice", "release_invoice"}}
    peeks = [(t, inv) for t, w, tool, inv in calls if tool == "get_invoice" and inv in wrote and w != wrote[inv][1]]
    assert len(wrote) == IN_FLIGHT and len(peeks) == IN_FLIGHT * (IN_FLIGHT - 1)
    assert all(t > wrote[inv][0] for t, inv in peeks)  # the writes were there to be seen, in their own worlds


def test_a_worker_killed_mid_trial_costs_only_its_trial(ap):
    tasks = ap.tasks[:IN_FLIGHT]
    victim = tasks[3]
    agent = _agent(tasks, "persistent", EVALSUITE_AGENT_DIE=victim.trigger.text)
    try:
        [results] = _in_flight(agent, WorldRef.from_world(ap.world), tasks)
        left = agent._runtime.workers()
    finally:
        agent.close()
    by_task = {r.task_id: r for r in results}
    dead = by_task.pop(victim.task_id)
    # killed by SIGKILL: -9, or 137 from bwrap, whose child it was
    assert dead.outcome == "infra_error" and re.search(r"exited with (-9|137);", dead.error)
    assert [e.tool for e in dead.trace] == [victim.solution_calls()[0].tool]  # what it did before it died
    assert {r.outcome for r in by_task.values()} == {"pass"}, [r.error for r in by_task.values()]
    assert left == []  # aclose stopped the pool; the dead worker was never handed back


def test_closing_after_the_engine_loop_has_ended_stops_its_processes(ap):
    """An engine that ends its loop without aclose(): close() still kills the pool's processes."""
    tasks = ap.tasks[:2]
    agent = _agent(tasks, "persistent")
    launched = _count_launches(agent)
    ref = WorldRef.from_world(ap.world)

    async def trials() -> list:
        return await asyncio.gather(*(arun_trial(ref.open(), t, agent, i) for i, t in enumerate(tasks)))

    results = asyncio.run(trials())
    assert [r.outcome for r in results] == ["pass", "pass"] and len(launched) == 2
    agent.close()
    for pid in launched:
        assert not _alive(pid)


def _alive(pid: int, wait: float = 3.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.05)
    return True
