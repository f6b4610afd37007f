"""What an OpenAI-compatible agent spends: tokens and latency of every model call, latency of every tool call,
retries of transient endpoint errors, and an endpoint that stays down recorded as an infra error, never dropped."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from harness_support import make_release
from scripted_model import run_async, serve_reference
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.core.prices import load_prices
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.runlog import SCORECARD_JSON, SCORECARD_MD
from evalsuite.trials.agents.endpoint import Endpoint, endpoint
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.agents.openai_agent import OpenAIAgent

MODEL = "gpt-4o-mini"


@pytest.fixture
def billing(ap, monkeypatch):
    with serve_reference(monkeypatch, ap.tasks, "sk-from-env") as model:
        yield model


def _price_variance(ap):
    return next(t for t in ap.tasks if t.category == "price_variance")


def test_every_model_call_and_tool_call_is_timed_and_the_tokens_are_kept_on_the_record(ap, billing):
    task = _price_variance(ap)
    result = run_async(ap.world, task, make_agent(f"openai:{MODEL}"))
    assert result.passed, result.verdict.failures()
    calls = result.usage.model_calls
    assert [(c.model, c.tokens_in, c.tokens_out) for c in calls] == [(MODEL, i, o) for i, o in billing.served]
    assert len(calls) == 2 and all(c.seconds > 0 for c in calls)
    assert result.trace and all(e.seconds is not None and e.seconds > 0 for e in result.trace)
    assert result.seconds >= sum(c.seconds for c in calls) + sum(e.seconds for e in result.trace)
    again = type(result).model_validate_json(result.model_dump_json())  # what traces.jsonl stores and reads back
    assert again.usage == result.usage and again.trace[0].seconds == result.trace[0].seconds


def test_a_transient_endpoint_error_is_retried_and_the_trial_passes(ap, billing):
    task = _price_variance(ap)
    billing.flaky = {task.trigger.text}
    result = run_async(ap.world, task, make_agent(f"openai:{MODEL}"))
    assert result.passed and billing.failed == [task.trigger.text]  # one 503, then answered
    assert len(result.usage.model_calls) == 2  # a retried request is one call: its latency includes the wait


def test_an_endpoint_that_stays_down_is_an_infra_error_with_what_was_spent(ap, billing):
    task = _price_variance(ap)
    billing.down = {task.trigger.text}
    with endpoint(Endpoint(api_key="sk-resource-Qx81", max_retries=2)):
        agent = OpenAIAgent(name="m", model=MODEL)
    result = run_async(ap.world, task, agent)
    assert result.outcome == "infra_error" and not result.passed
    assert len(billing.failed) == 3 and "500" in result.error  # the first try and two retries
    assert result.usage is not None and result.usage.model_calls == []  # no answered request: nothing billed
    assert set(billing.auth) == {"Bearer sk-resource-Qx81"}  # the endpoint settings beat the environment
    assert "sk-resource-Qx81" not in result.model_dump_json()


def test_a_run_prices_its_tokens_in_the_scorecard_and_rescoring_gives_the_same_cost(ap, billing, tmp_path):
    release = Release(make_release(ap, tmp_path / "releases", n_tasks=3))
    billing.down = {release.tasks()[2].trigger.text}
    out = tmp_path / "run"
    run_release(release, [f"openai:{MODEL}", "reference"], out, trials=1, workers=1)
    card = json.loads((out / SCORECARD_JSON).read_text())
    by_agent = {a["agent"]: a for a in card["agents"]}
    cost, ref = by_agent[f"openai:{MODEL}"]["cost"], by_agent["reference"]["cost"]
    price = load_prices().table.models[MODEL]
    tin, tout = sum(i for i, _ in billing.served), sum(o for _, o in billing.served)
    exact = (tin * price.input_per_mtok + tout * price.output_per_mtok) / 1_000_000
    assert (cost["tokens_in"], cost["tokens_out"], Decimal(cost["cost"])) == (tin, tout, exact)
    assert cost["successes"] == 2 and Decimal(cost["cost_per_success"]) == (exact / 2).quantize(Decimal("0.000001"))
    assert by_agent[f"openai:{MODEL}"]["outcomes"]["infra_error"] == 1  # scored as a failure, not dropped
    assert ref["cost"] is None and ref["trials_with_usage"] == 0  # a baseline reports no tokens: unknown, not 0
    assert card["prices"]["sha256"] == load_prices().sha256
    md = (out / SCORECARD_MD).read_text()
    assert "## Cost and latency" in md and f"{(exact / 3).quantize(Decimal('0.000001'))} USD" in md
    before = (out / SCORECARD_JSON).read_bytes()
    assert CliRunner().invoke(app, ["score", str(out)]).exit_code == 0
    assert (out / SCORECARD_JSON).read_bytes() == before
