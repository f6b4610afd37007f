"""The response cache (opt-in, by endpoint.cache_dir): a trial's requests miss and are stored, the same trial
again is answered from the cache without reaching the endpoint and its calls are marked cached, a request that
differs in a sampling setting or a message misses, and a file that is not a stored response is an error."""
from __future__ import annotations

import asyncio
import json

import pytest
from scripted_model import reply, run_async, serve_staged
from test_model_client import MODEL, agent, price_variance, solving

from evalsuite.core.records import Usage
from evalsuite.trials.agents.endpoint import Endpoint
from evalsuite.trials.agents.model_client import ModelClient
from evalsuite.trials.agents.response_cache import request_sha256


def test_a_trial_misses_then_hits_and_a_changed_request_misses(ap, tmp_path):
    task = price_variance(ap)
    cache = tmp_path / "cache"
    with serve_staged(solving(task) * 2) as staged:
        first = run_async(ap.world, task, agent(staged.url, cache_dir=str(cache)))
        again = run_async(ap.world, task, agent(staged.url, cache_dir=str(cache)))
        assert len(staged.seen) == 2  # the second trial never reached the endpoint
        warmer = run_async(ap.world, task, agent(staged.url, temperature=0.5, cache_dir=str(cache)))
        assert len(staged.seen) == 4 and staged.seen[2]["temperature"] == 0.5  # another temperature: a miss
    assert first.passed and again.passed and warmer.passed
    assert [c.cached for c in first.usage.model_calls] == [False, False]
    assert [c.cached for c in again.usage.model_calls] == [True, True]
    assert [(c.tokens_in, c.tokens_out) for c in again.usage.model_calls] == [(300, 40), (420, 25)]  # as stored
    assert all(c.waits == [] and c.seconds < 0.5 for c in again.usage.model_calls)
    assert again.final_message == first.final_message and again.trace[0].result == first.trace[0].result
    stored = sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file())
    keys = [request_sha256(dict(model=MODEL, messages=b["messages"], tools=b["tools"],
                                temperature=b["temperature"]), staged.url.rstrip("/")) for b in staged.seen]
    assert stored == sorted(f"{k[:2]}/{k}.json" for k in keys)  # one file per request, no temporary left


def _ask(url: str, cache, text: str) -> Usage:
    async def run():
        client = ModelClient(Endpoint(base_url=url, api_key="sk-test", cache_dir=str(cache)))
        usage = Usage()
        try:
            await client.complete(usage, model=MODEL, messages=[{"role": "user", "content": text}], seed=7)
        finally:
            await client.aclose()
        return usage

    return asyncio.run(run())


def test_another_message_misses_and_the_same_one_hits(tmp_path):
    with serve_staged([reply({"content": "a"}, usage=(5, 1)), reply({"content": "b"}, usage=(6, 1))]) as staged:
        assert not _ask(staged.url, tmp_path, "hello").model_calls[0].cached
        assert not _ask(staged.url, tmp_path, "hello again").model_calls[0].cached
        assert _ask(staged.url, tmp_path, "hello").model_calls[0].cached
        assert [b["messages"][0]["content"] for b in staged.seen] == ["hello", "hello again"]


def test_a_file_that_is_not_a_stored_response_is_an_error_not_a_hit(tmp_path):
    with serve_staged([]) as staged, pytest.raises(ValueError, match="not a cached chat completion"):
        key = request_sha256(dict(model=MODEL, messages=[{"role": "user", "content": "hello"}], seed=7),
                             staged.url.rstrip("/"))
        (tmp_path / key[:2]).mkdir()
        (tmp_path / key[:2] / f"{key}.json").write_text('{"id": "x", "choi')  # half a file
        _ask(staged.url, tmp_path, "hello")
    assert staged.seen == []


def test_another_endpoint_serving_a_model_of_the_same_name_is_never_answered_from_the_first_ones_cache(tmp_path):
    """On 7bb15c3 a run against an endpoint that fails every task was served the first endpoint's responses from
    the cache and scored 1.000 instead of 0.000, under the same run identity."""
    with serve_staged([reply({"content": "a"}, usage=(5, 1))]) as first, \
            serve_staged([reply({"content": "b"}, usage=(5, 1))]) as second:
        assert not _ask(first.url, tmp_path, "hello").model_calls[0].cached
        assert not _ask(second.url, tmp_path, "hello").model_calls[0].cached
        assert len(second.seen) == 1  # reached, not served from the cache of the first


@pytest.mark.parametrize("usage", [(-999_993_999, 1), (10**15, 1)])
def test_a_stored_response_whose_usage_is_no_token_count_is_refused(tmp_path, usage):
    with serve_staged([reply({"content": "a"}, usage=(5, 1))]) as staged:
        _ask(staged.url, tmp_path, "hello")
        (stored,) = [p for p in tmp_path.rglob("*.json")]
        body = json.loads(stored.read_text())
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        stored.write_text(json.dumps(body))
        with pytest.raises(ValueError, match="is not a token count"):
            _ask(staged.url, tmp_path, "hello")
