"""The local model endpoint on loopback, as a plain `openai.OpenAI` client sees it: it follows a task's reference
solution one tool call per request, bills usage, waits about its median latency, refuses requests past its budget
and stops, listens on 127.0.0.1 only, and runs a generic tool script for conversations it does not know."""
from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest
from harness_support import make_release

from evalsuite.trials.local_model import LocalModelError, loopback_listener, serve_local_model

ROOT = Path(__file__).resolve().parents[2]
TOOLS = [{"type": "function", "function": {"name": "get_invoice", "parameters": {
    "type": "object", "properties": {"invoice_id": {"type": "string"}}, "required": ["invoice_id"]}}}]


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key="local", max_retries=0, timeout=10)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _refuses(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def _stopped(port: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _refuses("127.0.0.1", port):
            return True
        time.sleep(0.05)
    return False


def _converse(client: openai.OpenAI, opening, tools=TOOLS, limit: int = 10) -> list:
    """Requests until the model answers in text (at most `limit`): every response, tool results sent back."""
    messages = [{"role": "system", "content": "policy"}, {"role": "user", "content": opening}]
    responses = []
    for _ in range(limit):
        r = client.chat.completions.create(model="local", messages=messages, tools=tools)
        responses.append(r)
        message = r.choices[0].message
        if not message.tool_calls:
            return responses
        messages.append(message.model_dump(exclude_none=True))
        messages += [{"role": "tool", "tool_call_id": c.id, "content": '{"ok": true}'} for c in message.tool_calls]
    raise AssertionError(f"no answer after {limit} requests")


def test_it_follows_the_reference_solution_one_call_per_request_then_answers_with_usage(ap):
    task = next(t for t in ap.tasks if len(t.solution_calls()) == 4)
    with serve_local_model(ap.tasks, max_requests=5, median_ms=0) as url:
        responses = _converse(_client(url), task.trigger.text)
    calls = [r.choices[0].message.tool_calls for r in responses[:-1]]
    assert all(len(c) == 1 for c in calls)
    assert [(c[0].function.name, json.loads(c[0].function.arguments)) for c in calls] == [
        (s.tool, s.arguments) for s in task.solution_calls()]
    assert len(responses) == 5 and responses[-1].choices[0].message.content == task.reference_answer
    prompts = [r.usage.prompt_tokens for r in responses]
    assert prompts == sorted(prompts) and prompts[0] > 0  # the conversation grows, and so does its bill
    assert {r.usage.completion_tokens for r in responses} == {20}
    assert all(r.usage.total_tokens == r.usage.prompt_tokens + 20 for r in responses)


def test_prompt_tokens_are_about_the_request_characters_over_four(ap):
    padding = "x" * 4000
    with serve_local_model(ap.tasks, max_requests=1, median_ms=0) as url:
        r = _client(url).chat.completions.create(model="local", messages=[{"role": "user", "content": padding}],
                                                 tools=TOOLS)
    assert 1000 <= r.usage.prompt_tokens <= 1100


def test_each_answer_waits_about_the_median_latency(ap):
    with serve_local_model(ap.tasks, max_requests=8, median_ms=200, sigma=0.1, seed=3) as url:
        client = _client(url)
        ask = dict(model="local", messages=[{"role": "user", "content": "hello"}], tools=TOOLS)
        client.chat.completions.create(**ask)  # the client's first request also sets up its connection
        waits = []
        for _ in range(6):
            start = time.perf_counter()
            client.chat.completions.create(**ask)
            waits.append(time.perf_counter() - start)
    assert 0.15 <= statistics.median(waits) <= 0.4, waits


def test_requests_past_the_budget_are_refused_and_the_endpoint_stops(ap):
    with serve_local_model(ap.tasks, max_requests=2, median_ms=0) as url:
        client = _client(url)
        ask = dict(model="local", messages=[{"role": "user", "content": "hello"}], tools=TOOLS)
        assert client.chat.completions.create(**ask).choices[0].message.tool_calls
        assert client.chat.completions.create(**ask).choices[0].message.tool_calls
        # a request in the moment before the listener closes gets 503; after, the connection is refused
        with pytest.raises((openai.APIConnectionError, openai.InternalServerError)) as refused:
            client.chat.completions.create(**ask)
        if isinstance(refused.value, openai.APIStatusError):
            assert refused.value.status_code == 503 and "budget" in str(refused.value)
        assert _stopped(_port(url)), "the endpoint still listens after its budget was spent"


def test_it_listens_on_127_0_0_1_only(ap):
    with pytest.raises(LocalModelError, match="127.0.0.1 only"):
        loopback_listener(0, host="0.0.0.0")
    with serve_local_model(ap.tasks, max_requests=1, median_ms=0) as url:
        assert url.startswith("http://127.0.0.1:")
        assert not _refuses("127.0.0.1", _port(url))
        assert _refuses("127.0.0.2", _port(url))  # another loopback address: nothing listens there


@pytest.mark.parametrize("known", [True, False], ids=["beside tasks", "no tasks at all"])
def test_a_conversation_it_does_not_know_gets_the_generic_script(ap, known):
    opening = [{"type": "text", "text": "Sample 7: look something up"}]  # Inspect sends content parts
    with serve_local_model(ap.tasks if known else [], max_requests=5, median_ms=0, turns=3) as url:
        responses = _converse(_client(url), opening)
        stats = httpx.get(f"{url}/local/stats").json()
    assert (stats["answered"], stats["refused"]) == (4, 0) and stats["cpu_seconds"] > 0
    calls = [r.choices[0].message.tool_calls[0].function for r in responses[:-1]]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_invoice", {"invoice_id": "x"})] * 3
    assert responses[-1].choices[0].message.content == "done"


def test_the_cli_serves_a_release_until_its_budget_is_spent(ap, tmp_path):
    release = make_release(ap, tmp_path / "releases")
    task = ap.tasks[0]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALSUITE_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([sys.executable, "-m", "evalsuite.cli", "local-model", str(release), "--max-requests",
                             "1", "--latency-ms", "0", "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        url = line.split("OPENAI_BASE_URL=")[1].split()[0]
        assert "1 request(s), then it stops" in line
        first = _client(url).chat.completions.create(
            model="local", messages=[{"role": "user", "content": task.trigger.text}], tools=TOOLS)
        call = first.choices[0].message.tool_calls[0].function
        assert (call.name, json.loads(call.arguments)) == (task.solution_calls()[0].tool,
                                                           task.solution_calls()[0].arguments)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()


def test_it_stops_when_asked_even_if_its_parent_ignores_sigterm(ap):
    """An ignored SIGTERM is inherited across exec (a test runner or a worker may ignore it); the endpoint must
    still stop on the SIGTERM that ends its context, even one sent before its server installed its handlers."""
    before = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with serve_local_model(ap.tasks, max_requests=1, median_ms=0) as url:
            port = _port(url)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert _stopped(port)


@pytest.mark.parametrize("body, says", [
    (b"not json", "invalid JSON"), (b"[1, 2]", "top level"), (b'{"model": "local"}', "messages"),
    (b'{"messages": [{"role": "user", "content": "hello"}]}', "at least one tool"),
    (b"[" * 500 + b"]" * 500, "nested deeper"), (b'{"messages": "\xff"}', "UTF-8"),
])
def test_a_request_it_cannot_read_is_a_400_that_spends_no_budget(ap, body, says):
    """On 7bb15c3 each of these was a 500 with a server traceback, and spent one answer of the budget."""
    with serve_local_model(ap.tasks, max_requests=1, median_ms=0) as url:
        bad = httpx.post(f"{url}/chat/completions", content=body, headers={"Content-Type": "application/json"})
        assert bad.status_code == 400 and says in bad.json()["error"]["message"], bad.text
        ask = dict(model="local", messages=[{"role": "user", "content": "hello"}], tools=TOOLS)
        assert _client(url).chat.completions.create(**ask).choices  # the one answer is still there


def test_a_request_naming_another_host_is_refused_as_dns_rebinding_would_send_it(ap):
    with serve_local_model(ap.tasks, max_requests=1, median_ms=0) as url:
        ask = {"model": "local", "messages": [{"role": "user", "content": "hello"}], "tools": TOOLS}
        rebound = httpx.post(f"{url}/chat/completions", json=ask, headers={"Host": f"evil.example:{_port(url)}"})
        assert rebound.status_code == 400
        assert httpx.post(f"{url}/chat/completions", json=ask).status_code == 200
