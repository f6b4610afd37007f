"""The model client against staged loopback endpoints: retries honour Retry-After and are recorded with their
reason and status, an endpoint that stays down ends the trial as an infra_error with the tokens already spent,
the connection, request-rate and token-rate limits hold and their waits are recorded, a request that takes too
long is timed out and retried, and a trial's model-call limit ends it as budget_exhausted."""
from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import openai
import pytest
from scripted_model import reply, run_async, serve_staged

from evalsuite.core.identity import TrialLimits
from evalsuite.core.records import EndpointWait, Usage
from evalsuite.trials.agents.endpoint import Endpoint, endpoint
from evalsuite.trials.agents.model_client import (
    EncodedTools,
    ModelClient,
    client_for,
    close_clients,
    request_body,
    retry_after,
)
from evalsuite.trials.agents.openai_agent import OpenAIAgent

MODEL = "staged-model"


def agent(url: str, temperature: float = 0.0, **settings) -> OpenAIAgent:
    with endpoint(Endpoint(base_url=url, api_key="sk-test", **settings)):
        return OpenAIAgent(name=f"openai:{MODEL}", model=MODEL, temperature=temperature)


def tool_calls(calls) -> dict:
    return {"content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": c.tool, "arguments": json.dumps(c.arguments)}}
        for i, c in enumerate(calls)]}


def solving(task) -> list[dict]:
    """The two replies that solve `task`: its reference calls, then its reference answer."""
    return [reply(tool_calls(task.solution_calls()), usage=(300, 40)),
            reply({"content": task.reference_answer}, usage=(420, 25))]


def price_variance(ap):
    return next(t for t in ap.tasks if t.category == "price_variance")


def requests(url: str, n: int, **settings) -> tuple[list[Usage], float]:
    """n requests at once through one client for these settings: each one's usage, and the wall time."""
    async def run():
        client = ModelClient(Endpoint(base_url=url, api_key="sk-test", **settings))
        usages = [Usage() for _ in range(n)]
        start = time.perf_counter()
        try:
            await asyncio.gather(*(client.complete(u, model=MODEL, messages=[{"role": "user", "content": f"q{i}"}])
                                   for i, u in enumerate(usages)))
        finally:
            await client.aclose()
        return usages, time.perf_counter() - start

    return asyncio.run(run())


def test_a_429_with_retry_after_is_waited_out_and_the_wait_recorded(ap):
    task = price_variance(ap)
    with serve_staged([reply(status=429, headers={"Retry-After": "1"}), *solving(task)]) as staged:
        result = run_async(ap.world, task, agent(staged.url))
    assert result.passed, result.verdict.failures()
    first = result.usage.model_calls[0]
    assert first.waits == [EndpointWait(reason="retry: rate limited", seconds=1.0, status=429)]
    assert first.seconds >= 1.0 and (first.tokens_in, first.tokens_out) == (300, 40)
    assert len(staged.seen) == 3 and staged.seen[0] == staged.seen[1]  # the same request, sent again


def test_a_server_error_is_retried_after_a_backoff_and_the_trial_passes(ap):
    task = price_variance(ap)
    with serve_staged([reply(status=503), *solving(task)]) as staged:  # no Retry-After: 0.5 s, less jitter
        result = run_async(ap.world, task, agent(staged.url))
    assert result.passed and len(result.usage.model_calls) == 2  # a retried request is one call
    (wait,) = result.usage.model_calls[0].waits
    assert (wait.reason, wait.status) == ("retry: server error", 503) and 0.375 <= wait.seconds <= 0.5
    assert result.usage.model_calls[0].seconds >= wait.seconds


def test_an_error_that_outlasts_the_retries_is_an_infra_error_with_the_tokens_already_spent(ap):
    task = price_variance(ap)
    fast = {"retry-after-ms": "5"}
    down = [reply(status=500, headers=fast)] * 3
    with serve_staged([solving(task)[0], *down]) as staged:
        result = run_async(ap.world, task, agent(staged.url, max_retries=2))
    assert result.outcome == "infra_error" and "500" in result.error
    assert "after 2 retries" in result.error and result.error.count("retry: server error") == 2  # its waits
    assert len(staged.seen) == 4  # the answered call, then the first try and two retries of the next
    assert [(c.tokens_in, c.tokens_out) for c in result.usage.model_calls] == [(300, 40)]
    assert [e.tool for e in result.trace] == [c.tool for c in task.solution_calls()]  # its effects are kept


def test_a_retry_after_as_an_http_date_or_in_milliseconds_is_honoured():
    date = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert retry_after(httpx.Headers({"Retry-After": date})) == pytest.approx(30, abs=1.5)
    assert retry_after(httpx.Headers({"Retry-After": "7", "retry-after-ms": "250"})) == 0.25
    assert retry_after(httpx.Headers({"Retry-After": "soon"})) is None  # then the backoff applies


@pytest.mark.parametrize("limit", [3, 20])
def test_the_connection_limit_holds_and_its_waits_are_recorded(limit):
    n = 4 * limit
    with serve_staged([reply()] * n, delay=0.1) as staged:
        usages, seconds = requests(staged.url, n, max_connections=limit)
    assert staged.max_in_flight == limit  # never more than the limit, and the limit was used
    assert seconds >= 0.4 - 0.01  # 4 rounds of 0.1 s
    waited = [w for u in usages for w in u.model_calls[0].waits]
    assert len(waited) >= n - limit - 1 and {w.reason for w in waited} == {"connection limit"}


