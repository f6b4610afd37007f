"""Where an openai agent's requests go: the endpoint settings, set around a trial run (the Dagster resource
`ModelEndpoint` does) and handed to a trial pool's workers. Apart from the agent so that the harness and the
pool can carry the settings without importing the openai SDK."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from evalsuite.core.identity import AgentConfig, refuse_credentials

MODEL_KINDS = ("openai", "model_workflow")  # the agent kinds whose requests go to an endpoint


@dataclass(frozen=True)
class Endpoint:
    """Where an openai agent's requests go and how hard they are retried. None: the SDK's own environment
    variables (OPENAI_BASE_URL, OPENAI_API_KEY)."""

    api_key: str | None = None
    base_url: str | None = None
    max_retries: int = 4  # backoff 0.5 s doubling up to 8 s, or what the endpoint's Retry-After says
    timeout: float = 120.0  # seconds per request
    max_connections: int = 32  # requests in flight to this endpoint at once, per process
    requests_per_minute: float | None = None  # a token bucket each request takes one token from
    tokens_per_minute: float | None = None  # a token bucket each request takes its tokens from
    cache_dir: str | None = None  # the response cache (`--cache`): None sends every request to the endpoint

    def __repr__(self) -> str:  # a settings object printed in a log or a traceback never shows the key
        return (f"Endpoint(base_url={self.base_url!r}, max_retries={self.max_retries}, timeout={self.timeout}, "
                f"max_connections={self.max_connections}, requests_per_minute={self.requests_per_minute}, "
                f"tokens_per_minute={self.tokens_per_minute}, cache_dir={self.cache_dir!r})")


_ENDPOINT: ContextVar[Endpoint] = ContextVar("evalsuite_openai_endpoint", default=Endpoint())


@contextmanager
def endpoint(settings: Endpoint) -> Iterator[None]:
    """Agents built inside this block (in this thread) use these endpoint settings; a trial pool started inside
    it hands them to its workers (evalsuite.trials.pool)."""
    token = _ENDPOINT.set(settings)
    try:
        yield
    finally:
        _ENDPOINT.reset(token)


def current_endpoint() -> Endpoint:
    return _ENDPOINT.get()


def adopt_endpoint(settings: Endpoint) -> None:
    """A pool worker's: every agent this process builds from now on uses its parent's endpoint settings."""
    _ENDPOINT.set(settings)


def pinned(config: AgentConfig, settings: Endpoint | None = None) -> AgentConfig:
    """The config with the endpoint its model's requests go to written in: its own base_url, else the endpoint
    settings' (the current ones when not given), else OPENAI_BASE_URL, as model_client.resolve picks it (none of
    them set: the SDK's default, left None). The run identity then says which endpoint answered, so a run resumed
    against another endpoint is another run, and its folder refuses it."""
    if config.kind not in MODEL_KINDS or config.base_url:
        return config
    url = (settings or current_endpoint()).base_url or os.environ.get("OPENAI_BASE_URL")
    if url:
        refuse_credentials(url, f"agent {config.name!r}: the model endpoint")
    return config.model_copy(update={"base_url": url}) if url else config
