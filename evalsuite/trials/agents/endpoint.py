"""Where an openai agent's requests go: the endpoint settings, set around a trial run (the Dagster resource
`ModelEndpoint` does) and handed to a trial pool's workers. Apart from the agent so that the harness and the
pool can carry the settings without importing the openai SDK."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


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
