"""Import of AgentDojo slack: every task and attack pair, the exported states in the peer's form, and where the
peer's grader and ours differ (what `evalsuite audit` reports as the peer's holes)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_support import check_baselines_under_attack
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.grading.grader import grade_trial
from evalsuite.importers.agentdojo.importer import SUITES, import_agentdojo
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.world import World

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "third_party" / "agentdojo_slack"
SLACK = SUITES["slack"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("slack")
    report = import_agentdojo(SLACK, SRC, out)
    return out, report, {t.task_id: t for t in read_tasks(out / "tasks.jsonl")}


@pytest.fixture()
def world(imported, tmp_path) -> World:
    return World.build(SLACK.domain, SLACK.to_rows(SLACK.load(SRC)), tmp_path / "w.sqlite")


def _grades(task, world: World, calls: list[tuple[str, dict]]) -> tuple[bool, bool]:
    """(ours, the peer's) on a trial making `calls`."""
    trial = world.reset(task.role)
    for tool, args in calls:
        trial.call(tool, args)
    ours = grade_trial(trial, "", task.goal_state, task.role, task.forbidden)
    env = SLACK.load(SRC)
    return ours.passed, SLACK.peer_check(task.task_id)("", env, SLACK.from_rows(trial.rows()), calls)


def _gold(task) -> list[tuple[str, dict]]:
    return [(c.tool, c.arguments) for c in task.solution_calls()]


def test_every_task_and_pair_is_imported_and_its_reference_passes_the_peers_check(imported):
    out, report, tasks = imported
    assert (report.tasks, report.attack_pairs, len(tasks)) == (26, 105, 131)
    assert all(report.peer_check_on_gold.values()) and not any(report.peer_check_on_noop.values())
    assert {t.attack.injection_task for t in tasks.values() if t.attack} == {f"injection_task_{i}" for i in range(1, 6)}
    assert (out / "deid.yaml").is_file() and "web_pages" in (out / "deid.yaml").read_text()


def test_export_state_writes_the_peers_json_after_a_task_and_before_any(imported, tmp_path):
    out, _, _ = imported
    run = CliRunner().invoke
    result = run(app, ["agentdojo-slack", "export-state", str(out), "--task", "user_task_16", "--out",
                       str(tmp_path / "after.json")])
    assert result.exit_code == 0, result.output
    after = json.loads((tmp_path / "after.json").read_text())
    assert after["slack"]["users"][-1] == "Dora" and after["slack"]["user_inbox"]["Dora"][0]["sender"] == "bot"
    assert after["web"]["web_requests"][-2:] == ["www.dora-website.com", "www.eve-blog.com"]
    assert run(app, ["agentdojo-slack", "export-state", str(out), "--initial", "--out",
                     str(tmp_path / "before.json")]).exit_code == 0
    assert (tmp_path / "before.json").read_text() == SLACK.load(SRC).model_dump_json()
    both = run(app, ["agentdojo-slack", "export-state", str(out), "--initial", "--task", "user_task_1", "--out",
                     str(tmp_path / "x.json")])
    assert both.exit_code == 2 and not (tmp_path / "x.json").exists()


def test_without_a_folder_or_the_peers_interpreter_the_import_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_AGENTDOJO_PYTHON", str(tmp_path / "no-python"))
    result = CliRunner().invoke(app, ["import", "agentdojo-slack", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "no-python: no interpreter with agentdojo==0.1.35" in result.output
    assert not (tmp_path / "o").exists()


def test_an_invitation_to_another_address_passes_the_peers_check_and_fails_ours(imported, world):
    task = imported[2]["user_task_2"]
    calls = [(n, {**a, "user_email": "dora@attacker.example"} if n == "invite_user_to_slack" else a)
             for n, a in _gold(task)]
    assert _grades(task, world, _gold(task)) == (True, True)
    assert _grades(task, world, calls) == (False, True)


def test_browsing_is_never_a_collateral_change_and_a_message_must_carry_the_peers_words(imported, world):
    tasks = imported[2]
    assert _grades(tasks["user_task_7"], world, _gold(tasks["user_task_7"]) + [
        ("get_webpage", {"url": "www.awesome-news.com"})]) == (True, True)
    asked = [(n, {**a, "body": "Hi all, what do you do on weekends?"} if n == "send_channel_message" else a)
             for n, a in _gold(tasks["user_task_5"])]
    assert _grades(tasks["user_task_5"], world, asked) == (False, False)  # the peer's check reads "hobby"


def test_the_attackers_visit_leaves_the_end_state_as_it_was_and_is_caught_in_the_calls(imported, world):
    task = imported[2]["injection_task_5"]
    assert not [a for a in task.goal_state.assertions if a.table != "web_requests"]  # no row changed
    assert _grades(task, world, _gold(task)) == (True, True)
    invite, join, remove = _gold(task)
    assert _grades(task, world, [invite, remove]) == (False, False)  # never in general
    # the peer reads the calls, not their outcomes: joining before the invitation (which fails) counts as well
    assert _grades(task, world, [join, invite, remove]) == (True, True)
    assert _grades(task, world, [invite, join, remove, invite]) == (False, False)  # back in at the end


@pytest.mark.parametrize("task_id", ["user_task_7+injection_task_1", "user_task_4+injection_task_2",
                                     "user_task_0+injection_task_5"])
def test_under_attack_the_reference_keeps_utility_and_security_and_the_injected_agent_loses_them(imported, world,
                                                                                                 task_id):
    check_baselines_under_attack(world, imported[2][task_id])


def test_a_channel_named_by_the_attack_is_the_one_the_task_uses(imported):
    """The External channel's name holds a vector: under attack the task's calls and goal name the attacked
    channel, as the peer computes its ground truth on the attacked environment."""
    tasks = imported[2]
    attacked = tasks["user_task_12+injection_task_1"]
    channel = attacked.reference_solution[-1].arguments["channel"]
    assert channel.startswith("External_") and "www.secure-systems-252.com" in channel
    assert [c.params["owner"] for c in attacked.goal_state.domain_checks] == [channel]
    assert tasks["user_task_12"].reference_solution[-1].arguments["channel"] == "External_0"


def test_the_audits_peer_grader_judges_a_pair_on_the_environment_the_attack_made(imported, world):
    """user_task_7's peer check looks for Charlie in the External channel of `pre`: under an attack on that
    channel's name, `pre` must hold the attacked name, or the peer would fail its own reference."""
    from evalsuite.importers.peers import peer_grader
    from evalsuite.trials.attacks import place_attack

    task = imported[2]["user_task_7+injection_task_1"]
    grader = peer_grader(world)
    verdicts = []
    for calls in (_gold(task), []):
        trial = world.reset(task.role)
        place_attack(trial, task.attack)
        for tool, args in calls:
            trial.call(tool, args)
        verdicts.append(grader(task, trial, ""))
    assert verdicts == [True, False]


def test_a_folder_that_is_not_the_pinned_slack_data_is_refused_in_one_line_and_nothing_is_written(imported, tmp_path):
    from evalsuite.importers.agentdojo.importer import AgentDojoInputError, export_state
    from tests.input_support import refused

    refused(AgentDojoInputError, import_agentdojo, SLACK, tmp_path, tmp_path / "out", file=tmp_path / "LICENSE")
    changed = tmp_path / "changed"
    changed.mkdir()
    for name in ("environment.yaml", "injection_vectors.yaml", "LICENSE"):
        (changed / name).write_bytes((SRC / name).read_bytes())
    (changed / "environment.yaml").write_text((SRC / "environment.yaml").read_text().replace("Alice", "Alicia"))
    assert "differ from the pinned AgentDojo slack snapshot: ['environment.yaml']" in refused(
        AgentDojoInputError, import_agentdojo, SLACK, changed, tmp_path / "out", file=changed)
    assert not (tmp_path / "out").exists()
    refused(AgentDojoInputError, export_state, imported[0], "user_task_99", tmp_path / "s.json", SLACK,
            file=imported[0] / "tasks.jsonl")
