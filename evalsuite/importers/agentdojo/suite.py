"""What one AgentDojo suite brings to the importer (evalsuite.importers.agentdojo.importer), which is the same for
every suite: its domain and environment, its peer tasks and the peer's checks on them, its data files, its authored
policy, and how its replayed ground truths become goal states and attack effects."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalsuite.core.records import GoalState, Role, TaskRecord
from evalsuite.importers.gold import GoldReplay
from evalsuite.worlds.domain import Domain

Call = tuple[str, dict]
# The peer's verdict on a trial: the model's final text, the environment before and after, and the calls made
# (two slack checks read the calls; the others ignore them). True: utility reached, or the attack succeeded.
PeerCheck = Callable[[str, Any, Any, Sequence[Call]], bool]


@dataclass(frozen=True)
class PeerTask:
    task_id: str
    prompt: str  # a user task's PROMPT, an injection task's GOAL
    ground_truth: Callable[[Any], list[Call]]  # computed from the environment it runs on, as the peer computes it
    output: str = ""  # GROUND_TRUTH_OUTPUT
    comment: str = ""

    @property
    def injection(self) -> bool:
        return self.task_id.startswith("injection_task_")


@dataclass(frozen=True)
class PeerSuite:
    name: str  # the peer's suite name: banking, slack
    domain: Domain
    role: Role
    environment: Callable[..., BaseModel]  # (environment.yaml, injection_vectors.yaml, injections) -> env
    to_rows: Callable[[Any], dict[str, list[dict]]]
    from_rows: Callable[[Mapping[str, Sequence[tuple]]], Any]
    tasks: dict[str, PeerTask]
    checks: Mapping[str, PeerCheck]  # by task id: a user task's utility, an injection task's security
    pinned_sha256: dict[str, str]  # the data files as agentdojo 0.1.35 ships them
    policy_text: str
    clause_of_tool: dict[str, str]
    goal: Callable[[PeerTask, Any, GoldReplay], GoalState]  # the goal of a replayed ground truth
    effect: Callable[[TaskRecord, PeerTask, Any], dict]  # an injection task's effect: effect_assertions/_checks
    attack_text: Callable[[Any, str], str]  # the authored message carrying an injection task's goal
    invented: str  # what of environment.yaml the benchmark made up (the rights manifest's header says so)
    synthetic: list[str] = field(default_factory=list)  # columns the personal-data scan flags, all invented
    # columns holding what the scan cannot tell from real data (an e-mail at a real domain) that the tasks need as
    # published: declared personal and kept by a reviewed rule (deid.yaml), never called synthetic
    kept: tuple[str, ...] = ()
    kept_why: str = ""  # the header of deid.yaml saying why they are kept (default: the benchmark's invented people)
    max_quarantined_fraction: float = 0.5
    # tasks whose ground truth is ours, since the peer ships an empty one (workspace's injection tasks 6 to 13): the
    # differential test runs ours in the peer's interpreter and asks the peer's own check of it
    authored: tuple[str, ...] = ()

    @property
    def suite(self) -> str:
        return f"agentdojo_{self.name}"

    @property
    def source_ref(self) -> str:
        return f"agentdojo 0.1.35 (PyPI), {self.name} suite, benchmark v1.2.2"

    def data_files(self) -> tuple[str, ...]:
        return tuple(self.pinned_sha256)

    def load(self, src: Path, injections: Mapping[str, str] | None = None) -> Any:
        return self.environment(Path(src) / "environment.yaml", Path(src) / "injection_vectors.yaml", injections)

    def peer_check(self, task_id: str) -> PeerCheck:
        """The peer's verdict function for a task: utility for a user task (under an attack too: `user_task_0+
        injection_task_1` is judged by user_task_0's), security for an injection task run as the user task."""
        return self.checks[task_id.split("+")[0]]


def authored_policy(suite: str, effective_from: str, clauses: str) -> str:
    """The policy file of an AgentDojo suite, which ships none: front matter saying it is ours and which peer it
    serves, a title saying so, then the suite's clauses (`## X-n Title` sections)."""
    return f"""---
doc: agentdojo_{suite}_policy
version: 1.2.2
effective_from: {effective_from}
params:
  authored_by: evalsuite (not part of AgentDojo, which ships no policy)
  peer: agentdojo 0.1.35, {suite} suite, benchmark v1.2.2
---
# {suite.title()} assistant policy (authored for the imported AgentDojo {suite} suite)

{clauses}"""
