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
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evalsuite.core.hashing import json_sha256
from evalsuite.core.records import Simulator


class AgentConfig(BaseModel):
    """One agent under test as the spec names it; every field reaches the run identity and each trial record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Literal["baseline", "openai", "mcp"] = "baseline"
    model: str | None = None
    base_url: str | None = None
    command: list[str] | None = None
    temperature: float = 0.0


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
