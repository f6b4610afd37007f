"""The model client's request path (aiohttp) against the openai SDK's own transport it replaced: for the same staged
endpoint, the trial records a run writes are the same (outcome, verdict, trace, tokens, waits with their reasons,
statuses and seconds, the error a failed trial records), and so are the request bodies and headers the endpoint
receives. Only wall times and the traceback's frames (another transport's) may differ."""
from __future__ import annotations

import asyncio
import json
import random

import httpx
import openai
import pytest
from harness_support import make_release
from openai.types.chat import ChatCompletion
from scripted_model import reply, serve_staged
from test_model_client import MODEL, price_variance, solving

from evalsuite.releases.release import Release
from evalsuite.trials.agents import model_client
from evalsuite.trials.agents.endpoint import Endpoint, endpoint
from evalsuite.trials.agents.model_client import ModelClient
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.tracelog import TRACES

FAST = {"retry-after-ms": "20"}
# What the transport adds on its own, beside what the SDK asks for: not part of the request the endpoint reads.
TRANSPORT_HEADERS = {"host", "accept-encoding", "connection"}


class SdkTransport(ModelClient):
    """The request path before aiohttp: the SDK's own `post` (httpx, httpcore) under the request timeout."""

    async def _post(self, request):
        try:
            async with asyncio.timeout(self.settings.timeout):
                return await self.sdk.post("/chat/completions", cast_to=ChatCompletion, body=request)
        except TimeoutError as exc:
            raise openai.APITimeoutError(request=httpx.Request("POST", self.url)) from exc


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return Release(make_release(ap, tmp_path_factory.mktemp("transport"), n_tasks=3))


def scenarios(task):
    tools, answer = solving(task)
    unbilled = reply({"content": task.reference_answer})  # an endpoint that reports no usage
    down = [reply(status=500, headers=FAST)] * 3
    return {
        "retried, then solved": ([reply(status=503, headers={}), reply(status=429, headers=FAST), tools, unbilled],
                                 {}, 0.0),
        "outlasts the retries": ([tools, *down], {"max_retries": 2}, 0.0),
        "refused, not retried": ([reply(status=400)], {}, 0.0),
        "times out": ([answer] * 2, {"timeout": 0.1, "max_retries": 1}, 0.3),
    }


def run(release, task, replies, settings, delay, tmp_path, name):
    """One trial of `task` through the client in use, against the staged replies: the record written, and the
    requests' bodies and headers as the endpoint received them."""
    random.seed(7)  # the backoff's jitter, drawn alike on both paths
    out = tmp_path / name
    with serve_staged(replies, delay=delay) as staged:
        with endpoint(Endpoint(base_url=staged.url, api_key="sk-test", **settings)):
            run_trials(release.world_ref(), [task], [f"openai:{MODEL}"], 1,
                       TrialSettings(release.run_identity(), out_dir=out, workers=1, max_in_flight=1))
    (line,) = (out / TRACES).read_text().splitlines()
    return json.loads(line), staged.bodies, [{k: v for k, v in h.items() if k not in TRANSPORT_HEADERS}
                                             for h in staged.headers]


def comparable(record: dict) -> dict:
    """The record less what is timed (wall seconds) and the traceback's frames: an error is compared by what it
    says (the exception's line and notes)."""
    drop = {"started_at", "ended_at", "seconds", "duration_s", "wall_seconds"}
    record = {k: v for k, v in record.items() if k not in drop}
    for timed in [*record.get("trace", []), *(record.get("usage") or {}).get("model_calls", [])]:
        timed.pop("seconds")  # a retry's wait keeps its seconds: what the endpoint asked for, or the backoff drawn
    if record.get("error"):
        lines = record["error"].splitlines()
        last_frame = max(i for i, line in enumerate(lines) if line.startswith(" "))
        record["error"] = lines[last_frame + 1:]
    return record


def test_trials_record_the_same_through_aiohttp_as_through_the_sdk_transport(ap, release, tmp_path, monkeypatch):
    task = price_variance(ap)
    for name, (replies, settings, delay) in scenarios(task).items():
        new = run(release, task, replies, settings, delay, tmp_path, f"new-{name}")
        with monkeypatch.context() as m:
            m.setattr(model_client, "ModelClient", SdkTransport)
            old = run(release, task, replies, settings, delay, tmp_path, f"old-{name}")
        assert comparable(new[0]) == comparable(old[0]), name
        assert new[1] == old[1], f"{name}: request bodies"
        assert new[2] == old[2], f"{name}: request headers"
    # the scenarios did what they are named for
    assert new[0]["outcome"] == "infra_error" and "APITimeoutError" in new[0]["error"]


class AskingAgent:
    """Asks the model once through the loop's client and never closes it, as an LLM user beside an external agent
    does (the user's client is the loop's, not an agent's)."""

    name = "asking"
    max_in_flight = 1
    settings: Endpoint
    client: ModelClient

    async def arun(self, task, env) -> str:
        self.client = model_client.client_for(self.settings)
        await self.client.complete(None, model=MODEL, messages=[{"role": "user", "content": "hi"}])
        return "done"


def test_a_client_no_agent_closed_is_closed_when_the_run_ends(ap, release, tmp_path):
    """Left open, its connections would outlive the run's event loop and aiohttp would print `Unclosed client
    session` when the process collects it."""
    agent = AskingAgent()
    with serve_staged([reply()]) as staged:
        agent.settings = Endpoint(base_url=staged.url, api_key="sk-test")
        run_trials(release.world_ref(), [price_variance(ap)], [agent], 1,
                   TrialSettings(release.run_identity(), out_dir=tmp_path / "run", workers=1))
    assert agent.client.session_closed
