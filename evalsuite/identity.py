"""What a trial is tied to besides its task: the world it ran in and the run identity.

A score is only comparable to another score run against the same suite
version, task set, seed state, environment image, tool schemas, agent config
and simulator. All of it is stamped on every trial record, so a stored trace
says on its own what it measured, and a resumed run can refuse to mix trials
of different identities into one score.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from evalsuite.hashing import json_sha256
from evalsuite.records import Simulator
from evalsuite.spec import AgentConfig

if TYPE_CHECKING:
    from evalsuite.release import Release
    from evalsuite.world.world import World


class WorldRef(BaseModel):
    """Enough to reopen a world in another process: domain name, SQLite path, recorded seed hash."""

    model_config = ConfigDict(frozen=True)

    domain: str
    path: str
    seed_sha256: str

    @classmethod
    def from_release(cls, release: Release) -> WorldRef:
        m = release.manifest
        return cls(domain=m.domain, path=str((release.path / "world.sqlite").resolve()), seed_sha256=m.seed_sha256)

    @classmethod
    def from_world(cls, world: World) -> WorldRef:
        return cls(domain=world.domain.name, path=str(Path(world.path).resolve()), seed_sha256=world.seed_sha256)

    def open(self) -> World:
        from evalsuite.domains import get_domain
        from evalsuite.world.world import World

        return World(get_domain(self.domain), self.path, seed_sha256=self.seed_sha256)


class SuiteVersion(BaseModel):
    """The version fields every trial and every score is tied to (one definition, reused)."""

    suite: str
    suite_version: str
    task_set_sha256: str
    seed_sha256: str
    environment_image: str
    tool_schemas_sha256: str


class RunIdentity(SuiteVersion):
    """Everything that defines a trial besides the task and the trial index."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    simulator: Simulator | None = None
    agent_configs: dict[str, AgentConfig] = {}  # by agent name; a name without one is a built-in baseline

    @classmethod
    def from_release(cls, release: Release, agent_configs: dict[str, AgentConfig] | None = None) -> RunIdentity:
        m = release.manifest
        return cls(suite=m.suite, suite_version=m.version, task_set_sha256=m.task_set_sha256, seed_sha256=m.seed_sha256,
                   environment_image=m.environment_image, tool_schemas_sha256=m.tool_schemas_sha256,
                   simulator=m.simulator, agent_configs=agent_configs or {})

    def agent_config(self, name: str) -> AgentConfig:
        return self.agent_configs.get(name) or AgentConfig(name=name)

    def fields(self, agent: str) -> dict:
        """The flat identity fields stamped on one agent's trial records."""
        body = self.model_dump(mode="json", exclude={"agent_configs"})
        return {**body, "agent_config": self.agent_config(agent).model_dump(mode="json")}


def identity_sha256(fields: dict, run_seed: int) -> str:
    """One hash of a trial's identity fields and the run seed: resume compares these, nothing looser."""
    return json_sha256({**fields, "run_seed": run_seed})


def trial_seed(run_seed: int, task_id: str, agent: str, index: int) -> int:
    """A per-trial seed that depends only on the job, never on which worker ran it or when.

    60 bits, so it fits a signed 64-bit Parquet column.
    """
    digest = hashlib.sha256(json.dumps([run_seed, task_id, agent, index]).encode()).hexdigest()
    return int(digest[:15], 16)
