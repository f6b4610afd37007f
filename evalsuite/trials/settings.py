"""How a run's model and external agents run: trials in flight, the run cap, the response cache, progress reports.

One object the CLI, the Python API and the Dagster trials asset fill in and releases.runs.run_release reads;
none of it is part of a trial's identity except the cache (RunIdentity.response_cache), because concurrency,
a cap and a progress line change how fast a run goes and how far, never what a trial records.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evalsuite.core.home import private_home
from evalsuite.core.identity import AgentConfig, TrialLimits
from evalsuite.trials.agents.endpoint import current_endpoint, endpoint
from evalsuite.trials.progress import Report
from evalsuite.trials.spend import RunCap

CACHE_FOLDER = ("cache", "responses")  # below the evalsuite home


@dataclass(frozen=True)
class EngineSettings:
    """max_in_flight: trials at once per I/O-bound agent (None: the agent's default, 32 for a model agent).
    cap: stop starting trials once the run has spent this much. cache: answer repeated model requests from the
    response cache in the evalsuite home (development only: such a run's identity says so). report: called
    with the progress line every few seconds."""

    max_in_flight: int | None = None
    cap: RunCap | None = None
    cache: bool = False
    report: Report | None = None
    home: Path | None = None
    # the endpoint's controls (evalsuite.trials.agents.endpoint.Endpoint); None keeps the current setting
    max_connections: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    @contextmanager
    def endpoint(self) -> Iterator[None]:
        """The endpoint settings agents are built under: the current ones with these controls, and the response
        cache (in the evalsuite home) when asked."""
        given = {"max_connections": self.max_connections, "requests_per_minute": self.requests_per_minute,
                 "tokens_per_minute": self.tokens_per_minute}
        changes = {k: v for k, v in given.items() if v is not None}
        if self.cache:
            folder = private_home(self.home).joinpath(*CACHE_FOLDER)
            folder.mkdir(parents=True, exist_ok=True)
            changes["cache_dir"] = str(folder)
        with endpoint(dataclasses.replace(current_endpoint(), **changes)):
            yield


def with_limits(agents: Sequence[str | AgentConfig], limits: TrialLimits | None) -> list[str | AgentConfig]:
    """The agents, those that spend on a model or run as programs (openai, mcp, model_workflow) with these per-trial
    limits;
    baselines spend nothing and stay as named."""
    if limits is None:
        return list(agents)
    configs = [AgentConfig.parse(a) for a in agents]
    return [c.model_copy(update={"limits": limits}) if c.kind in ("openai", "mcp", "model_workflow") else a
            for a, c in zip(agents, configs)]


def engine_options(agents: Sequence[str], *, max_in_flight: int | None = None, max_connections: int | None = None,
                   rpm: float | None = None, tpm: float | None = None, max_cost: float | None = None,
                   max_tokens: int | None = None, trial_seconds: float | None = None, trial_calls: int | None = None,
                   trial_tokens: int | None = None, trial_cost: float | None = None, cache: bool = False,
                   ) -> tuple[list[str | AgentConfig], EngineSettings]:
    """`evalsuite run`'s model options as the agents (with their per-trial limits) and the engine settings."""
    given = {"seconds": trial_seconds, "model_calls": trial_calls, "tokens": trial_tokens, "cost": trial_cost}
    limits = TrialLimits(**given) if any(v is not None for v in given.values()) else None
    cap = RunCap(cost=max_cost, tokens=max_tokens) if max_cost is not None or max_tokens is not None else None
    engine = EngineSettings(max_in_flight=max_in_flight, cap=cap, cache=cache, max_connections=max_connections,
                            requests_per_minute=rpm, tokens_per_minute=tpm)
    return with_limits(agents, limits), engine
