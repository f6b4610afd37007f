"""Model and external agents through the Dagster trial asset: an OpenAI-compatible agent (a local scripted endpoint
that reports token usage, fails some requests) and an MCP agent, on a built release, scored with tokens and cost.

The endpoint key reaches the agent through the `model_endpoint` resource (dg.EnvVar) and nowhere else: it is
looked for in every file the instance and the home hold afterwards (event log, compute logs, traces, scorecards).
"""
from __future__ import annotations

import json
import sys
from decimal import Decimal

import dagster as dg
import dagster_driver
import pytest
import yaml
from pipeline_support import latest
from scripted_model import serve_reference
from suite_support import DEMO_KEY, ROOT, SUITE, copy_suite, rewrite_csv
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.core.prices import load_prices
from evalsuite.pipeline import driver
from evalsuite.pipeline.paths import Paths
from evalsuite.releases.release import Release
from evalsuite.scoring.runlog import SCORECARD_JSON
from evalsuite.sourcing.spec import load_spec
from evalsuite_dagster.definitions import build_defs
from evalsuite_dagster.resources import ModelEndpoint
from evalsuite_dagster.suite.graph import build_suite_graph

SECRET = "sk-evalsuite-test-Zq8UvT3rWm"  # must reach the endpoint and nothing else
MODEL = "gpt-4o-mini"  # priced in the pinned table
AGENTS = [{"name": "reference"},
          {"name": "scripted", "kind": "openai", "model": MODEL},
          # the example MCP client with no plan: it reads its task over MCP and answers without acting
          {"name": "mcp-plain", "kind": "mcp", "sandbox": "none",
           "command": [sys.executable, str(ROOT / "examples" / "mcp_reference_agent.py")]}]


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    """The AP suite cut to two resolved cases (one trial each: an MCP trial starts a Python process), built and
    released by the library driver; spec lists the agents."""
    tmp = tmp_path_factory.mktemp("model_agents")
    spec = copy_suite(tmp / "suite", reference_trials=1, trials=1)
    rewrite_csv(spec.parent / SUITE / "source" / "resolved_cases.csv", lambda rows: rows.__delitem__(slice(2, None)))
    raw = yaml.safe_load(spec.read_text())
    raw["agents"] = AGENTS
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
        out = driver.build(spec, tmp / "home")
    return spec, tmp / "home", out.version


