"""A delivery whose tables are cut short (a header-only export) derives what it can and counts the rest, never a
traceback: on 7bb15c3 a header-only po_lines.csv ended the build in KeyError: '1' (ap_exceptions/derive.py:63)."""
from __future__ import annotations

from evalsuite.core.records import Environment, SuiteRef, TrialProtocol
from evalsuite.domains.ap_exceptions.derive import derive_tasks
from evalsuite.domains.ap_exceptions.example import ap_policies
from evalsuite.domains.ap_exceptions.generator import generate
from evalsuite.tasks.derivation import DeriveContext

CTX = DeriveContext(suite=SuiteRef(name="ap_exceptions", version="t"), protocol=TrialProtocol(), seed=7,
                    environment=Environment(image="ap", seed_snapshot="t", seed_sha256="0" * 64),
                    splits={"test": 1.0}, license_ref="t")


def test_cases_whose_records_are_missing_are_skipped_and_counted_by_what_is_missing():
    whole = derive_tasks(generate(seed=7, n_cases=56), ap_policies(), CTX)
    for table, reason in (("po_lines", "its purchase-order lines are not in the records"),
                          ("exception_queue", "its exception-queue item is not in the records"),
                          ("invoice_lines", "its invoice or invoice lines are not in the records")):
        tables = generate(seed=7, n_cases=56) | {table: []}
        cut = derive_tasks(tables, ap_policies(), CTX)
        lost = sum(whole.skipped.values()) + len(whole.tasks) - sum(cut.skipped.values()) - len(cut.tasks)
        assert lost == 0, table  # every case is either a task or counted
        assert cut.skipped.get(f"records incomplete: {reason}", 0) > 0, (table, cut.skipped)
        assert {t.task_id for t in cut.tasks} <= {t.task_id for t in whole.tasks}
