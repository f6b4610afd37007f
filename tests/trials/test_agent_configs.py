"""Agent configs: what a user names becomes an AgentConfig, the agent is built from it (in this process or a
worker), and every trial record and the run identity carry it, so two configs of one name never mix."""
import json
import sys
from pathlib import Path

import pytest
from harness_support import make_release
from scripted_model import Always

from evalsuite.core.identity import AgentConfig, identity_sha256
from evalsuite.releases.release import Release
from evalsuite.releases.runs import RunFolderError, run_release
from evalsuite.scoring.runlog import RUN_JSON, TRACES
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.pool import HarnessError

MCP_AGENT = Path(__file__).parents[2] / "examples" / "mcp_reference_agent.py"
UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing answers chat completions there


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    """Two tasks are enough: each mcp trial starts a Python process."""
    return Release(make_release(ap, tmp_path_factory.mktemp("releases"), n_tasks=2))


def scripted(endpoint, temperature: float, name: str = "scripted") -> AgentConfig:
    """An openai config on the scripted endpoint; every request gets a closing note (no tool calls)."""
    endpoint.script = Always({"content": "nothing to change"})
    return AgentConfig(name=name, kind="openai", model="scripted-model", base_url=endpoint.url,
                       temperature=temperature)


def test_what_a_user_names_becomes_a_config():
    assert AgentConfig.parse("reference") == AgentConfig(name="reference", kind="baseline")
    assert AgentConfig.parse("openai:gpt-4o-mini") == AgentConfig(name="openai:gpt-4o-mini", kind="openai",
                                                                  model="gpt-4o-mini")
    assert AgentConfig.parse("mcp:python agent.py --plan 'a b'") == AgentConfig(
        name="mcp:python agent.py --plan 'a b'", kind="mcp", command=["python", "agent.py", "--plan", "a b"])
    config = AgentConfig(name="hot", kind="openai", model="m", base_url="http://h/v1", temperature=0.7)
    assert AgentConfig.parse(config) is config
    for incomplete in ("openai:", "mcp:  "):
        with pytest.raises(ValueError, match="needs a"):
            AgentConfig.parse(incomplete)


def test_the_relative_file_names_of_an_mcp_command_are_made_absolute_where_evalsuite_runs(tmp_path, monkeypatch):
    """The agent starts in a home of its own, so `examples/agent.py` must mean the file beside the user; a word
    naming no file (an option, a missing file) stays as typed, and a bare program name is looked up on PATH."""
    (tmp_path / "examples").mkdir()
    for name in ("examples/agent.py", "python", "bin/python"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    config = AgentConfig.parse("mcp:python examples/agent.py --plan plan.json -v")
    assert config.command == ["python", str(tmp_path / "examples" / "agent.py"), "--plan", "plan.json", "-v"]
    assert config.name == "mcp:python examples/agent.py --plan plan.json -v"  # the records keep what was typed
    assert AgentConfig.parse("mcp:bin/python ./python /bin/sh").command == [
        str(tmp_path / "bin" / "python"), str(tmp_path / "python"), "/bin/sh"]


@pytest.mark.parametrize("workers", [1, 2], ids=["in_process", "worker_pool"])
def test_an_openai_config_reaches_the_agent_and_every_record(release, endpoint, monkeypatch, workers):
    """Model, base_url and temperature come from the config, in this process and in pool workers alike."""
    monkeypatch.setenv("OPENAI_BASE_URL", UNREACHABLE)  # only the config's base_url reaches the endpoint
    config = scripted(endpoint, 0.7)
    tasks = release.tasks()
    records = run_trials(release.world_ref(), tasks, [config], 1,
                         TrialSettings(release.run_identity(), workers=workers))
    assert [r.agent for r in records] == ["scripted", "scripted"]
    assert all(r.outcome != "infra_error" for r in records), records[0].error
    for r in records:
        assert r.agent_config == config
        assert (r.agent_config.kind, r.agent_config.model, r.agent_config.base_url, r.agent_config.temperature) == \
            ("openai", "scripted-model", endpoint.url, 0.7)
    assert len(endpoint.seen) == len(tasks)
    assert {(body["model"], body["temperature"]) for body in endpoint.seen} == {("scripted-model", 0.7)}


def test_each_agent_of_a_run_is_stamped_with_its_own_config(release, tmp_path):
    """Named on the command line: a baseline stays kind baseline, an mcp: agent is kind mcp with its command."""
    mcp = f"mcp:{sys.executable} {MCP_AGENT}"
    card = run_release(release, ["reference", mcp], tmp_path, trials=1, workers=1)
    task_count = len(release.tasks())
    records = [json.loads(line) for line in (tmp_path / TRACES).read_text().splitlines()]
    assert len(records) == 2 * task_count
    configs = {r["agent"]: r["agent_config"] for r in records}
    assert configs["reference"] == AgentConfig(name="reference", kind="baseline").model_dump(mode="json")
    assert configs[mcp] == AgentConfig(name=mcp, kind="mcp", command=[sys.executable, str(MCP_AGENT)]).model_dump(
        mode="json")
    assert all(r["outcome"] != "infra_error" for r in records if r["agent"] == mcp)  # the program itself ran
    assert {a.agent: a.agent_config for a in card.agents} == configs
    run = json.loads((tmp_path / RUN_JSON).read_text())
    assert run["identity"]["agent_configs"] == configs


def test_two_configs_of_one_name_have_different_identities(release):
    identity = release.run_identity()
    cool, hot = (AgentConfig(name="gpt", kind="openai", model="m", temperature=t) for t in (0.0, 0.7))
    shas = {identity_sha256(identity.with_agents([c]).fields("gpt"), 0) for c in (cool, hot)}
    assert len(shas) == 2
    with pytest.raises(ValueError, match="'gpt' is named by two configs"):
        identity.with_agents([cool, hot])


def test_resuming_a_run_with_another_config_of_the_same_agent_is_refused(release, endpoint, tmp_path):
    world, tasks, identity = release.world_ref(), release.tasks(), release.run_identity()
    cool, hot = scripted(endpoint, 0.0), scripted(endpoint, 0.7)
    first = run_trials(world, tasks, [cool], 1, TrialSettings(identity, out_dir=tmp_path / "traces", workers=1))
    with pytest.raises(HarnessError, match="agent_config differ"):
        run_trials(world, tasks, [hot], 1, TrialSettings(identity, out_dir=tmp_path / "traces", workers=1))
    again = run_trials(world, tasks, [cool], 1, TrialSettings(identity, out_dir=tmp_path / "traces", workers=1))
    assert again == first  # the same config resumes: nothing rerun

    run_release(release, [cool], tmp_path / "run", trials=1, workers=1)
    with pytest.raises(RunFolderError, match=r"agent_config of scripted \(temperature 0.0 then, 0.7 now\) differ"):
        run_release(release, [hot], tmp_path / "run", trials=1, workers=1)
    assert len(endpoint.seen) == 2 * len(tasks)  # neither refused run sent a request
