"""Import and audit of τ²-bench retail: outputs, derived goal states, gold replay findings, exported states."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from import_support import assert_bundled_is_written, build_as_written

from evalsuite.core.records import TaskRecord
from evalsuite.domains.tau2_retail import DOMAIN, TAU2_HASH
from evalsuite.grading.grader import grade, grade_trial
from evalsuite.importers.tau2.importer import Tau2InputError, export_state, import_tau2
from evalsuite.importers.tau2.sources import AIRLINE, RETAIL
from evalsuite.sourcing.policies import load_policy
from evalsuite.sourcing.rights import load_manifest
from evalsuite.sourcing.snapshot import frame_rows
from evalsuite.sourcing.spec import load_spec
from evalsuite.worlds.world import World

SRC = Path(__file__).resolve().parents[2] / "third_party" / "tau2_retail"
TABLES = ["fulfillments", "order_items", "orders", "payment_methods", "payments", "products", "user_orders", "users",
          "variants"]


@pytest.fixture(scope="module")
def imported(tau2_retail_import):
    return tau2_retail_import


@pytest.fixture(scope="module")
def tasks(imported) -> dict[str, TaskRecord]:
    out, _ = imported
    records = [TaskRecord.model_validate_json(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    return {t.task_id: t for t in records}


@pytest.fixture(scope="module")
def world(imported) -> World:
    return World(DOMAIN, imported[0] / "world.sqlite")


def _run(world, task, calls):
    trial = world.reset(task.role)
    for call in calls:
        trial.call(call.tool, call.arguments)
    return trial


def _said(task) -> str:
    return " ".join(o.value for o in task.goal_state.required_outputs)


def test_outputs(imported):
    out, report = imported
    assert sorted(p.stem for p in (out / "source").glob("*.parquet")) == TABLES
    assert {t: len(pd.read_parquet(out / "source" / f"{t}.parquet")) for t in TABLES} == report.rows
    rights = load_manifest(out / "rights.yaml")
    assert rights.licensor == "Sierra Research" and not rights.personal_data and rights.license_ref.startswith("MIT")
    assert rights.permitted_uses == {"build_environments", "derive_tasks", "redistribute"}
    assert (out / "LICENSE").read_bytes() == (SRC / "LICENSE").read_bytes()
    policy = load_policy(out / "policy.md")
    assert policy.version == "1.0.0" and str(policy.effective_from) == "2026-08-18"
    assert [c.id for c in policy.clauses] == [f"R-{n}" for n in range(1, 13)]
    assert policy.clauses[6].text.startswith("Cancel pending order. An order can only be cancelled")
    spec = load_spec(out / "suite.yaml")
    assert spec.domain == "tau2_retail" and spec.acceptance.reference_trials == 8 and spec.derivation.tasks
    assert report.initial_tau2_hash == TAU2_HASH.initial
    assert json.loads((out / "import_report.json").read_text())["tasks"] == 114


def test_the_import_builds_as_written(imported, tmp_path):
    """`evalsuite import tau2-retail … --out D && evalsuite build D/suite.yaml`: 41 of 114 quarantined (15 whose gold
    raises, 29 trivially passable, 3 both) within the 36% the spec allows."""
    out, report = imported
    audit = report.acceptance
    assert audit.max_quarantined_fraction == 0.36 and len(audit.quarantined) == 41
    assert {g: n for g, n in audit.gates.items() if n} == {"reference_solvable": 15, "not_trivially_passable": 29}
    build_as_written(out / "suite.yaml", audit, tmp_path / "home")


def test_the_bundled_suite_is_this_import(imported):
    assert_bundled_is_written(Path(__file__).resolve().parents[2] / "suites" / "tau2_retail", imported[0])


def test_parquet_sources_rebuild_the_same_world(imported, world, tmp_path):
    out, _ = imported
    rows = {t: frame_rows(pd.read_parquet(out / "source" / f"{t}.parquet")) for t in TABLES}
    assert World.build(DOMAIN, rows, tmp_path / "again.sqlite").content_sha256 == world.seed_sha256


def test_tasks(tasks, imported):
    _, report = imported
    assert len(tasks) == 114 and report.splits == {"test": 40, "train": 74}
    t = tasks["0"]
    assert (t.domain, t.split, t.category, t.trigger.type) == ("tau2_retail", "train", "exchange", "conversation")
    assert t.trigger.text.startswith("You received your order #W2378156")
    assert "Known info: You are Yusuf Rossi in zip code 19122." in t.user_scenario.instructions
    assert t.user_scenario.simulator.model and [c.action_id for c in t.solution_calls()][-1] == "0_4"
    assert tasks["105"].solution_calls()[0].action_id == "106_0"  # tau2's shifted action ids are kept
    assert [o.value for o in tasks["4"].goal_state.required_outputs] == ["10"]
    crit = tasks["4"].evaluation_criteria  # the original's criteria, its NL assertions graded by the pinned judge
    assert crit.reward_basis == ["DB", "NL_ASSERTION"] and "10 t-shirt options" in crit.nl_assertions[0]
    assert crit.judge is not None and not any(a.startswith("NL assertion") for a in tasks["4"].goal_state.annotations)
    assert any(a.startswith("upstream issue issue_2b74ee61") for a in tasks["4"].goal_state.annotations)


def test_goal_state_of_an_exchange(tasks):
    goal = tasks["0"].goal_state
    assert [(a.table, a.key, a.clause) for a in goal.assertions] == [("orders", {"order_id": "#W2378156"}, "R-12")]
    assert goal.assertions[0].expect == {
        "status": "exchange requested", "exchange_items": '["1151293680", "4983901480"]',
        "exchange_new_items": '["7706410293", "7747408585"]', "exchange_payment_method_id": "credit_card_9513926",
        "exchange_price_difference": -16.63}
    assert "orders" not in goal.unchanged_tables and "payments" in goal.unchanged_tables


def test_goal_state_keeps_the_last_variant_quirk(tasks):
    # Task 20 (§7): the modified lines all carry the makeup kit's price and options.
    items = [a for a in tasks["20"].goal_state.assertions if a.table == "order_items"]
    assert len(items) == 4 and {a.expect["price"] for a in items} == {261.11}
    assert all(a.clause == "R-10" for a in items)
    inserted = [a for a in tasks["20"].goal_state.assertions if a.table == "payments"]
    assert inserted[0].expect == {"transaction_type": "payment", "amount": 71.96000000000001,
                                  "payment_method_id": "gift_card_4332117"}


def test_every_reference_passes_its_goal_and_row_level_grading_equals_a_whole_table_diff(tasks, world):
    ordered = list(tasks.values())
    for task, other in zip(ordered, ordered[1:] + ordered[:1]):
        # The reference, doing nothing, and another task's gold (collateral changes, failed assertions).
        for calls in (task.solution_calls(), [], other.solution_calls()):
            trial = _run(world, task, calls)
            fast = grade_trial(trial, _said(task), task.goal_state, task.role, task.forbidden)
            whole = grade(world.schemas, world.initial_rows, trial.rows(), trial.trace, _said(task),
                          task.goal_state, task.role, task.forbidden)
            assert fast == whole, task.task_id
        assert grade_trial(_run(world, task, task.solution_calls()),
            _said(task), task.goal_state, task.role, task.forbidden).passed, task.task_id


def test_doing_nothing_fails_write_tasks_and_passes_no_op_ones(tasks, world, imported):
    _, report = imported
    for task in tasks.values():
        trial = world.reset(task.role)
        verdict = grade_trial(trial, _said(task), task.goal_state, task.role, task.forbidden)
        assert verdict.passed == (task.task_id in report.noop_gold_tasks), task.task_id
    assert report.noop_gold_tasks == ["10", "12", "24", "25", "50", "57", "62", "65", "67", "68", "105"]


def test_tasks_without_gold_writes_keep_the_initial_hash(tasks, imported):
    _, report = imported
    writes = set(DOMAIN.write_tools())
    readonly = [t for t, task in tasks.items() if not any(c.tool in writes for c in task.solution_calls())]
    assert readonly == ["10", "12", "24", "25", "50", "57", "62", "65", "67", "68"]
    assert all(report.gold_end_tau2_hash[t] == TAU2_HASH.initial for t in readonly)
    # Audit finding: five pairs of tasks expect the very same end state (variants of one scenario).
    assert report.shared_gold_end_states == [["36", "37"], ["41", "42"], ["71", "72"], ["83", "84"], ["96", "97"]]


def test_empty_gold_tasks(tasks, world, imported):
    _, report = imported
    assert report.empty_gold_tasks == ["24", "57"]
    for tid in ("24", "57"):
        task = tasks[tid]
        assert task.solution_calls() == [] and task.category == "no_action" and not task.goal_state.assertions
        assert task.goal_state.unchanged_tables == list(world.schemas)
        assert report.gold_end_tau2_hash[tid] == TAU2_HASH.initial
    # Task 24: the user backs out of cancelling the grill; a cancellation anyway is caught.
    trial = world.reset(tasks["24"].role)
    assert trial.call("cancel_pending_order", {"order_id": "#W3561391", "reason": "no longer needed"}).outcome == "ok"
    verdict = grade_trial(trial, _said(tasks["24"]), tasks["24"].goal_state, tasks["24"].role)
    assert not verdict.passed and {c.name for c in verdict.failures()} >= {"unchanged orders", "no collateral change"}
    assert not grade_trial(world.reset(tasks["24"].role), "", tasks["24"].goal_state, tasks["24"].role).passed


def test_gold_replay_errors_are_reported(imported, tasks):
    _, report = imported
    found = [(e.task_id, e.action_id, e.kind, e.error) for e in report.gold_replay_errors]
    writes = [f for f in found if f[2] == "write"]
    assert writes == [("64", "64_6", "write", "Non-delivered order cannot be exchanged"),
                      ("105", "106_0", "write", "Insufficient gift card balance to pay for the price difference")]
    assert len(found) == 18 and ("46", "46_1", "read", "Order not found") in found
    for tid, aid, _, error in found:
        assert any(n.startswith(f"gold_replay_error {aid} ") and error in n for n in tasks[tid].goal_state.annotations)


def test_exported_state_hashes_as_tau2_does(imported, tmp_path):
    out, report = imported
    for tid in ("0", "20", "64", "105"):
        dest = tmp_path / f"{tid}.json"
        got = export_state(RETAIL, out, tid, dest)
        assert got == TAU2_HASH.hash_db_json(json.loads(dest.read_text())) == report.gold_end_tau2_hash[tid]
    assert report.gold_end_tau2_hash["105"] == TAU2_HASH.initial  # its one write fails
    export_state(RETAIL, out, "24", tmp_path / "24.json")
    assert (tmp_path / "24.json").read_text() == (SRC / "db.json").read_text()  # untouched: db.json byte for byte
    with pytest.raises(Tau2InputError, match="no task '999'"):
        export_state(RETAIL, out, "999", tmp_path / "x.json")


@pytest.mark.parametrize("source", [RETAIL, AIRLINE], ids=lambda s: s.suite)
def test_tampered_source_is_refused(tmp_path, source):
    src = SRC.parent / source.suite
    for name in ("db.json", "tasks.json", "split_tasks.json", "LICENSE"):
        (tmp_path / name).write_bytes((src / name).read_bytes())
    (tmp_path / "policy.md").write_text((src / "policy.md").read_text() + "\nBe generous with refunds.\n")
    with pytest.raises(ValueError, match=r"differ from the pinned tau2 snapshot: \['policy.md'\]"):
        import_tau2(source, tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()
