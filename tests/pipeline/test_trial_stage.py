"""The trial stage the Dagster assets run: each agent of the spec is run as configured there, and says so."""
from __future__ import annotations

import json
import shutil

import yaml
from scripted_model import Always
from suite_support import DEMO_KEY

from evalsuite.core.identity import AgentConfig
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages import scorecard, trial_traces
from evalsuite.sourcing.spec import load_spec
from evalsuite.trials.agents.endpoint import Endpoint


def test_a_spec_agent_runs_with_its_model_endpoint_and_temperature(built, endpoint, tmp_path, monkeypatch):
    spec_path, home = built
    shutil.copytree(spec_path.parent, tmp_path / "suite")
    shutil.copytree(home, tmp_path / "home")
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # only the spec's base_url answers
    endpoint.script = Always({"content": "nothing to change"})
    raw = yaml.safe_load((tmp_path / "suite" / spec_path.name).read_text())
    raw["agents"] = [{"name": "reference"}, {"name": "scripted", "kind": "openai", "model": "scripted-model",
                                             "base_url": endpoint.url, "temperature": 0.3}]
    (tmp_path / "suite" / spec_path.name).write_text(yaml.safe_dump(raw))
    spec = load_spec(tmp_path / "suite" / spec_path.name)
    paths = Paths(spec, tmp_path / "home")
    version = next((paths.releases / spec.name).iterdir()).name

    out = trial_traces.run(spec, paths, version, "scripted", workers=1)
    trial_traces.run(spec, paths, version, "reference", workers=1)
    expected = AgentConfig(name="scripted", kind="openai", model="scripted-model", base_url=endpoint.url,
                           temperature=0.3).model_dump(mode="json")
    records = [json.loads(line) for line in out.metadata["traces"].read_text().splitlines()]
    assert records and all(r["agent_config"] == expected for r in records)
    assert {(b["model"], b["temperature"]) for b in endpoint.seen} == {("scripted-model", 0.3)}
    card = json.loads((scorecard.run(spec, paths, version).metadata["scorecard"]).with_suffix(".json").read_text())
    configs = {a["agent"]: a["agent_config"] for a in card["agents"]}
    assert configs == {"scripted": expected, "reference": {**expected, "name": "reference", "kind": "baseline",
                                                            "model": None, "base_url": None, "temperature": 0.0}}


def test_pool_workers_use_the_endpoint_settings_of_the_resource_not_the_environment(built, endpoint, tmp_path,
                                                                                     monkeypatch):
    """The Dagster ModelEndpoint resource hands the stage its settings; the trials run in worker processes,
    which must get them too, not fall back to OPENAI_BASE_URL / OPENAI_API_KEY."""
    spec_path, home = built
    shutil.copytree(spec_path.parent, tmp_path / "suite")
    shutil.copytree(home, tmp_path / "home")
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing answers here
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    endpoint.script = Always({"content": "nothing to change"})
    raw = yaml.safe_load((tmp_path / "suite" / spec_path.name).read_text())
    raw["agents"] = [{"name": "scripted", "kind": "openai", "model": "scripted-model"}]
    (tmp_path / "suite" / spec_path.name).write_text(yaml.safe_dump(raw))
    spec = load_spec(tmp_path / "suite" / spec_path.name)
    paths = Paths(spec, tmp_path / "home")
    version = next((paths.releases / spec.name).iterdir()).name

    settings = Endpoint(api_key="sk-from-the-resource", base_url=endpoint.url, max_retries=0)
    out = trial_traces.run(spec, paths, version, "scripted", workers=2, model_endpoint=settings)
    assert out.metadata["infra_errors"] == 0 and out.metadata["trials"] > 2
    assert len(endpoint.seen) >= out.metadata["trials"]
    assert {h["Authorization"] for h in endpoint.headers_seen} == {"Bearer sk-from-the-resource"}
    assert "sk-from-the-resource" not in out.metadata["traces"].read_text()
