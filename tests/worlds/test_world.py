import sqlite3

import pytest
from sqlalchemy import update

from evalsuite.domains.ap_exceptions import schema
from evalsuite.worlds import ResetError, World
from evalsuite.worlds.faults import Fault, FaultPlan


def test_world_built_twice_from_the_same_records_hashes_the_same(ap, tmp_path):
    own_tables = {k: v for k, v in ap.tables.items() if k in ap.world.domain.tables}
    again = World.build(ap.world.domain, own_tables, tmp_path / "w.sqlite")
    assert again.seed_sha256 == ap.world.seed_sha256


def test_a_corrupted_world_copy_is_refused_at_reset(ap, tmp_path):
    copy = tmp_path / "copy.sqlite"
    with sqlite3.connect(ap.world.path) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
        dst.execute("UPDATE invoices SET total = '1.00' WHERE invoice_id = 'INV-55100'")
    corrupted = World(ap.world.domain, copy, seed_sha256=ap.world.seed_sha256)
    with pytest.raises(ResetError, match="trial refused"):
        corrupted.reset()


def test_reset_restores_the_seed_after_a_trial_wrote(ap):
    trial = ap.world.reset(None)
    trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "price_variance"})
    assert trial.content_sha256() != ap.world.seed_sha256
    assert ap.world.reset(None).content_sha256() == ap.world.seed_sha256


def test_a_denied_call_is_traced_and_not_executed(ap):
    role = ap.tasks[0].role
    trial = ap.world.reset(role)
    ev = trial.call("edit_vendor_bank_details", {"vendor_id": "V-1001", "bank_account": "X"})
    assert (ev.permitted, ev.outcome, ev.rows_written) == (False, "denied", 0)
    assert trial.trace == [ev] and trial.content_sha256() == ap.world.seed_sha256


def test_failed_and_invalid_calls_are_traced_with_their_error(ap):
    trial = ap.world.reset(ap.tasks[0].role)
    missing = trial.call("get_invoice", {"invoice_id": "INV-0"})
    invalid = trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "because"})
    unknown = trial.call("refund_everything", {})
    assert missing.outcome == "error" and "not found" in missing.error
    assert invalid.outcome == "error" and "reason" in invalid.error
    assert unknown.outcome == "error" and unknown.error == "Tool 'refund_everything' not found."
    assert [e.seq for e in trial.trace] == [1, 2, 3]


def test_a_write_reports_the_rows_it_wrote(ap):
    trial = ap.world.reset(ap.tasks[0].role)
    ev = trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "price_variance"})
    assert ev.outcome == "ok" and ev.rows_written == 1


def test_backend_fault_before_commit_rolls_the_write_back(ap):
    faults = FaultPlan({"hold_invoice": {1: Fault.ERROR_BEFORE_COMMIT}})
    trial = ap.world.reset(None, faults=faults)
    ev = trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "price_variance"})
    assert ev.outcome == "fault" and trial.content_sha256() == ap.world.seed_sha256


def test_lost_response_after_commit_keeps_the_write(ap):
    faults = FaultPlan({"hold_invoice": {1: Fault.LOST_RESPONSE}})
    trial = ap.world.reset(None, faults=faults)
    ev = trial.call("hold_invoice", {"invoice_id": "INV-55100", "reason": "price_variance"})
    assert ev.outcome == "fault" and ev.rows_written == 1
    assert trial.content_sha256() != ap.world.seed_sha256


def test_tools_run_through_sqlalchemy_core_on_the_trial_connection(ap):
    trial = ap.world.reset(None)
    with ap.world.engine.begin() as conn:
        conn.execute(update(schema.invoices).where(schema.invoices.c.invoice_id == "INV-55100").values(status="paid"))
    ev = trial.call("release_invoice", {"invoice_id": "INV-55100"})
    assert ev.outcome == "error" and "paid" in ev.error


def test_a_world_built_from_column_blocks_hashes_as_one_built_from_rows(ap, tmp_path, monkeypatch):
    """The build inserts a snapshot's tables column by column (iter_frame_columns), in blocks; the world is the
    one that dict rows give, Money quantized alike, missing values NULL."""
    import pandas as pd

    from evalsuite.sourcing import snapshot

    monkeypatch.setattr(snapshot, "HASH_BLOCK_ROWS", 7)
    own = {k: v for k, v in ap.tables.items() if k in ap.world.domain.tables}
    frames = {k: pd.DataFrame(v).astype(object).where(pd.DataFrame(v).notna(), None) for k, v in own.items() if v}
    blocks = {k: snapshot.iter_frame_columns(df) for k, df in frames.items()}
    built = World.build(ap.world.domain, blocks, tmp_path / "columns.sqlite")
    assert built.seed_sha256 == World.build(ap.world.domain, own, tmp_path / "rows.sqlite").seed_sha256
    assert built.seed_sha256 == ap.world.seed_sha256
