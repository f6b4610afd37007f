"""One client per endpoint per event loop: every trial in flight shares its connection pool and its limits.

A request goes through, in order: the response cache (when the endpoint has a cache_dir), the request-rate
and token-rate buckets (rate_limit.TokenBucket), the connection limit (max_connections requests at once),
then the endpoint under a timeout. Transient failures (408, 409, 429, 5xx, connection errors, timeouts) are
retried here, not by the SDK (its retries are off, so every pause is seen): Retry-After (seconds or an HTTP
date) or retry-after-ms is honoured, else 0.5 s doubling up to 8 s, at most max_retries times. Every pause,
a retry's or a limiter's, is an EndpointWait on the request's ModelCall; an error that outlasts the retries
is raised, and the trial records it as an infra_error with the tokens of the calls before it.

The token-rate charge before a request is an estimate, the length of its JSON body / 4 (about four
characters a token for English and JSON); the difference to what the endpoint reports is settled after.
"""
from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import random
import time
from dataclasses import replace
from typing import Any
from weakref import WeakKeyDictionary

import httpx
import openai
from openai.types.chat import ChatCompletion

from evalsuite.core.records import EndpointWait, ModelCall, Usage
from evalsuite.trials.agents.endpoint import Endpoint
from evalsuite.trials.agents.rate_limit import TokenBucket
from evalsuite.trials.agents.response_cache import ResponseCache, request_sha256

RETRY_STATUSES = {408: "request timeout", 409: "conflict", 429: "rate limited"}
FIRST_BACKOFF, MAX_BACKOFF = 0.5, 8.0
MAX_RETRY_AFTER = 120.0  # a longer Retry-After is not waited out (as the openai SDK does): the error is raised
SHARD_CONNECTIONS = 16  # connections per httpx pool (see ModelClient.__init__)
NOTED = 0.001  # a limiter wait shorter than this is not recorded


def resolve(settings: Endpoint, base_url: str | None = None, api_key: str | None = None) -> Endpoint:
    """The settings with the address and key a request will use: the ones given, else the settings', else
    OPENAI_BASE_URL / OPENAI_API_KEY as the SDK reads them (a local endpoint may need no key)."""
    return replace(settings, base_url=base_url or settings.base_url or os.environ.get("OPENAI_BASE_URL"),
                   api_key=api_key or settings.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed")


_CLIENTS: WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Endpoint, ModelClient]] = WeakKeyDictionary()


def client_for(settings: Endpoint) -> ModelClient:
    """The running loop's client for these (resolved) settings, made on first use."""
    clients = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
    if settings not in clients:
        clients[settings] = ModelClient(settings)
    return clients[settings]


async def close_clients(settings: Endpoint | None = None) -> None:
    """Close the running loop's client for these settings (None: every one) and its connections."""
    clients = _CLIENTS.get(asyncio.get_running_loop(), {})
    for key in [settings] if settings is not None else list(clients):
        client = clients.pop(key, None)
        if client is not None:
            await client.aclose()


