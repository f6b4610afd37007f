"""A reset puts back only the rows the change log names, verified row by row, and falls back to the whole image
whenever the log cannot vouch for the trial; either way every trial starts from the seed."""
from __future__ import annotations

import sqlite3

import pytest

from evalsuite.grading.grader import grade_trial
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.agents.factory import make_agent
from evalsuite.worlds import ResetError, World
from evalsuite.worlds.changes import LOG


@pytest.fixture
def world(ap, tmp_path):
    """A private copy of the AP world: these tests write into trials through the raw connection."""
    tables = {k: v for k, v in ap.tables.items() if k in ap.world.domain.tables}
    w = World.build(ap.world.domain, tables, tmp_path / "w.sqlite")
    w.reset(None)  # the first reset restores the whole image; the ones these tests look at follow the log
    return w


def stored(trial, table: str = "invoices") -> list[tuple]:
    """Rows in storage order (rowid, no ORDER BY): a row put back must keep its place."""
    return trial.db.execute(f"SELECT rowid, * FROM {table}").fetchall()


def assert_seed(world, trial, before):
    assert trial.rows() == world.initial_rows and trial.content_sha256() == world.seed_sha256
    assert trial.changed_keys() == {}
    assert stored(trial) == before


def test_updates_inserts_and_deletes_are_put_back_row_by_row(world):
    before = stored(world.reset(None))
    trial = world.reset(None)
    trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "price_variance"})
    trial.call("route_for_approval", {"invoice_id": "INV-55100", "approver_role": "buyer", "reason": "variance"})
    trial.db.execute("DELETE FROM invoice_lines WHERE invoice_id = 'INV-55100'")
    trial.db.execute("UPDATE invoices SET invoice_id = 'INV-RENAMED' WHERE invoice_id = 'INV-55101'")  # a key change
    trial.db.commit()
    assert set(trial.changed_keys()) == {"invoices", "approval_requests", "invoice_lines"}
    again = world.reset(None)
    assert world.last_reset == "rows"
    assert_seed(world, again, before)


def test_a_reset_after_a_reset_restores_nothing_and_stays_on_rows(world):
    world.reset(None)
    trial = world.reset(None)
    assert world.last_reset == "rows" and trial.content_sha256() == world.seed_sha256


@pytest.mark.parametrize("sabotage", [
    ["CREATE TABLE scratch_notes (note TEXT)", "DROP TABLE vendor_messages"],  # schema change
    ["PRAGMA recursive_triggers = OFF",  # a REPLACE now deletes the conflicting row without a log record
     "INSERT OR REPLACE INTO invoices SELECT * FROM invoices WHERE invoice_id = 'INV-55100'"],
    ["UPDATE invoices SET total = '0.01' WHERE invoice_id = 'INV-55100'",
     f'DELETE FROM "{LOG}"'],  # the log itself written: it no longer vouches for the rows
    ["CREATE TEMP TABLE t AS SELECT * FROM invoices", "UPDATE invoices SET status = 'paid'"],
], ids=["schema change", "pragma", "log tampered", "temp table"])
def test_what_the_log_cannot_vouch_for_restores_the_whole_image(world, sabotage):
    before = stored(world.reset(None))
    trial = world.reset(None)
    for statement in sabotage:
        trial.db.execute(statement)
    trial.db.commit()
    again = world.reset(None)
    assert world.last_reset == "image"
    assert_seed(world, again, before)
    tables = {r[0] for r in again.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "scratch_notes" not in tables and "vendor_messages" in tables


def test_a_row_changed_behind_the_authorizers_back_is_caught_by_the_schema_version(world):
    """Dropping a trigger with the authorizer switched off: the dropped trigger still bumps the schema version."""
    before = stored(world.reset(None))
    trial = world.reset(None)
    trial.db.set_authorizer(None)
    trial.db.execute('DROP TRIGGER "_evs_invoices_update"')
    trial.db.execute("UPDATE invoices SET total = '0.01' WHERE invoice_id = 'INV-55100'")
    trial.db.commit()
    trial.db.set_authorizer(world._authorize)
    assert trial.changed_keys() == {}  # the log saw nothing
    again = world.reset(None)
    assert world.last_reset == "image"
    assert_seed(world, again, before)


def test_a_row_restore_that_does_not_verify_falls_back_to_the_image(world, monkeypatch):
    trial = world.reset(None)
    trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "price_variance"})
    real = world._put_back

    def put_back_wrong(name, keys):  # restores, then spoils the restored row: the digest check must see it
        out = real(name, keys)
        world.trial_db.execute("UPDATE invoices SET hold_reason = 'x' WHERE invoice_id = 'INV-55100'")
        return out

    monkeypatch.setattr(world, "_put_back", put_back_wrong)
    again = world.reset(None)
    assert world.last_reset == "image" and again.content_sha256() == world.seed_sha256


def test_a_world_whose_hash_does_not_match_is_refused_at_every_reset(world):
    wrong = World(world.domain, world.path, seed_sha256="0" * 64)
    for how in ("image", "rows"):  # the second reset restores by rows and is refused all the same
        with pytest.raises(ResetError, match="trial refused"):
            wrong.reset(None)
        assert wrong.last_reset == how


def test_reference_trials_grade_the_same_after_row_resets(ap, world):
    agent = make_agent("reference")
    verdicts = []
    for _ in range(2):
        for task in ap.tasks:
            trial = world.reset(task.role)
            message = agent.run(task, AgentEnv(trial, task.trial_protocol.max_steps))
            verdicts.append((task.task_id, grade_trial(trial, message, task.goal_state, task.role, task.forbidden)))
            assert world.last_reset == "rows"
    half = len(verdicts) // 2
    assert verdicts[:half] == verdicts[half:] and all(v.passed for _, v in verdicts)


def test_the_pristine_copy_refuses_writes_and_carries_the_declared_indexes(ap, tmp_path):
    # A world file written without indexes (an older build) gets them when opened.
    bare = tmp_path / "bare.sqlite"
    with sqlite3.connect(ap.world.path) as src, sqlite3.connect(bare) as dst:
        src.backup(dst)
        indexes = dst.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").fetchall()
        for (name,) in indexes:
            dst.execute(f'DROP INDEX "{name}"')
    w = World(ap.world.domain, bare)
    declared = {i.name for t in w.domain.tables.values() for i in t.indexes}
    have = {r[0] for r in w.pristine_db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert declared and declared <= have
    assert w.seed_sha256 == ap.world.seed_sha256  # an index changes no row
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        w.pristine_db.execute("DELETE FROM invoices")
