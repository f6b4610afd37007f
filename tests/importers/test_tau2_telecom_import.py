"""Import of τ²-bench telecom: the composed set checked against the data, the sample against the base split, the
task records (initialization, goals on both worlds, checks), the bundled suite, a build through every gate with
its strata, and the baselines in the three modes. Expectations come from the data files and TOOLS_SPEC.md."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from import_support import build_as_written

from evalsuite.audit.probes import ColumnValues, probe_task
from evalsuite.audit.users import audit_users
from evalsuite.core.records import TaskRecord
from evalsuite.domains.tau2_telecom import TAU2_HASH
from evalsuite.importers.tau2.importer import Tau2InputError
from evalsuite.importers.tau2.telecom import import_telecom
from evalsuite.pipeline.paths import Paths
from evalsuite.releases.release import Release
from evalsuite.scoring.modes import MODES, with_mode
from evalsuite.sourcing.spec import load_spec
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.replay import replay
from evalsuite.trials.trial import run_trial
from tests.domains.test_tau2_telecom import appendix_a

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "third_party" / "tau2_telecom"
RAW = {t["id"]: t for t in json.loads((SRC / "tasks.json").read_text())}
SPLITS = json.loads((SRC / "split_tasks.json").read_text())


def intent(task_id: str) -> str:
    return task_id[1:task_id.index("]")]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("telecom_import")
    return out, import_telecom(SRC, out)


@pytest.fixture(scope="module")
def tasks(imported) -> dict[str, TaskRecord]:
    return {t.task_id: t for t in read_tasks(imported[0] / "tasks.jsonl")}


def test_the_composed_set_is_the_data_and_the_sample_is_the_base_split(imported):
    _, report = imported
    assert report.full == len(RAW) == 2285 and report.full_equals_source and report.differing_tasks == []
    assert report.verification_failures == {}
    assert report.sampled == len(SPLITS["base"]) == 114 and report.sample_equals_base
    assert report.splits == {"test": len(SPLITS["test"]), "train": len(SPLITS["train"])}
    assert report.categories == dict(sorted(Counter(intent(i) for i in SPLITS["base"]).items()))
    assert sum(s["sampled"] for s in report.strata) == 114
    assert report.initial_tau2_hashes == (TAU2_HASH.initial, TAU2_HASH.initial_user)
    assert report.gold_replay_errors == []
    # §15: the service check already holds after set-up in the 32 unfixable tasks, the overdue-bill one in 7
    assert report.holding_at_start["assert_service_status({'expected_status': 'no_service'})"] == sum(
        1 for t in RAW.values() if "ACTION" in t["evaluation_criteria"]["reward_basis"])
    assert report.holding_at_start["assert_no_overdue_bill({'overdue_bill_id': 'B1234321'})"] == 7


def test_the_hashes_after_initialization_and_gold_are_the_originals(imported):
    _, report = imported
    for task_id, expected in appendix_a().items():  # Appendix A: the base tasks' hashes, read from the spec
        got = report.tau2_hashes[task_id]
        assert [*got.initialized, *got.end] == expected[:4], task_id


def test_each_record_keeps_the_original_task(tasks):
    assert set(tasks) == set(SPLITS["base"])
    for task_id, task in tasks.items():
        raw = RAW[task_id]
        init = raw["initial_state"]["initialization_actions"]
        assert [(c.tool, c.arguments, c.actor == "user") for c in task.initialization.calls] == \
            [(a["func_name"], a["arguments"], a["env_type"] == "user") for a in init]
        gold = raw["evaluation_criteria"]["actions"]
        assert [(c.tool, c.arguments, c.actor == "user") for c in task.reference_solution] == \
            [(a["name"], a["arguments"], a["requestor"] == "user") for a in gold]
        crit = task.evaluation_criteria
        assert crit.reward_basis == raw["evaluation_criteria"]["reward_basis"]
        assert [a.model_dump() for a in crit.env_assertions] == raw["evaluation_criteria"]["env_assertions"]
        sides = {"assistant": task.goal_state.domain_checks, "user": task.goal_state.user_checks}
        for a in crit.env_assertions:  # every env assertion is a check of its own side's world
            assert any(c.name == a.func_name and c.params == a.arguments for c in sides[a.env_type])
        assert task.trigger.text == raw["ticket"] and task.split == ("train" if task_id in SPLITS["train"] else "test")
        assert task.provenance.stratum == {"intent": intent(task_id), "issues": task_id.count("|") + 1,
                                           "persona": task_id.rsplit("PERSONA:", 1)[1].rstrip("]")}
        assert "no_user" in task.mode_policies and task.mode_policies["no_user"] != task.policy


def test_a_task_nothing_on_record_can_fix_needs_the_handoff(tasks):
    unfixable = [t for t in tasks.values() if "ACTION" in t.evaluation_criteria.reward_basis]
    assert len(unfixable) == 20  # README: base 20
    for t in unfixable:
        assert [c.tool for c in t.reference_solution] == ["transfer_to_human_agents"]
        assert [c.name for c in t.goal_state.domain_checks if c.name == "handed_off"] == ["handed_off"]


def test_the_bundled_suite_is_this_import(imported, tasks):
    out, report = imported
    bundled = ROOT / "suites" / "tau2_telecom"
    assert {t.task_id: t for t in read_tasks(bundled / "tasks.jsonl")} == tasks
    for name in ("policy.md", "policy_solo.md", "policy_workflow.md", "policy_workflow_solo.md", "rights.yaml",
                 "deid.yaml", "LICENSE", "tasks_workflow.jsonl"):
        assert (bundled / name).read_bytes() == (out / name).read_bytes(), name
    assert json.loads((bundled / "import_report.json").read_text())["tau2_hashes"] == \
        json.loads(report.model_dump_json())["tau2_hashes"]


def test_the_whole_set_is_written_only_when_asked(imported):
    """The whole composed set (2,285 records, 156 MB, minutes of auditing) is `--full`'s:
    bench/bench_tau2_telecom_full.py imports it and checks every task's gold passes and no-op fails."""
    out, report = imported
    assert report.full_acceptance is None
    assert not (out / "tasks_full.jsonl").exists() and not (out / "suite_full.yaml").exists()


