"""One client per endpoint per event loop: every trial in flight shares its connection pool and its limits.

A request goes through, in order: the response cache (when the endpoint has a cache_dir), the request-rate
and token-rate buckets (rate_limit.TokenBucket), the connection limit (max_connections requests at once),
then the endpoint under a timeout. A request is sent with aiohttp, as the openai SDK would send it (the same
body bytes and headers), and its answer or error read as the SDK reads it (ChatCompletion, the SDK's error
classes): the SDK's own httpx transport was most of a model-bound trial's CPU. Transient failures (408, 409, 429,
5xx, connection errors, timeouts) are retried here, so every pause is seen: Retry-After (seconds or an HTTP
date) or retry-after-ms is honoured, else 0.5 s doubling up to 8 s, at most max_retries times. Every pause,
a retry's or a limiter's, is an EndpointWait on the request's ModelCall; an error that outlasts the retries
is raised, and the trial records it as an infra_error with the tokens of the calls before it.

The token-rate charge before a request is an estimate, the length of its JSON body / 4 (about four
characters a token for English and JSON); the difference to what the endpoint reports is settled after.
"""
from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import os
import random
import ssl
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any
from weakref import WeakKeyDictionary

import aiohttp
import httpx
import openai
import pydantic
import yarl
from openai.types.chat import ChatCompletion

from evalsuite.core.records import EndpointWait, ModelCall, Usage
from evalsuite.trials.agents.endpoint import Endpoint
from evalsuite.trials.agents.rate_limit import TokenBucket
from evalsuite.trials.agents.response_cache import ResponseCache, request_sha256

RETRY_STATUSES = {408: "request timeout", 409: "conflict", 429: "rate limited"}
FIRST_BACKOFF, MAX_BACKOFF = 0.5, 8.0
MAX_RETRY_AFTER = 120.0  # a longer Retry-After is not waited out (as the openai SDK does): the error is raised
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
        # The SDK client is kept for what a request looks like and what its errors are (its base URL, headers and
        # status-error classes, so records and cache keys stay what they were), not to send: its httpx/httpcore
        # stack cost ~72% of the harness's CPU at 128 in flight (httpcore scans its pool for every request).
        self.sdk = openai.AsyncOpenAI(api_key=settings.api_key, base_url=settings.base_url, max_retries=0,
                                      timeout=settings.timeout,
                                      http_client=openai.DefaultAsyncHttpxClient(verify=sdk_ssl_context()))
        self.url = str(self.sdk.base_url) + "chat/completions"
        self.headers = sdk_headers(self.sdk)
        self.proxy = env_proxy(self.url)
        self._session: aiohttp.ClientSession | None = None  # made on the loop of the first request
        self._connections = asyncio.Semaphore(settings.max_connections)
        rpm, tpm = settings.requests_per_minute, settings.tokens_per_minute
        self.requests = TokenBucket(rpm) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None
        self.cache = ResponseCache(settings.cache_dir) if settings.cache_dir else None

    def __repr__(self) -> str:
        return f"ModelClient({self.settings!r})"

    @property
    def endpoint(self) -> str:
        """Where the requests go, as the SDK resolved it (the settings', else OPENAI_BASE_URL, else its default)."""
        return str(self.sdk.base_url).rstrip("/")

    @property
    def session_closed(self) -> bool:
        """Whether no connection of this client is open: never opened, or closed."""
        return self._session is None or self._session.closed

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
        await self.sdk.close()

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
        if self.requests:
            _note(waits, "request rate limit", await self.requests.take(1))
        if self.tokens:
            estimate = len(json.dumps(request, default=str)) / 4
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
        """The request under the request timeout; a failure raised as the SDK raised it (its status-error class
        and message, APITimeoutError, APIConnectionError)."""
        if self._session is None:
            # the semaphore is the connection limit; the connector's is the same, so no request queues twice
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.settings.max_connections),
                timeout=aiohttp.ClientTimeout(total=None))
        try:
            async with asyncio.timeout(self.settings.timeout):
                async with self._session.post(self.url, data=request_body(request), headers=self.headers,
                                              proxy=self.proxy) as got:
                    raw = await got.read()
        except TimeoutError as exc:
            raise openai.APITimeoutError(request=httpx.Request("POST", self.url)) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise openai.APIConnectionError(request=httpx.Request("POST", self.url)) from exc
        if got.status >= 300:
            raise self.sdk._make_status_error_from_response(  # the SDK's own mapping: RateLimitError for 429, ...
                httpx.Response(got.status, headers=list(got.raw_headers), content=raw,
                               request=httpx.Request("POST", self.url)))
        return chat_completion(raw, self.url)


