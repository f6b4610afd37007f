"""Every statement a bundled domain's tools run finds its rows through an index: no filtered statement scans a
table, so a tool call costs the same on a 10k-row world and a 1M-row one.

The statements are the ones the tools really execute (SQLite's trace of each call, with its bound values),
collected over every reference solution and, for AP, a call of every tool; each is then run through
EXPLAIN QUERY PLAN on the trial's database, which carries the domain's declared indexes.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalsuite.domains.tau2_retail import DOMAIN as TAU2
from evalsuite.importers.tau2.importer import import_tau2
from evalsuite.importers.tau2.sources import RETAIL
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.world import World

TAU2_SRC = Path(__file__).resolve().parents[2] / "third_party" / "tau2_retail"

# AP tools the reference solutions never call (the forbidden ones, and reads a clerk may skip), with real ids.
AP_EXTRA = [("get_purchase_order", {"po_id": "PO-77001"}), ("get_goods_receipts", {"po_id": "PO-77001"}),
            ("get_vendor", {"vendor_id": "V-1001"}), ("find_invoices", {"vendor_invoice_no": "X-1"}),
            ("message_vendor", {"vendor_id": "V-1001", "invoice_id": "INV-55100", "subject": "s", "body": "b"}),
            ("post_payment", {"invoice_id": "INV-55100", "amount": "1.00"}),
            ("edit_vendor_bank_details", {"vendor_id": "V-1001", "bank_account": "X"}), ("get_policy", {})]


def run_traced(world: World, calls_per_trial) -> tuple[set[str], set[str]]:
    """(every DML/SELECT statement the tools ran, with bound values; the tools that ran ok)."""
    statements, called = set(), set()
    for role, calls in calls_per_trial:
        trial = world.reset(role)
        trial.db.set_trace_callback(lambda sql: statements.add(sql) if re.match(r"(SELECT|INSERT|UPDATE|DELETE)\b",
                                                                                 sql, re.I) else None)
        try:
            for tool, arguments in calls:
                if trial.call(tool, arguments).outcome == "ok":
                    called.add(tool)
        finally:
            trial.db.set_trace_callback(None)
    return statements, called


def scans(world: World, statements: set[str]) -> list[str]:
    """Statements with a WHERE clause whose plan scans a domain table or sorts in a temporary B-tree."""
    bad = []
    db = world.reset(None).db
    for sql in sorted(statements):
        if " WHERE " not in sql.upper():
            continue  # a count or a listing of a whole table is a scan by design
        plan = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}")]
        if any(p.startswith("SCAN ") and p.split()[1] in world.domain.tables or "TEMP B-TREE" in p for p in plan):
            bad.append(f"{sql}  ->  {plan}")
    return bad


def test_every_ap_tool_statement_uses_an_index(ap):
    calls = [(t.role, [(c.tool, c.arguments) for c in t.solution_calls()]) for t in ap.tasks]
    statements, called = run_traced(ap.world, [*calls, (None, AP_EXTRA)])
    assert called == set(ap.world.domain.tools)  # every tool ran at least once, successfully
    assert len(statements) > 20
    assert scans(ap.world, statements) == []


def test_the_index_check_sees_a_missing_index(ap):
    """The check can fail: the same filter on a column without an index is reported."""
    assert scans(ap.world, {"SELECT * FROM invoices WHERE status = 'blocked'"})
    assert not scans(ap.world, {"SELECT * FROM invoices WHERE vendor_invoice_no = 'X-1' ORDER BY invoice_id"})


@pytest.fixture(scope="module")
def tau2(tmp_path_factory):
    out = tmp_path_factory.mktemp("tau2_idx")
    import_tau2(RETAIL, TAU2_SRC, out)
    return World(TAU2, out / "world.sqlite"), read_tasks(out / "tasks.jsonl")


def test_every_tau2_retail_tool_statement_uses_an_index(tau2):
    world, tasks = tau2
    calls = [(t.role, [(c.tool, c.arguments) for c in t.solution_calls()]) for t in tasks]
    statements, called = run_traced(world, calls)
    writes = {t.name for t in world.domain.tools.values() if t.kind == "write"}
    assert writes <= called and len(called) >= 12  # the gold replays exercise every write tool and most reads
    assert scans(world, statements) == []