def test_a_folder_that_is_not_the_pinned_snapshot_is_refused_and_nothing_written(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SRC, src)
    (src / "db.toml").write_text((src / "db.toml").read_text().replace("John Smith", "John Smyth"))
    with pytest.raises(Tau2InputError, match=r"files differ from the pinned tau2 telecom snapshot: \['db.toml'\]"):
        import_telecom(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def built(imported, tmp_path_factory) -> tuple[Release, Path]:
    """The imported sample's suite.yaml built as written, through every gate, and its audit.json: `evalsuite import
    tau2-telecom … --out D && evalsuite build D/suite.yaml` (the bundled suite is this import's tasks)."""
    out, report = imported
    home = tmp_path_factory.mktemp("telecom_home")
    release = build_as_written(out / "suite.yaml", report.acceptance, home)
    return release, Paths(load_spec(out / "suite.yaml"), home).audit


def test_the_suite_builds_through_every_gate_with_its_strata(built):
    release, audit_json = built
    assert release.manifest.n_tasks == 114 and not release.manifest.quarantined
    strata = json.loads(audit_json.read_text())["strata"]
    assert sum(s["tasks"] for s in strata) == 114 and all(s["accepted"] == s["tasks"] for s in strata)
    assert {(s["intent"], s["issues"], s["persona"]) for s in strata} == {
        (intent(i), i.count("|") + 1, i.rsplit("PERSONA:", 1)[1].rstrip("]")) for i in SPLITS["base"]}
    assert "## Strata" in (release.path / "audit.md").read_text()


def test_the_baselines_in_the_three_modes(built):
    """The reference passes in every mode; the soloist (every step by the agent, never a word to the user) passes
    with every tool in hand (no_user) and, in dual control, only where a handoff is the whole fix."""
    release, _ = built
    world, tasks = release.open_world(), release.tasks()
    sample = [t for i, t in enumerate(sorted(tasks, key=lambda t: t.task_id)) if i % 6 == 0]
    handoff = {t.task_id for t in sample if "ACTION" in t.evaluation_criteria.reward_basis}
    assert handoff and len(handoff) < len(sample)
    for mode in MODES:
        moded = with_mode(sample, mode)
        for agent in ("reference", "soloist"):
            results = [run_trial(world, t, make_agent(agent), 0) for t in moded]
            assert all(r.mode == (None if mode == "default" else mode) or r.mode == mode for r in results)
            passed = {r.task_id for r in results if r.passed}
            rewarded = {r.task_id for r in results if r.bases and r.bases.reward == "pass"}
            want = {t.task_id for t in sample} if agent == "reference" or mode == "no_user" else handoff
            assert passed == want and rewarded == want, (mode, agent)


def test_no_user_mode_runs_under_the_solo_policy_and_dual_control_keeps_the_phone_the_users(built):
    release, _ = built
    world, task = release.open_world(), release.tasks()[0]
    solo = with_mode([task], "no_user")[0]
    assert solo.policy.doc == "tau2_telecom_policy_solo" and task.policy.doc == "tau2_telecom_policy"
    probe = next(c for c in task.reference_solution if c.actor == "user")

    class Grabby:
        name = "grabby"

        def run(self, task, env):
            self.event = env.call(probe.tool, probe.arguments)
            return ""

    agent = Grabby()
    run_trial(world, task, agent, 0)
    assert agent.event.outcome == "error" and agent.event.error == f"Tool '{probe.tool}' not found."


def test_a_world_that_does_not_initialize_to_its_recorded_hash_is_refused(built):
    release, _ = built
    task = release.tasks()[0]
    bad = task.model_copy(update={"initialization": task.initialization.model_copy(update={"sha256": "0" * 64})})
    result = run_trial(release.open_world(), bad, make_agent("reference"), 0)
    assert result.outcome == "infra_error" and "after the task's initialization" in result.error


def test_the_user_simulator_audit_holds_every_telecom_user_to_its_script(built):
    """Probed on its phone, no scripted user runs a tool unasked: one asked to set 4g_only sets it, and the audit
    matches the call to whichever of the tool's actions (one per argument set) the message asked for."""
    release, _ = built
    tasks = [t for t in release.tasks() if "bad_network_preference" in t.task_id][:6]  # every script asks the same
    report = audit_users(release.open_world(), tasks)
    assert len(report.scripted) == 6 and report.scripted_ok, [f for f in report.scripted if not f.ok][:1]
    assert all(f.actions > 0 for f in report.scripted)


def test_a_reviewers_replay_and_the_grader_probes_set_up_both_worlds(built):
    """`evalsuite replay` and the grader probes run a task as a trial does: its initialization first, a user's step
    on the phone. The reference replayed passes; a refuel of another amount, or a mode other than the gold's, fails."""
    release, _ = built
    world = release.open_world()
    task = next(t for t in release.tasks() if {"refuel_data", "set_network_mode_preference"}
                <= {c.tool for c in t.reference_solution})
    report = replay(world, task, task.reference_solution)
    assert report["passed"] and all(c["outcome"] == "ok" for c in report["calls"]), report["checks"]
    probes, _ = probe_task(world, task, ColumnValues(world))
    assert probes.tried > 0 and probes.passed_anyway == []
