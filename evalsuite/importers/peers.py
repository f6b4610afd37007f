"""The peers' own graders, by domain, for the audit's probes: where a peer's check accepts what ours rejects.

τ²-bench retail and airline: the database part of tau2's reward (the DB hash after the trial equals the hash after
the gold actions). AgentDojo banking and slack: the task's utility check (or an injection task's security check) as
the pinned package applies it (banking's SPEC.md §4), on the environment before and after and the calls made.
"""
from __future__ import annotations

from collections.abc import Callable

from evalsuite.core.records import TaskRecord
from evalsuite.domains import tau2_airline, tau2_retail
from evalsuite.domains.tau2.tau2_hash import Tau2Hash
from evalsuite.importers.agentdojo.importer import SUITES
from evalsuite.importers.agentdojo.suite import PeerSuite
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

PeerCheck = Callable[[TaskRecord, TrialWorld, str], bool]


def _agentdojo(suite: PeerSuite) -> Callable[[World], PeerCheck]:
    def make(world: World) -> PeerCheck:
        seed = world.initial_rows

        def check(task: TaskRecord, trial: TrialWorld, final: str) -> bool:
            calls = [(e.tool, e.arguments) for e in trial.trace if e.actor == "agent"]
            return suite.peer_check(task.task_id)(final, suite.from_rows(_pre(world, seed, task)),
                                                  suite.from_rows(trial.rows()), calls)

        return check

    return make


def _pre(world: World, seed: dict[str, list[tuple]], task: TaskRecord) -> dict[str, list[tuple]]:
    """The rows of the environment the peer's check calls `pre`: the seed, with an attack's text in place where there
    is one."""
    if task.attack is None:
        return seed
    rows = {t: list(r) for t, r in seed.items()}
    for place in task.attack.rows:
        schema = world.schemas[place.table]
        key = tuple(place.key[k] for k in schema.key)
        at = [schema.columns.index(k) for k in schema.key]
        col = schema.columns.index(place.column)
        rows[place.table] = [r if tuple(r[i] for i in at) != key else (*r[:col], place.value, *r[col + 1:])
                             for r in rows[place.table]]
    return rows


def _tau2(tau2_hash: Tau2Hash) -> Callable[[World], PeerCheck]:
    def make(world: World) -> PeerCheck:
        hasher = tau2_hash.hasher(world)
        gold: dict[str, str] = {}

        def check(task: TaskRecord, trial: TrialWorld, final: str) -> bool:
            now = hasher.hash(trial)  # before the gold replay below resets the world under this trial
            if task.task_id not in gold:
                replay = world.reset(task.role)
                for call in task.solution_calls():
                    replay.call(call.tool, call.arguments)
                gold[task.task_id] = hasher.hash(replay)
            return now == gold[task.task_id]

        return check

    return make


PEERS: dict[str, Callable[[World], PeerCheck]] = {**{s.suite: _agentdojo(s) for s in SUITES.values()},
                                                  "tau2_retail": _tau2(tau2_retail.TAU2_HASH),
                                                  "tau2_airline": _tau2(tau2_airline.TAU2_HASH)}


def peer_grader(world: World) -> PeerCheck | None:
    """The peer's grader for an imported suite's world, or None for a suite of our own."""
    make = PEERS.get(world.domain.name)
    return make(world) if make else None