def test_the_endpoint_settings_are_environment_variables_not_values(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    resource = ModelEndpoint.from_env()
    assert resource.api_key == dg.EnvVar("OPENAI_API_KEY") and resource.base_url == ""
    assert SECRET not in repr(resource.settings()) and SECRET not in repr(resource)


@pytest.fixture
def billing(small_release, monkeypatch):
    """The reference-following model for the release's tasks; the environment's key is the secret."""
    _, home, version = small_release
    with serve_reference(monkeypatch, Release(home / "releases" / SUITE / version).tasks(), SECRET) as model:
        yield model


def test_openai_and_mcp_agents_run_through_the_trial_asset_and_are_scored_with_tokens_and_cost(
        small_release, billing, tmp_path):
    spec, home, version = small_release
    tasks = Release(home / "releases" / SUITE / version).tasks()
    billing.flaky, billing.down = {tasks[0].trigger.text}, {tasks[1].trigger.text}
    graph = build_suite_graph(spec)
    defs = build_defs([graph], home=home)
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        instance.add_dynamic_partitions(graph.versions.name, [version])
        instance.add_dynamic_partitions(graph.agents.name, [a["name"] for a in AGENTS])
        for agent in ("scripted", "mcp-plain"):
            key = dg.MultiPartitionKey({"version": version, "agent": agent})
            run = dagster_driver.execute(defs, graph.trials_job, instance, partition_key=key)
            assert run.success, dagster_driver.first_error(run)
        dagster_driver.score(defs, graph, instance, version)  # the scorecard scores the agents that have traces
        trial_meta = latest(instance, graph.key("trial_traces"),
                            dg.MultiPartitionKey({"version": version, "agent": "scripted"})).metadata
        card_meta = latest(instance, graph.key("scorecard"), version).metadata
        cheapest_first = {"ops": {f"{SUITE}__leaderboard": {"config": {"sort_by": "cost_per_success"}}}}
        run = defs.resolve_job_def(graph.leaderboard_job).execute_in_process(instance=instance,
                                                                             run_config=cheapest_first)
        assert run.success
        board = latest(instance, graph.key("leaderboard")).metadata

    assert set(billing.auth) == {f"Bearer {SECRET}"}  # the key reached the endpoint, from the resource
    assert billing.failed.count(tasks[0].trigger.text) == 1  # the 503 was retried, once
    card = json.loads((Paths(load_spec(spec), home).runs / version / SCORECARD_JSON).read_text())
    by_agent = {a["agent"]: a for a in card["agents"]}
    scripted, plain = by_agent["scripted"], by_agent["mcp-plain"]
    assert scripted["outcomes"] == {"pass": 1, "fail": 0, "budget_exhausted": 0, "infra_error": 1}
    assert scripted["tasks_with_infra_error"] == 1  # the task whose endpoint was down: kept, counted, not dropped
    assert plain["outcomes"] == {"pass": 0, "fail": 2, "budget_exhausted": 0, "infra_error": 0}  # graded, not lost
    assert plain["cost"]["trials_with_usage"] == 0 and plain["cost"]["cost"] is None  # its model is not ours to see
    cost = scripted["cost"]
    tokens_in, tokens_out = sum(u[0] for u in billing.served), sum(u[1] for u in billing.served)
    assert (cost["tokens_in"], cost["tokens_out"], cost["model_calls"]) == (tokens_in, tokens_out, len(billing.served))
    price = load_prices().table.models[MODEL]
    exact = (tokens_in * price.input_per_mtok + tokens_out * price.output_per_mtok) / Decimal(1_000_000)
    assert Decimal(cost["cost"]) == exact
    assert Decimal(cost["cost_per_success"]) == exact.quantize(Decimal("0.000001"))  # one passed trial
    assert trial_meta["infra_errors"].value == 1 and trial_meta["tokens_in"].value == tokens_in
    assert "cost per success" in card_meta["cost"].value and f"{exact / 2:.6f}" in card_meta["cost"].value
    per_trial = (exact / 2).quantize(Decimal("0.000001"))
    assert card_meta["cost per trial scripted"].value == float(per_trial)  # a number: charted across versions
    ranked = [line.split(" | ")[1] for line in board["leaderboard"].value.splitlines()[2:]]
    assert board["sorted_by"].value == "cost_per_success" and ranked == ["scripted", "mcp-plain"]  # unpriced last
    assert f"{exact.quantize(Decimal('0.000001'))} USD" in board["leaderboard"].value
    leaked = [p for p in [*tmp_path.rglob("*"), *home.rglob("*")] if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert not leaked, leaked

    # the same leaderboard on the command line, from the scorecards the assets wrote
    cli = CliRunner().invoke(app, ["leaderboard", str(spec), "--home", str(home), "--sort-by", "cost_per_success"])
    assert cli.exit_code == 0, cli.output
    rows = [line.split(" | ") for line in cli.output.splitlines() if line.startswith(f"| {version}")]
    assert [r[1] for r in rows] == ["scripted", "mcp-plain"]
    assert f"{exact.quantize(Decimal('0.000001'))} USD" in cli.output and "leaderboard.png" in cli.output
    bad = CliRunner().invoke(app, ["leaderboard", str(spec), "--home", str(home), "--sort-by", "price"])
    assert bad.exit_code == 2 and "--sort-by" in bad.output and "cost_per_success" in bad.output
    empty = CliRunner().invoke(app, ["leaderboard", str(spec), "--home", str(tmp_path / "nowhere")])
    assert empty.exit_code == 2 and "no scored release of suite ap_exceptions" in empty.output
    assert not (tmp_path / "nowhere").exists()
