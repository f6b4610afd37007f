"""Reset restores only what a trial could have written, and still every trial starts from the seed."""
from __future__ import annotations

import pytest

from evalsuite.worlds import World


@pytest.fixture
def world(ap, tmp_path):
    """A private copy of the AP world: these tests write into trials through the raw connection."""
    tables = {k: v for k, v in ap.tables.items() if k in ap.world.domain.tables}
    return World.build(ap.world.domain, tables, tmp_path / "w.sqlite")


def unordered_ids(trial) -> list[str]:
    return [r[0] for r in trial.db.execute("SELECT invoice_id FROM invoices")]  # storage order, no ORDER BY


def test_rows_a_trial_wrote_deleted_or_added_are_back_at_the_next_reset(world):
    pristine_order = unordered_ids(world.reset(None))
    trial = world.reset(None)
    trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "price_variance"})
    trial.db.execute("DELETE FROM invoice_lines")
    trial.db.execute("INSERT INTO payments (payment_id, invoice_id, amount, currency) "
                     "VALUES ('P-X', 'INV-55100', '1.00', 'USD')")
    trial.db.commit()
    assert trial.content_sha256() != world.seed_sha256 and trial.changed_keys()
    again = world.reset(None)
    assert again.rows() == world.initial_rows and again.content_sha256() == world.seed_sha256
    assert again.changed_keys() == {}  # the change log starts empty, so grades see only this trial's writes
    assert unordered_ids(again) == pristine_order  # rows come back in their stored order too


def test_a_schema_change_in_a_trial_is_undone_by_restoring_the_whole_image(world):
    trial = world.reset(None)
    trial.db.execute("CREATE TABLE scratch_notes (note TEXT)")
    trial.db.execute("DROP TABLE vendor_messages")
    trial.db.commit()
    again = world.reset(None)
    tables = {r[0] for r in again.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "scratch_notes" not in tables and "vendor_messages" in tables
    assert again.content_sha256() == world.seed_sha256
