"""Resources: where a suite's artifacts live (the project home folder), and the model endpoint of openai agents."""
from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from evalsuite.core.home import home_dir
from evalsuite.pipeline.paths import Paths
from evalsuite.sourcing.spec import SuiteSpec
from evalsuite.trials.agents.endpoint import Endpoint


class EvalsuiteHome(dg.ConfigurableResource):
    """The home folder for seeds, tasks, releases and runs; EVALSUITE_HOME (default ./.evalsuite) when unset."""

    home: str = ""

    def root(self) -> Path:
        return home_dir(self.home)

    def paths(self, spec: SuiteSpec) -> Paths:
        return Paths(spec, self.root())


class ModelEndpoint(dg.ConfigurableResource):
    """The OpenAI-compatible endpoint of `openai` agents, configured from environment variables with dg.EnvVar
    (see from_env): Dagster resolves the key in the run process and shows only the variable's name in the UI and
    the run config; the key goes to the SDK client (in the run process, and in the trial pool's workers through
    their start-up arguments) and nowhere else (no metadata, trace, log line or agent config).
    An agent config's own base_url wins over base_url here."""

    api_key: str = ""
    base_url: str = ""
    max_retries: int = 4  # transient errors (connection, 408, 409, 429, 5xx) retried with backoff, Retry-After honoured
    timeout: float = 120.0  # seconds per request
    max_connections: int = 32  # requests in flight to the endpoint at once, per process
    requests_per_minute: float | None = None  # the endpoint's request-rate limit (a token bucket)
    tokens_per_minute: float | None = None  # its token-rate limit

    @classmethod
    def from_env(cls) -> ModelEndpoint:
        """OPENAI_API_KEY and OPENAI_BASE_URL as EnvVars when set where the code location loads (an EnvVar that
        is unset fails every run using the resource, the baselines' included)."""
        env = {"api_key": "OPENAI_API_KEY", "base_url": "OPENAI_BASE_URL"}
        return cls(**{field: dg.EnvVar(var) for field, var in env.items() if os.environ.get(var)})

    def settings(self) -> Endpoint:
        return Endpoint(api_key=self.api_key or None, base_url=self.base_url or None, max_retries=self.max_retries,
                        timeout=self.timeout, max_connections=self.max_connections,
                        requests_per_minute=self.requests_per_minute, tokens_per_minute=self.tokens_per_minute)
