"""Two trial worlds in step: a dual-control domain's link step, and calls made on them by no participant.

A dual-control domain keeps the agent's world and the user's in step with its LINK (τ²-bench telecom's sync of
the line's state onto the phone), run after every successful call on either world once they are connected, and
after each set-up call (a task's initialization, a composition's set-up steps) made with `apply_calls`: those
run untraced, a domain helper or a tool by name, on the side the call's actor names.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from evalsuite.core.records import ToolCall
from evalsuite.worlds.domain import ToolContext
from evalsuite.worlds.trial_world import TrialWorld

Link = Callable[[ToolContext, ToolContext], None]  # (the agent's world, the user's world)


class InitializationError(RuntimeError):
    """A set-up call failed: the task cannot start (an infrastructure error, never the agent's)."""


def connect(agent: TrialWorld, device: TrialWorld | None, link: Link | None) -> None:
    """Run `link` after every successful call on either world (nothing without both worlds and a link)."""
    if device is None or link is None:
        return
    step = lambda: run_link(agent, device, link)  # noqa: E731
    agent.after_ok = device.after_ok = step


def run_link(agent: TrialWorld, device: TrialWorld, link: Link) -> None:
    """One link step, committed on both worlds."""
    a, u = context(agent), context(device)
    with a.conn.begin(), u.conn.begin():
        link(a, u)


def apply_calls(calls: Sequence[ToolCall], agent: TrialWorld, device: TrialWorld | None) -> None:
    """Run set-up calls in order, each on its side's world (actor "user": the user's) and followed by the link
    step; no participant made them, so nothing is traced. The first failure raises InitializationError naming it."""
    for i, call in enumerate(calls):
        world = device if call.actor == "user" else agent
        if world is None:
            raise InitializationError(f"initialization.calls.{i}: {call.tool} is the user's, but the domain "
                                      f"{agent.domain.name} has no user-side world")
        _run(world, call, i)
        if world.after_ok is not None:
            world.after_ok()


def _run(world: TrialWorld, call: ToolCall, i: int) -> None:
    spec = world.domain.helpers.get(call.tool) or world.domain.tools.get(call.tool)
    if spec is None:
        raise InitializationError(f"initialization.calls.{i}: {call.tool!r} is no tool or helper of domain "
                                  f"{world.domain.name}")
    ctx = context(world)
    try:
        with ctx.conn.begin():
            spec.fn(ctx, spec.args(**call.arguments)) if spec.args else spec.fn(ctx, **call.arguments)
    except Exception as exc:
        raise InitializationError(f"initialization.calls.{i}: {call.tool} failed: {exc}") from exc


def context(trial: TrialWorld) -> ToolContext:
    """A tool context on the trial's world outside any call (set-up and link steps)."""
    return ToolContext(conn=trial.world.trial_connection, now=trial.clock, policy_text=trial.policy_text)