class ModelClient:
    """Chat completions against one endpoint, limited, retried, timed and cached (see the module text)."""

    def __init__(self, settings: Endpoint):
        self.settings = settings
        n = settings.max_connections
        # httpcore's pool scans its connections for every queued request, so its CPU per request grows with the
        # pool: 2.3 ms at 32 connections, 14 ms at 128 (measured). Several small pools, each request on the
        # least busy, keep it flat; together they hold at least n connections, the semaphore at most n.
        shards = math.ceil(n / SHARD_CONNECTIONS)
        size = math.ceil(n / shards)
        self.shards = [openai.AsyncOpenAI(
            api_key=settings.api_key, base_url=settings.base_url, max_retries=0, timeout=settings.timeout,
            http_client=openai.DefaultAsyncHttpxClient(
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size)))
            for _ in range(shards)]
        self._busy = [0] * shards  # requests in flight on each shard
        self._connections = asyncio.Semaphore(n)
        rpm, tpm = settings.requests_per_minute, settings.tokens_per_minute
        self.requests = TokenBucket(rpm) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None
        self.cache = ResponseCache(settings.cache_dir) if settings.cache_dir else None

    def __repr__(self) -> str:
        return f"ModelClient({self.settings!r})"

    @property
    def endpoint(self) -> str:
        """Where the requests go, as the SDK resolved it (the settings', else OPENAI_BASE_URL, else its default)."""
        return str(self.shards[0].base_url).rstrip("/")

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.close()

    async def complete(self, usage: Usage | None, **request: Any) -> ChatCompletion:
        """One chat completion; its ModelCall (tokens, wall time with every wait, the waits, cached or not) is
        appended to `usage` (None: recorded nowhere). The caller checks the trial's budget first
        (AgentEnv.before_model_call)."""
        start = time.perf_counter()
        key = request_sha256(request, self.endpoint) if self.cache else None
        response = self.cache.get(key) if self.cache else None
        waits: list[EndpointWait] = []
        cached = response is not None
        if response is None:
            response = await self._send(request, waits)
            if self.cache:
                self.cache.put(key, response)
        if usage is not None:
            used = response.usage  # an endpoint may not report usage: zero tokens then, and the call still counted
            usage.model_calls.append(ModelCall(
                model=request["model"], tokens_in=(used.prompt_tokens or 0) if used else 0,
                tokens_out=(used.completion_tokens or 0) if used else 0,
                seconds=round(time.perf_counter() - start, 6), waits=waits, cached=cached))
        return response

    async def _send(self, request: dict[str, Any], waits: list[EndpointWait]) -> ChatCompletion:
        """The request, retried on transient failures; each retry's pause recorded in `waits`."""
        for retry in range(self.settings.max_retries + 1):
            try:
                return await self._attempt(request, waits)
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                pause = self._pause(exc, retry)
                if pause is None:  # the trial's infra_error says what was waited before giving up
                    exc.add_note(f"after {retry} retries; waits: {[w.model_dump() for w in waits]}")
                    raise
                reason, status = _why(exc)
                waits.append(EndpointWait(reason=reason, seconds=round(pause, 6), status=status))
                await asyncio.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _pause(self, exc: openai.APIError, retry: int) -> float | None:
        """How long to wait before retrying after `exc`, or None: not retried (not transient, too long a
        Retry-After, or no retry left)."""
        if retry >= self.settings.max_retries:
            return None
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code not in RETRY_STATUSES and exc.status_code < 500:
                return None
            told = retry_after(exc.response.headers)
            if told is not None:
                return told if told <= MAX_RETRY_AFTER else None
        # jitter (up to a quarter less) so trials that failed together do not all retry together
        return min(FIRST_BACKOFF * 2 ** retry, MAX_BACKOFF) * (1 - 0.25 * random.random())

    async def _attempt(self, request: dict[str, Any], waits: list[EndpointWait]) -> ChatCompletion:
        """One try: through the rate limits and the connection limit, under the request timeout; the token
        estimate settled against the reported tokens."""
        estimate = len(json.dumps(request, default=str)) / 4
        if self.requests:
            _note(waits, "request rate limit", await self.requests.take(1))
        if self.tokens:
            _note(waits, "token rate limit", await self.tokens.take(estimate))
        asked, full = time.perf_counter(), self._connections.locked()
        async with self._connections:
            if full:  # only a limit that held the request back is a wait; a busy process pausing here is not one
                _note(waits, "connection limit", time.perf_counter() - asked)
            response = await self._post(request)
        if self.tokens and response.usage is not None:
            self.tokens.settle((response.usage.total_tokens or 0) - estimate)
        return response


    async def _post(self, request: dict[str, Any]) -> ChatCompletion:
        """The request on the least busy shard, under the request timeout."""
        i = min(range(len(self.shards)), key=self._busy.__getitem__)
        shard = self.shards[i]
        self._busy[i] += 1
        try:
            async with asyncio.timeout(self.settings.timeout):
                # the SDK's own post, not chat.completions.create: the request is plain JSON already, and create's
                # walk of it against the request's TypedDicts cost ~12 ms of CPU a request, most of a trial's
                return await shard.post("/chat/completions", cast_to=ChatCompletion, body=request)
        except TimeoutError as exc:
            raise openai.APITimeoutError(request=httpx.Request("POST", str(shard.base_url))) from exc
        finally:
            self._busy[i] -= 1


def retry_after(headers: httpx.Headers) -> float | None:
    """The wait an endpoint asked for: retry-after-ms, else Retry-After in seconds or as an HTTP date."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name, "")) * scale
        except ValueError:
            continue
        if math.isfinite(seconds):
            return max(seconds, 0.0)
    date = headers.get("retry-after")
    try:  # an address that sends no date, or one it cannot spell, gets the backoff instead
        when = email.utils.parsedate_to_datetime(date) if date else None
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0) if when else None


def _why(exc: openai.APIError) -> tuple[str, int | None]:
    """The reason and HTTP status a retry is recorded with."""
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        return f"retry: {RETRY_STATUSES.get(code, 'server error')}", code
    return ("retry: timeout" if isinstance(exc, openai.APITimeoutError) else "retry: connection error"), None


def _note(waits: list[EndpointWait], reason: str, seconds: float) -> None:
    if seconds > NOTED:
        waits.append(EndpointWait(reason=reason, seconds=round(seconds, 6)))