def test_the_request_rate_limit_spaces_requests_and_records_the_wait():
    with serve_staged([reply()] * 3) as staged:
        usages, seconds = requests(staged.url, 3, requests_per_minute=120)  # 2 a second, 2 at once
    assert seconds >= 0.5 - 0.01
    waits = sorted((w.seconds for u in usages for w in u.model_calls[0].waits), reverse=True)
    # the third request waits for the bucket's next token: up to 0.5 s, less by what the first two took to answer
    # (on a loaded machine they take a while, and the bucket refills meanwhile)
    assert 0.25 <= waits[0] <= 0.52
    assert {w.reason for u in usages for w in u.model_calls[0].waits} == {"request rate limit"}


def test_the_token_rate_limit_charges_the_reported_tokens_after_the_fact():
    """The estimate (body length / 4) fits the bucket; the 1,500 tokens reported put it in debt, which the next
    request waits out."""
    async def run(url):
        client = ModelClient(Endpoint(base_url=url, api_key="sk-test", tokens_per_minute=60_000))  # 1,000 a s
        usage = Usage()
        try:
            for text in ("first", "second"):
                await client.complete(usage, model=MODEL, messages=[{"role": "user", "content": text}])
        finally:
            await client.aclose()
        return usage

    with serve_staged([reply(usage=(1400, 100)), reply(usage=(10, 1))]) as staged:
        usage = asyncio.run(run(staged.url))
    assert usage.model_calls[0].waits == []
    (wait,) = usage.model_calls[1].waits
    assert wait.reason == "token rate limit" and 0.4 <= wait.seconds <= 0.6  # ~500 owed at 1,000 a second


def test_a_request_that_takes_too_long_is_timed_out_retried_and_then_raised():
    async def run(url):
        client = ModelClient(Endpoint(base_url=url, api_key="sk-test", timeout=0.1, max_retries=1))
        usage = Usage()
        try:
            with pytest.raises(openai.APITimeoutError):
                await client.complete(usage, model=MODEL, messages=[{"role": "user", "content": "slow"}])
        finally:
            await client.aclose()
        return usage

    with serve_staged([reply()] * 2, delay=0.3) as staged:
        usage = asyncio.run(run(staged.url))
    assert usage.model_calls == [] and len(staged.seen) == 2  # tried twice, nothing answered in time


def test_a_trial_at_its_model_call_limit_is_budget_exhausted_with_its_calls_tokens(ap):
    task = price_variance(ap)
    looping = [reply(tool_calls(task.solution_calls()[:1]), usage=(200, 30))] * 3  # never answers
    with serve_staged(looping) as staged:
        result = run_async(ap.world, task, agent(staged.url), limits=TrialLimits(model_calls=2))
    assert result.outcome == "budget_exhausted" and result.exhausted == "model calls: 2 of 2"
    assert [(c.tokens_in, c.tokens_out) for c in result.usage.model_calls] == [(200, 30)] * 2
    assert len(staged.seen) == 2  # the third request was never sent


def test_trials_on_one_loop_share_one_client_per_endpoint_and_another_loop_gets_its_own():
    settings = Endpoint(base_url="http://127.0.0.1:9/v1", api_key="sk-test")

    async def clients():
        try:
            return client_for(settings), client_for(settings), client_for(replace(settings, max_connections=2))
        finally:
            await close_clients()

    a, b, other = asyncio.run(clients())
    assert a is b and other is not a and a.sdk.max_retries == 0  # retried by the client, never by the SDK
    assert asyncio.run(clients())[0] is not a  # a client's connections belong to its loop
    assert "sk-test" not in repr(a)


def test_a_request_with_encoded_tools_is_sent_as_the_same_bytes():
    """Tools encoded once are spelled as json.dumps spells the whole request, the SDK's way: non-ASCII text, line
    separators, small floats, booleans and nulls included; and the list cannot change after its JSON is taken."""
    tools = [{"type": "function", "function": {"name": "pay", "description": "Réglé \u2028 \"net\"\n",
                                               "parameters": {"minimum": 1e-07, "strict": True, "default": None}}}]
    request = {"model": MODEL, "messages": [{"role": "user", "content": "café"}], "tools": tools, "temperature": 0.0}
    sdk = json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    encoded = EncodedTools(tools)
    assert request_body({**request, "tools": encoded}) == sdk == request_body(request)
    assert json.loads(encoded.json) == tools
    with pytest.raises(AttributeError):
        encoded.append(tools[0])


def test_every_client_verifies_tls_with_one_context_made_once():
    """The SDK client each ModelClient keeps (its errors, headers and base URL) verifies certificates as the SDK's
    own would, with one context for the process rather than one made (~20 ms) for every run's client."""
    ours, theirs = (ModelClient(Endpoint(base_url=url, api_key="sk-test"))
                    for url in ("https://one.example/v1", "https://two.example/v1"))
    contexts = [c.sdk._client._transport._pool._ssl_context for c in (ours, theirs)]
    assert contexts[0] is contexts[1]
    assert contexts[0].verify_mode == ssl.CERT_REQUIRED and contexts[0].check_hostname
