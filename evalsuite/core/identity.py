"""What a trial is tied to besides its task: the run identity and the config of each agent under test.

A score is only comparable to another score run against the same suite
version, task set, seed state, environment image, tool schemas, agent config
and simulator. All of it is stamped on every trial record, so a stored trace
says on its own what it measured, and a resumed run can refuse to mix trials
of different identities into one score.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalsuite.core.hashing import json_sha256
from evalsuite.core.records import Simulator

SANDBOX_VAR = "EVALSUITE_AGENT_SANDBOX"  # how an external agent is sealed: auto (default), bwrap, uid or none
# how an mcp agent meets its trials: process, persistent or zygote (default_boundary says which when it is unset)
BOUNDARY_VAR = "EVALSUITE_MCP_BOUNDARY"


class TrialLimits(BaseModel):
    """What one trial of an agent may spend before it ends as budget_exhausted (its effects still graded): wall
    seconds, model calls, tokens (in + out) and cost (priced with the run's price table, evalsuite.scoring.cost).
    Part of the agent's config, so of its identity: a capped trial is another measurement than an uncapped one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seconds: float | None = Field(None, gt=0)
    model_calls: int | None = Field(None, ge=1)
    tokens: int | None = Field(None, ge=1)
    cost: float | None = Field(None, gt=0)


# The built-in agents a bare name stands for (trials.agents.baselines.BASELINES builds them; a test keeps the two in
# step): a spec naming another bare name is refused when it is read, not when its trials start.
BASELINE_AGENTS = frozenset({"reference", "noop", "adversary", "injected", "soloist", "workflow"})


class AgentConfig(BaseModel):
    """One agent under test as the spec names it; every field reaches the run identity and each trial record.

    The name is the key of the agent's trial records and scores; the other fields say what ran under it, so
    two configs of one name get different identities and are never pooled into one score.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    # human: a person at `evalsuite play`; recorded: trials that ran elsewhere, imported and regraded
    # (`evalsuite import-run`), never run here; model_workflow: fixed reads and actions, one model call for the
    # decision; python: a team's own agent, given to evalsuite.run as an object or built by an agent factory
    kind: Literal["baseline", "openai", "mcp", "human", "recorded", "model_workflow", "python"] = "baseline"
    model: str | None = None
    base_url: str | None = None  # openai: None falls back to OPENAI_BASE_URL, as the openai SDK does
    command: list[str] | None = None
    temperature: float = 0.0
    # mcp: "sealed" runs the program inside the boundary of evalsuite.core.sandbox, "none" (the opt-out
    # EVALSUITE_AGENT_SANDBOX=none) as the harness's own user; a score of an unsealed run says so
    sandbox: Literal["sealed", "none"] | None = None
    # mcp: "process" starts the command per trial; "persistent" starts it once per worker and hands it one trial
    # at a time (evalsuite.trials.agents.mcp_agent); "zygote" runs a Python script that way, forked per trial.
    # An mcp config that names none gets default_boundary's. Left out of the dump when None, so the identities of
    # other kinds stay as they were.
    boundary: Literal["process", "persistent", "zygote"] | None = Field(None, exclude_if=lambda v: v is None)
    # recorded: the sha256 of the file the trials were imported from; left out of the dump when None, as boundary is
    recording: str | None = Field(None, exclude_if=lambda v: v is None)
    # per-trial spending limits (TrialLimits); left out of the dump when None, as boundary is
    limits: TrialLimits | None = Field(None, exclude_if=lambda v: v is None)
    # trials of this agent in flight at once on the trial engine (evalsuite.trials.engine), as a suite spec's
    # agent entry sets it; never in the dump: how many run at once changes how fast a run goes, not what it records
    max_in_flight: int | None = Field(None, ge=1, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _seal_by_default(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") == "mcp" and data.get("sandbox") is None:
            opted_out = os.environ.get(SANDBOX_VAR, "").strip() == "none"
            data = {**data, "sandbox": "none" if opted_out else "sealed"}
        if isinstance(data, dict) and data.get("kind") == "mcp" and data.get("boundary") is None:
            data = {**data, "boundary": default_boundary(data.get("command") or [])}
        return data

    @model_validator(mode="after")
    def _complete(self) -> AgentConfig:
        if self.kind in ("openai", "model_workflow") and not self.model:
            raise ValueError(f"agent {self.name!r}: an {self.kind} agent needs a model")
        if self.kind == "mcp" and not self.command:
            raise ValueError(f"agent {self.name!r}: an mcp agent needs a command")
        if self.kind != "mcp" and self.sandbox is not None:
            raise ValueError(f"agent {self.name!r}: sandbox applies only to an mcp agent (its own process)")
        if (self.kind == "recorded") != (self.recording is not None):
            raise ValueError(f"agent {self.name!r}: a recording names its file's sha256, and only a recording does")
        if self.kind != "mcp" and self.boundary is not None:
            raise ValueError(f"agent {self.name!r}: boundary applies only to an mcp agent (its own process)")
        if self.base_url is not None:
            refuse_credentials(self.base_url, f"agent {self.name!r}: base_url")
        return self

    @classmethod
    def parse(cls, agent: str | AgentConfig) -> AgentConfig:
        """What a user names, as a config: `openai:MODEL`, `workflow:MODEL` (the non-adaptive model workflow),
        `mcp:COMMAND` (split as a shell would, its relative
        file names made absolute: see from_here) or a baseline's name (reference, noop, adversary; make_agent
        rejects unknown ones); a config passes through."""
        if isinstance(agent, AgentConfig):
            return agent
        kind, sep, rest = agent.partition(":")
        if sep and kind == "openai":
            return cls(name=agent, kind="openai", model=rest.strip())
        if sep and kind == "workflow":
            return cls(name=agent, kind="model_workflow", model=rest.strip())
        if sep and kind == "mcp":
            default_boundary()  # a bad EVALSUITE_MCP_BOUNDARY is one line here, not a validation report
            return cls(name=agent, kind="mcp", command=from_here(shlex.split(rest)))
        return cls(name=agent)


class EndpointError(ValueError):
    """An endpoint URL that must not be recorded."""


def refuse_credentials(url: str, where: str) -> None:
    """An endpoint URL is written into the run identity, run.json and the scorecard: one holding a user name,
    password or key would publish it, so it is refused; the key belongs in OPENAI_API_KEY."""
    parts = urlsplit(url)
    if parts.username or parts.password or any(k.lower() in _SECRET_PARAMS for k, _ in parse_qsl(parts.query)):
        raise EndpointError(f"{where}: the endpoint URL holds credentials, which would be written into the run's "
                         "records; give the key in OPENAI_API_KEY instead")


_SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "api-key", "token", "access_token", "password", "secret"})


def from_here(command: list[str]) -> list[str]:
    """command with each word that names an existing file relative to the folder evalsuite was started in made
    absolute (not resolved: a virtualenv's python must keep its path). The agent starts in a private home of its
    own (evalsuite.core.sandbox), where `examples/agent.py` would name nothing. The program word counts only
    with a slash in it: a bare name is looked up on PATH, as a shell does."""
    def here(i: int, word: str) -> bool:
        return not os.path.isabs(word) and (i > 0 or os.sep in word) and os.path.isfile(word)
    return [os.path.abspath(w) if here(i, w) else w for i, w in enumerate(command)]


def default_boundary(command: Sequence[str] = ()) -> str:
    """The boundary of an mcp config that names none: EVALSUITE_MCP_BOUNDARY; when that is unset, zygote for a Python
    script (its interpreter start and imports, over a second with the mcp SDK, are paid once per worker instead of
    every trial) and process for any other command."""
    boundary = os.environ.get(BOUNDARY_VAR, "").strip() or ("zygote" if is_python_script(command) else "process")
    if boundary not in ("process", "persistent", "zygote"):
        raise ValueError(f"{BOUNDARY_VAR}={boundary!r}: expected one of process, persistent, zygote")
    return boundary


def is_python_script(command: Sequence[str]) -> bool:
    """`python SCRIPT.py ARGS...` (any pythonX.Y, by path or on PATH): what the zygote boundary can run."""
    return len(command) >= 2 and re.fullmatch(r"python[\d.]*", os.path.basename(command[0])) is not None \
        and command[1].endswith(".py")


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
    agent_configs: dict[str, AgentConfig] = {}  # by agent name; a name without one is parsed (AgentConfig.parse)
    # True when model responses may come from the response cache (`--cache`): such a run is never a fresh
    # measurement, and its identity says so. Left out when False, so other identities stay as they were.
    response_cache: bool = Field(False, exclude_if=lambda v: not v)

    def agent_config(self, name: str) -> AgentConfig:
        return self.agent_configs.get(name) or AgentConfig.parse(name)

    def with_agents(self, agents: Iterable[str | AgentConfig]) -> RunIdentity:
        """This identity holding the configs of these agents too (see agent_configs)."""
        return self.model_copy(update={"agent_configs": agent_configs(agents, self.agent_configs)})

    def fields(self, agent: str) -> dict:
        """The flat identity fields stamped on one agent's trial records."""
        body = self.model_dump(mode="json", exclude={"agent_configs"})
        return {**body, "agent_config": self.agent_config(agent).model_dump(mode="json")}


def agent_configs(agents: Iterable[str | AgentConfig], known: Mapping[str, AgentConfig] | None = None
                  ) -> dict[str, AgentConfig]:
    """known plus the configs of agents, by name; a plain name already known means its known config.

    One name may not name two configs: their trials would be pooled into one score.
    """
    configs = dict(known or {})
    for agent in agents:
        config = configs.get(agent) if isinstance(agent, str) else None
        config = config or AgentConfig.parse(agent)
        if configs.setdefault(config.name, config) != config:
            raise ValueError(f"agent {config.name!r} is named by two configs: {configs[config.name].model_dump()} "
                             f"and {config.model_dump()}; give each config its own name")
    return configs


def identity_sha256(fields: dict, run_seed: int) -> str:
    """One hash of a trial's identity fields and the run seed: resume compares these, nothing looser."""
    return json_sha256({**fields, "run_seed": run_seed})


def trial_seed(run_seed: int, task_id: str, agent: str, index: int) -> int:
    """A per-trial seed that depends only on the job, never on which worker ran it or when.

    60 bits, so it fits a signed 64-bit Parquet column.
    """
    digest = hashlib.sha256(json.dumps([run_seed, task_id, agent, index]).encode()).hexdigest()
    return int(digest[:15], 16)