@functools.cache
def sdk_ssl_context() -> ssl.SSLContext:
    """The TLS context the SDK's httpx client would make (certifi's roots, or SSL_CERT_FILE / SSL_CERT_DIR as the
    process had them first), made once a process: made for every client, it was ~20 ms of CPU each run's client
    cost (a run's event loop gets a client of its own), though no request of ours goes through httpx."""
    return httpx.create_ssl_context()


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTPS_PROXY, NO_PROXY, ...), as httpx honoured it: looked up
    once, where aiohttp's trust_env would look it up (and for a netrc) in a thread for every request."""
    try:
        return str(aiohttp.helpers.get_env_proxy_for_url(yarl.URL(url))[0])
    except LookupError:
        return None


def sdk_headers(sdk: openai.AsyncOpenAI) -> dict[str, str]:
    """The headers the SDK sends with a chat completion when its retries are off: its defaults (content type,
    user agent, platform, organization and project), the key's Authorization, the retry count and read timeout."""
    headers = {**sdk.auth_headers, **sdk.default_headers, "x-stainless-retry-count": "0",
               "x-stainless-read-timeout": str(sdk.timeout)}
    return {k: v for k, v in headers.items() if isinstance(v, str)}  # an Omit() is a header not sent


def request_body(request: dict[str, Any]) -> bytes:
    """The request's JSON, byte for byte as the SDK serialised it (a prompt's length may be what is billed); its
    EncodedTools spelled as they were encoded once."""
    tools = request.get("tools")
    if not isinstance(tools, EncodedTools):
        return _json(request).encode()
    # the top-level object item by item, as json.dumps spells it with these separators (its keys are the
    # keyword arguments of ModelClient.complete: text)
    items = (f"{_json(k)}:{tools.json if k == 'tools' else _json(v)}" for k, v in request.items())
    return ("{" + ",".join(items) + "}").encode()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class EncodedTools(tuple):
    """A request's tool list, its JSON encoded once: an agent sends the same tools with every request of a trial,
    and encoding them was ~40 µs of the ~55 µs each request's JSON took (the AP tools: 12 schemas, 4.4 KB). A tuple,
    so the list cannot change after its JSON is taken; its schemas are not to be changed either. Anywhere else (the
    SDK, the cache key) it is the JSON list it always was."""

    json: str

    def __new__(cls, tools: Iterable[dict[str, Any]]) -> EncodedTools:
        self = super().__new__(cls, tools)
        self.json = _json(self)
        return self


def chat_completion(raw: bytes, url: str) -> ChatCompletion:
    """The response read as the SDK read it: validated (fast), else built field by field without validation, as
    the SDK builds every response, so an endpoint that strays from the schema is still read; not JSON is an
    error."""
    try:
        return ChatCompletion.model_validate_json(raw)
    except pydantic.ValidationError:
        pass
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise openai.APIResponseValidationError(
            response=httpx.Response(200, content=raw, request=httpx.Request("POST", url)), body=raw,
            message=f"{url}: the response is not a JSON object: {raw[:200]!r}")
    return ChatCompletion.construct(**data)


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
