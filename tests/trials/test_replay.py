"""evalsuite trial replay: given calls on a freshly reset world as the task's role, one JSON object out."""
from __future__ import annotations

import json

import pytest
from suite_support import ROOT

from evalsuite.core.records import Environment
from evalsuite.domains.retail_support import DOMAIN, open_or_build_world
from evalsuite.domains.retail_support.seed import tables
from evalsuite.domains.retail_support.tasks import build_tasks
from evalsuite.trials.replay import ReplayError, find_task, load_calls, load_faults, replay, to_json
from evalsuite.worlds.world import World


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    world = open_or_build_world(tmp_path_factory.getbasetemp() / "retail_support_world.sqlite",
                                ROOT / "suites" / "tau2_retail" / "source")
    env = Environment(image=DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256=world.seed_sha256)
    return world, build_tasks(env)


def test_replay_reports_each_call_the_verdict_and_the_end_hash(setup, tmp_path):
    world, tasks = setup
    task = find_task(tasks, "rs-c-1001-lost-refund")
    refund = next(c for c in task.solution_calls() if c.tool == "issue_refund")
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([refund.model_dump(), refund.model_dump()]))  # a retry with the same key
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"name": "lost", "faults": [{"tool": "issue_refund", "kind": "lost_response"}]}))
    report = json.loads(to_json(replay(world, task, load_calls(calls), load_faults(faults))))
    first, second = report["calls"]
    assert (first["fault"], first["committed"], first["rows_written"]) == ("lost_response", True, 1)
    assert second["outcome"] == "ok" and second["result"]["replayed"] is True  # the key finds the original receipt
    checks = {c["name"]: c["passed"] for c in report["checks"]}
    assert checks["check refund_obligation"] and not report["passed"]  # one refund, but the case is still open
    assert report["end_sha256"] != report["seed_sha256"]
    untouched = replay(world, task, [])
    assert untouched["end_sha256"] == world.seed_sha256 and not untouched["passed"]


def test_bad_input_is_one_line_naming_file_and_field(setup, tmp_path):
    bad = tmp_path / "calls.json"
    bad.write_text('[{"arguments": {}}]')
    with pytest.raises(ReplayError, match=r"calls\.json: calls: 0\.tool: Field required"):
        load_calls(bad)
    with pytest.raises(ReplayError, match="no task 'nope'"):
        find_task(setup[1], "nope")


def test_replay_is_domain_agnostic_tau2_retail_included(tmp_path):
    from evalsuite.domains.retail_support.schema import INHERITED
    from evalsuite.domains.tau2_retail import DOMAIN as TAU2
    from evalsuite.tasks.taskfile import read_tasks

    rows = tables(ROOT / "suites" / "tau2_retail" / "source")
    world = World.build(TAU2, {n: rows[n] for n in INHERITED}, tmp_path / "tau2.sqlite")
    task = read_tasks(ROOT / "suites" / "tau2_retail" / "tasks.jsonl")[0]
    report = replay(world, task, task.solution_calls())
    assert [c["outcome"] for c in report["calls"]] == ["ok"] * len(task.solution_calls())
    assert report["passed"] is all(c["passed"] for c in report["checks"])
    assert json.loads(to_json(report))["end_sha256"] == report["end_sha256"]
