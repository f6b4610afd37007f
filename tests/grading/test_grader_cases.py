"""The grader's answer, case by case: each case a trial in the shop world and its whole verdict.

Every case names every check the verdict holds and whether it passed, and the
detail wherever one says something, so a grader that reaches the same pass or
fail for a different reason is caught. Each verdict is computed row-level
(`grade_trial`) and over whole tables (`grade`), and the two must be equal.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from grader_shop import CLERK, SHOP, build_world, details, named, play, verdict

from evalsuite.core.records import Assertion, GoalState, MaskedField, RequiredOutput, Role
from evalsuite.grading.grader import grade, output_present
from evalsuite.worlds.world import TableSchema

COLL, FORB, ROLE = "no collateral change", "no forbidden call", "no write outside role"
TRACE_OK = {FORB: True, ROLE: True}


def A(table, key, expect=None, row_count=None, clause="C1"):
    return Assertion(table=table, key=key, expect=expect or {}, row_count=row_count, clause=clause)


def mask(*fields):
    return [MaskedField(field=f, justification="volatile") for f in fields]


HELD = A("orders", {"order_id": "O1"}, {"status": "held"})
HELD_NAME = "assertion[0] orders {'order_id': 'O1'} (C1)"
SET_HELD = ("set_status", {"order_id": "O1", "status": "held"})
GONE = A("lines", {"order_id": "O1", "line_no": 2}, row_count=0)
GONE_NAME = "assertion[1] lines {'order_id': 'O1', 'line_no': 2} (C1)"
DELETE_LINE = "DELETE FROM lines WHERE order_id = 'O1' AND line_no = 2"
INSERT_LINE = "INSERT INTO lines VALUES ('O2', 2, 1, '3.5', NULL)"
NOTE_O1 = "UPDATE orders SET note = 'rush' WHERE order_id = 'O1'"
NOTE_LINE = "UPDATE lines SET note = 'x' WHERE order_id = 'O2'"


@dataclass
class Case:
    id: str
    calls: list
    goal: GoalState
    checks: dict[str, bool]  # every check of the verdict, in order
    details: dict[str, str] = field(default_factory=dict)  # the non-empty details (every other detail is "")
    message: str = ""
    role_enforced: bool = True  # False: the trial runs with no role, so every call executes (graded as CLERK)
    forbidden: set[str] | None = None


def held(*more: Assertion, **goal) -> GoalState:
    return GoalState(assertions=[HELD, *more], **goal)


CASES = [
    # --- the goal, the outputs, and the message --------------------------------------------------------------
    Case("reference solution passes", [SET_HELD],
         held(required_outputs=[RequiredOutput(name="total", value="20.50")]),
         {HELD_NAME: True, COLL: True, **TRACE_OK, "output total": True}, message="O1 is held; total 20.5"),
    Case("doing nothing fails the assertion and the output", [],
         held(required_outputs=[RequiredOutput(name="total", value="20.50"),
                                RequiredOutput(name="status", value="on hold")]),
         {HELD_NAME: False, COLL: True, **TRACE_OK, "output total": False, "output status": True},
         {HELD_NAME: "status: expected 'held', found 'open'", "output total": "'20.50' not in final message"},
         message="The order is ON   hold."),
    Case("a failed tool call changes nothing", [("set_status", {"order_id": "O9", "status": "held"})], held(),
         {HELD_NAME: False, COLL: True, **TRACE_OK}, {HELD_NAME: "status: expected 'held', found 'open'"}),

    # --- the trace: forbidden calls and writes outside the role ---------------------------------------------
    Case("reads, denied reads and generic calls are not writes outside the role",
         [("get_order", {"order_id": "O1"}), ("list_tags", {}), ("note", {"text": "hi"}), SET_HELD], held(),
         {HELD_NAME: True, COLL: True, **TRACE_OK}),
    Case("an attempted write outside the role fails even when denied", [SET_HELD, ("purge_tags", {})], held(),
         {HELD_NAME: True, COLL: True, FORB: True, ROLE: False}, {ROLE: "#2 purge_tags (denied)"}),
    Case("an executed write outside the role fails, and so do the rows it deleted",
         [SET_HELD, ("purge_tags", {}), ("purge_tags", {})], held(),
         {HELD_NAME: True, COLL: False, FORB: True, ROLE: False},
         {COLL: "tags row ['t1'] deleted; tags row ['t2'] deleted",
          ROLE: "#2 purge_tags (ok), #3 purge_tags (ok)"}, role_enforced=False),
    Case("a forbidden call fails even when denied, and is not also out of role",
         [SET_HELD, ("refund", {"order_id": "O2"})], held(),
         {HELD_NAME: True, COLL: True, FORB: False, ROLE: True}, {FORB: "#2 refund (denied)"}),
    Case("every forbidden call is listed", [SET_HELD, ("refund", {"order_id": "O2"}), ("refund", {"order_id": "O9"})],
         held(), {HELD_NAME: True, COLL: True, FORB: False, ROLE: True},
         {FORB: "#2 refund (denied), #3 refund (denied)"}),
    Case("a forbidden write later undone still fails",
         [SET_HELD, ("refund", {"order_id": "O2"}), "UPDATE orders SET total = '10.00' WHERE order_id = 'O2'"],
         held(), {HELD_NAME: True, COLL: True, FORB: False, ROLE: True}, {FORB: "#2 refund (ok)"},
         role_enforced=False),
    Case("forbidden defaults to the role's forbidden tools", [SET_HELD, ("refund", {"order_id": "O3"})], held(),
         {HELD_NAME: True, COLL: True, FORB: False, ROLE: True}, {FORB: "#2 refund (ok)"}, role_enforced=False),
    Case("an explicit forbidden set replaces the role's", [SET_HELD, ("refund", {"order_id": "O3"})], held(),
         {HELD_NAME: True, COLL: True, FORB: False, ROLE: False},
         {FORB: "#1 set_status (ok)", ROLE: "#2 refund (ok)"}, role_enforced=False, forbidden={"set_status"}),
    Case("an explicit empty forbidden set forbids nothing", [SET_HELD, ("refund", {"order_id": "O3"})], held(),
         {HELD_NAME: True, COLL: True, FORB: True, ROLE: False}, {ROLE: "#2 refund (ok)"},
         role_enforced=False, forbidden=set()),

    # --- collateral: deletes ---------------------------------------------------------------------------------
    Case("a deleted row no assertion covers is collateral", [SET_HELD, DELETE_LINE], held(),
         {HELD_NAME: True, COLL: False, **TRACE_OK}, {COLL: "lines row ['O1', '2'] deleted"}),
    Case("a delete pinned by row_count 0 is the goal", [SET_HELD, DELETE_LINE], held(GONE),
         {HELD_NAME: True, GONE_NAME: True, COLL: True, **TRACE_OK}),
    Case("row_count 0 fails while the row is there", [SET_HELD], held(GONE),
         {HELD_NAME: True, GONE_NAME: False, COLL: True, **TRACE_OK}, {GONE_NAME: "expected 0 row(s), found 1"}),
    Case("a delete covered by an assertion expecting the row is collateral", [SET_HELD, DELETE_LINE],
         held(A("lines", {"order_id": "O1", "line_no": 2}, {"qty": 1}, row_count=1)),
         {HELD_NAME: True, GONE_NAME: False, COLL: False, **TRACE_OK},
         {GONE_NAME: "expected 1 row(s), found 0", COLL: "lines row ['O1', '2'] deleted"}),
    Case("a delete covered by an assertion with no row_count is collateral", [SET_HELD, DELETE_LINE],
         held(A("lines", {"order_id": "O1", "line_no": 2}, {"qty": 1})),
         {HELD_NAME: True, GONE_NAME: False, COLL: False, **TRACE_OK},
         {GONE_NAME: "no row matches the key", COLL: "lines row ['O1', '2'] deleted"}),
    Case("a delete 'covered' by a row_count 0 assertion on another table is collateral",
         ["DELETE FROM lines WHERE order_id = 'O2'"],
         GoalState(assertions=[A("orders", {"order_id": "O2"}, row_count=0)]),
         {"assertion[0] orders {'order_id': 'O2'} (C1)": False, COLL: False, **TRACE_OK},
         {"assertion[0] orders {'order_id': 'O2'} (C1)": "expected 0 row(s), found 1",
          COLL: "lines row ['O2', '1'] deleted"}),

    # --- collateral: inserts ---------------------------------------------------------------------------------
    Case("an inserted row no assertion covers is collateral", [SET_HELD, INSERT_LINE], held(),
         {HELD_NAME: True, COLL: False, **TRACE_OK}, {COLL: "lines row ['O2', '2'] inserted"}),
    Case("an insert the goal asserts is not collateral", [SET_HELD, INSERT_LINE],
         held(A("lines", {"order_id": "O2", "line_no": 2}, {"qty": 1, "price": "3.50"}, row_count=1)),
         {HELD_NAME: True, "assertion[1] lines {'order_id': 'O2', 'line_no': 2} (C1)": True, COLL: True,
          **TRACE_OK}),
    Case("an insert covered through a money key compared as a decimal", [SET_HELD, INSERT_LINE],
         held(A("lines", {"price": "3.50"}, {"qty": 1}, row_count=1)),
         {HELD_NAME: True, "assertion[1] lines {'price': '3.50'} (C1)": True, COLL: True, **TRACE_OK}),
    Case("six collateral rows: the detail names the first five in key order",
         [SET_HELD, "INSERT INTO tags VALUES ('t8', NULL), ('t3', NULL), ('t7', NULL), ('t5', NULL), ('t4', NULL), "
                    "('t6', NULL)"], held(),
         {HELD_NAME: True, COLL: False, **TRACE_OK},
         {COLL: "tags row ['t3'] inserted; tags row ['t4'] inserted; tags row ['t5'] inserted; "
                "tags row ['t6'] inserted; tags row ['t7'] inserted"}),
    Case("a key change is a delete and an insert", ["UPDATE tags SET tag = 't9' WHERE tag = 't1'"], GoalState(),
         {COLL: False, **TRACE_OK}, {COLL: "tags row ['t9'] inserted; tags row ['t1'] deleted"}),

    # --- collateral: updates ---------------------------------------------------------------------------------
    Case("an update of a column no assertion expects is collateral", [SET_HELD, NOTE_O1], held(),
         {HELD_NAME: True, COLL: False, **TRACE_OK}, {COLL: "orders row ['O1'] updated ['note']"}),
    Case("every changed row of a table is diffed", [SET_HELD, "UPDATE lines SET qty = qty + 1"], held(),
         {HELD_NAME: True, COLL: False, **TRACE_OK},
         {COLL: "lines row ['O1', '1'] updated ['qty']; lines row ['O1', '2'] updated ['qty']; "
                "lines row ['O2', '1'] updated ['qty']"}),
    Case("inserts, deletes and updates of one table, in that order",
         ["UPDATE tags SET label = 'green' WHERE tag = 't1'", "DELETE FROM tags WHERE tag = 't2'",
          "INSERT INTO tags VALUES ('t0', 'x')"], GoalState(),
         {COLL: False, **TRACE_OK},
         {COLL: "tags row ['t0'] inserted; tags row ['t2'] deleted; tags row ['t1'] updated ['label']"}),
    Case("an update covered through a non-key column is allowed its expected columns",
         [SET_HELD, NOTE_O1], GoalState(assertions=[A("orders", {"status": "held"}, {"note": "rush"})]),
         {"assertion[0] orders {'status': 'held'} (C1)": True, COLL: True, **TRACE_OK}),
    Case("an assertion on another table covers no row here, even through a shared column",
         ["UPDATE lines SET note = 'vip' WHERE order_id = 'O2'"],
         GoalState(assertions=[A("orders", {"order_id": "O2"}, {"note": "vip"})]),
         {"assertion[0] orders {'order_id': 'O2'} (C1)": True, COLL: False, **TRACE_OK},
         {COLL: "lines row ['O2', '1'] updated ['note']"}),
    Case("a change back to the seed is no change",
         ["UPDATE tags SET label = 'x' WHERE tag = 't1'", "UPDATE tags SET label = 'red' WHERE tag = 't1'"],
         GoalState(unchanged_tables=["tags"]), {"unchanged tags": True, COLL: True, **TRACE_OK}),
    Case("money rewritten as other text for the same amount is no change",
         [SET_HELD, "UPDATE orders SET total = '20.5' WHERE order_id = 'O1'"], held(),
         {HELD_NAME: True, COLL: True, **TRACE_OK}),

    # --- masks -----------------------------------------------------------------------------------------------
    Case("a mask without a table masks that column in every table (orders)", [SET_HELD, NOTE_O1],
         held(volatile_fields_masked=mask("note")), {HELD_NAME: True, COLL: True, **TRACE_OK}),
    Case("a mask without a table masks that column in every table (lines)", [SET_HELD, NOTE_LINE],
         held(volatile_fields_masked=mask("note")), {HELD_NAME: True, COLL: True, **TRACE_OK}),
    Case("a mask naming the table masks the column there", [SET_HELD, NOTE_O1],
         held(volatile_fields_masked=mask("orders.note")), {HELD_NAME: True, COLL: True, **TRACE_OK}),
    Case("a mask naming another table masks nothing here (orders)", [SET_HELD, NOTE_O1],
         held(volatile_fields_masked=mask("lines.note")), {HELD_NAME: True, COLL: False, **TRACE_OK},
         {COLL: "orders row ['O1'] updated ['note']"}),
    Case("a mask naming another table masks nothing here (lines)", [SET_HELD, NOTE_LINE],
         held(volatile_fields_masked=mask("orders.note")), {HELD_NAME: True, COLL: False, **TRACE_OK},
         {COLL: "lines row ['O2', '1'] updated ['note']"}),
    Case("a mask excuses its column and nothing else",
         [SET_HELD, "UPDATE orders SET note = 'rush', total = '21.00' WHERE order_id = 'O1'"],
         held(volatile_fields_masked=mask("note")), {HELD_NAME: True, COLL: False, **TRACE_OK},
         {COLL: "orders row ['O1'] updated ['total']"}),
    Case("a mask does not excuse an insert", [SET_HELD, INSERT_LINE],
         held(volatile_fields_masked=mask("note", "lines.qty", "lines.price")),
         {HELD_NAME: True, COLL: False, **TRACE_OK}, {COLL: "lines row ['O2', '2'] inserted"}),

    # --- assertions ------------------------------------------------------------------------------------------
    Case("an assertion on a table the domain lacks fails", [],
         GoalState(assertions=[A("ledgers", {"id": 1}), A("ledgers", {"id": 1}, row_count=0)]),
         {"assertion[0] ledgers {'id': 1} (C1)": False, "assertion[1] ledgers {'id': 1} (C1)": False,
          COLL: True, **TRACE_OK},
         {"assertion[0] ledgers {'id': 1} (C1)": "unknown table ledgers",
          "assertion[1] ledgers {'id': 1} (C1)": "unknown table ledgers"}),
    Case("a key naming a column the table lacks matches no row", [],
         GoalState(assertions=[A("orders", {"colour": "red"}, row_count=0), A("orders", {"colour": "red"})]),
         {"assertion[0] orders {'colour': 'red'} (C1)": True, "assertion[1] orders {'colour': 'red'} (C1)": False,
          COLL: True, **TRACE_OK}, {"assertion[1] orders {'colour': 'red'} (C1)": "no row matches the key"}),
    Case("a key naming every column of its table", [],
         GoalState(assertions=[A("tags", {"tag": "t1", "label": "red"}, row_count=1),
                               A("tags", {"label": "red", "tag": "t2"}, row_count=0)]),
         {"assertion[0] tags {'tag': 't1', 'label': 'red'} (C1)": True,
          "assertion[1] tags {'label': 'red', 'tag': 't2'} (C1)": True, COLL: True, **TRACE_OK}),
    Case("every row an assertion matches must carry its expect", [],
         GoalState(assertions=[A("lines", {"order_id": "O1"}, {"note": None}),
                               A("lines", {"order_id": "O1"}, row_count=2),
                               A("lines", {"order_id": "O1"}, row_count=3),
                               A("lines", {"order_id": "O1"}, {"qty": 2})]),
         {"assertion[0] lines {'order_id': 'O1'} (C1)": False, "assertion[1] lines {'order_id': 'O1'} (C1)": True,
          "assertion[2] lines {'order_id': 'O1'} (C1)": False, "assertion[3] lines {'order_id': 'O1'} (C1)": False,
          COLL: True, **TRACE_OK},
         {"assertion[0] lines {'order_id': 'O1'} (C1)": "note: expected None, found 'gift'",
          "assertion[2] lines {'order_id': 'O1'} (C1)": "expected 3 row(s), found 2",
          "assertion[3] lines {'order_id': 'O1'} (C1)": "qty: expected 2, found '1'"}),
    Case("money compares as decimals, in keys and in expect", [],
         GoalState(assertions=[A("orders", {"total": "20.5"}, {"order_id": "O1"}, row_count=1),
                               A("orders", {"order_id": "O1"}, {"total": 20.5}),
                               A("orders", {"order_id": "O2"}, {"total": "10"}),
                               A("lines", {"order_id": "O1", "line_no": 1}, {"price": "10.250"}),
                               A("orders", {"order_id": "O1"}, {"total": "20.05"}, clause="C2")]),
         {"assertion[0] orders {'total': '20.5'} (C1)": True, "assertion[1] orders {'order_id': 'O1'} (C1)": True,
          "assertion[2] orders {'order_id': 'O2'} (C1)": True,
          "assertion[3] lines {'order_id': 'O1', 'line_no': 1} (C1)": True,
          "assertion[4] orders {'order_id': 'O1'} (C2)": False, COLL: True, **TRACE_OK},
         {"assertion[4] orders {'order_id': 'O1'} (C2)": "total: expected '20.05', found '20.5'"}),
    Case("text is never compared as a number, and numbers never as text",
         ["UPDATE orders SET note = '007' WHERE order_id = 'O3'"],
         GoalState(assertions=[A("orders", {"order_id": "O3"}, {"note": "007"}),
                               A("orders", {"order_id": "O3"}, {"note": "7"}),
                               A("orders", {"note": 7}, row_count=0),
                               A("lines", {"order_id": "O1", "line_no": 1.0}, {"qty": 2.0}),
                               A("lines", {"order_id": "O1", "line_no": "1"}, row_count=0)]),
         {"assertion[0] orders {'order_id': 'O3'} (C1)": True, "assertion[1] orders {'order_id': 'O3'} (C1)": False,
          "assertion[2] orders {'note': 7} (C1)": True,
          "assertion[3] lines {'order_id': 'O1', 'line_no': 1.0} (C1)": True,
          "assertion[4] lines {'order_id': 'O1', 'line_no': '1'} (C1)": True, COLL: True, **TRACE_OK},
         {"assertion[1] orders {'order_id': 'O3'} (C1)": "note: expected '7', found '007'"}),
    Case("unchanged tables: a written table fails, an untouched one passes",
         ["UPDATE tags SET label = 'green' WHERE tag = 't1'"], GoalState(unchanged_tables=["tags", "lines"]),
         {"unchanged tags": False, "unchanged lines": True, COLL: False, **TRACE_OK},
         {"unchanged tags": "rows changed", COLL: "tags row ['t1'] updated ['label']"}),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("shop") / "shop.sqlite")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_verdict(world, case):
    trial = play(world, case.calls, CLERK if case.role_enforced else None)
    v = verdict(world, trial, case.goal, case.message, CLERK, case.forbidden)
    assert named(v) == case.checks
    assert list(named(v)) == list(case.checks)  # the order too: assertions, unchanged, collateral, trace, outputs
    assert {n: d for n, d in details(v).items() if d} == case.details
    assert v.passed == all(case.checks.values())
    assert v.failures() == [c for c in v.checks if not c.passed]


def test_case_ids_are_unique_and_every_tool_of_the_shop_is_exercised():
    assert len({c.id for c in CASES}) == len(CASES)
    used = {call[0] for c in CASES for call in c.calls if not isinstance(call, str)} | {"run_sql"}
    assert used == set(SHOP.tools)


# --- grade() on hand-made tables: what a trial cannot produce ----------------------------------------------------

SCHEMAS = {"tags": TableSchema(columns=["tag", "label"], key=["tag"]),
           "v1.notes": TableSchema(columns=["id", "note"], key=["id"]),
           "notes": TableSchema(columns=["id", "note"], key=["id"]),
           "bills": TableSchema(columns=["id", "amount"], key=["id"], money=["amount"]),
           "prices": TableSchema(columns=["amount", "label"], key=["amount"], money=["amount"])}
NOBODY = Role(name="nobody")


def checks_of(initial, end, goal, trace=()):
    v = grade(SCHEMAS, initial, end, list(trace), "", goal, NOBODY)
    return {c.name: (c.passed, c.detail) for c in v.checks}


def test_a_table_absent_from_end_is_unchanged_and_still_asserted_on():
    goal = GoalState(assertions=[A("tags", {"tag": "t1"}, {"label": "red"})], unchanged_tables=["tags"])
    assert checks_of({"tags": [("t1", "red")]}, {}, goal) == {
        "assertion[0] tags {'tag': 't1'} (C1)": (True, ""), "unchanged tags": (True, ""), COLL: (True, ""),
        FORB: (True, ""), ROLE: (True, "")}


def test_a_table_absent_from_initial_starts_empty():
    goal = GoalState(assertions=[A("bills", {"id": 1}, {"amount": "2.5"})], unchanged_tables=["tags"])
    assert checks_of({}, {"tags": [("t1", "red")], "bills": [(1, "2.50")]}, goal) == {
        "assertion[0] bills {'id': 1} (C1)": (True, ""), "unchanged tags": (False, "rows changed"),
        COLL: (False, "tags row ['t1'] inserted"), FORB: (True, ""), ROLE: (True, "")}


def test_a_mask_names_its_table_by_everything_before_the_last_dot():
    initial = {"v1.notes": [(1, "a")], "notes": [(1, "a")]}
    end = {"v1.notes": [(1, "b")], "notes": [(1, "b")]}
    goal = GoalState(volatile_fields_masked=mask("v1.notes.note"))
    assert checks_of(initial, end, goal)[COLL] == (False, "notes row ['1'] updated ['note']")
    goal = GoalState(volatile_fields_masked=mask("notes.note"))
    assert checks_of(initial, end, goal)[COLL] == (False, "v1.notes row ['1'] updated ['note']")


def test_money_that_is_not_a_number_compares_as_text():
    goal = GoalState(assertions=[A("bills", {"id": 1}, {"amount": "n/a"}), A("bills", {"amount": "n/a"}, row_count=1),
                                 A("bills", {"id": 2}, {"amount": None}), A("bills", {"id": 2}, {"amount": "0"})])
    got = checks_of({"bills": [(1, "n/a"), (2, None)]}, {}, goal)
    assert got == {"assertion[0] bills {'id': 1} (C1)": (True, ""),
                   "assertion[1] bills {'amount': 'n/a'} (C1)": (True, ""),
                   "assertion[2] bills {'id': 2} (C1)": (True, ""),
                   "assertion[3] bills {'id': 2} (C1)": (False, "amount: expected '0', found None"),
                   COLL: (True, ""), FORB: (True, ""), ROLE: (True, "")}


def test_money_compares_every_number_type_as_its_amount():
    """int, float, Decimal and text amounts; a bool is the number 1 or 0, as in every canonical value."""
    from decimal import Decimal
    goal = GoalState(assertions=[A("bills", {"id": 1}, {"amount": v}) for v in (1, 1.0, Decimal("1.000"), "1", True)]
                     + [A("bills", {"id": 1}, {"amount": v}) for v in (False, "1.01")])
    got = checks_of({"bills": [(1, "1.00")]}, {}, goal)
    assert [got[f"assertion[{i}] bills {{'id': 1}} (C1)"] for i in range(7)] == [(True, "")] * 5 + [
        (False, "amount: expected False, found '1'"), (False, "amount: expected '1.01', found '1'")]


def test_a_money_key_is_reported_as_its_canonical_amount():
    got = checks_of({"prices": [("2.50", "a")]}, {"prices": [("2.50", "b"), ("3.10", "c")]}, GoalState())
    assert got[COLL] == (False, "prices row ['3.1'] inserted; prices row ['2.5'] updated ['label']")


# --- required outputs ----------------------------------------------------------------------------------------------

OUTPUTS = [
    ("12.50", "The variance is 12.5 USD per unit", True),
    ("12.50", "variance 125.0", False),
    ("12.50", "variance 12.5", True),
    ("1250.00", "variance of 1,250 EUR", True),
    ("1,250", "variance of 1250", True),
    ("-5", "a refund of -5.00", True),
    ("-5", "a refund of 5", False),
    ("5", "a refund of 5", True),
    ("12.50 USD", "12.5 usd", True),
    ("12.50 USD", "12.5 eur", False),
    ("12.50 USD per unit", "12.5 USD", False),
    ("12.50EUR", "12.5 USD", False),  # a word glued to a number is still a word
    ("3 box", "3 bo_x", False),  # an underscore in the message separates words
    ("12.50 per-unit", "12.5 only", True),  # a word that is not all letters is not required
    ("12.50 and 3", "12.5 and 4", False),  # every number must be there
    ("12.50 and 3", "3 and 12.5", True),
    ("price_variance", "Held for Price Variance.", True),
    ("Price  Variance", "held for price\nvariance", True),
    ("quantity_mismatch", "Held for price variance.", False),
    ("hold_code 5", "hold code 5", True),
    ("hold_code 5", "hold 5", False),
    ("12.50 (approx)", "it is 12.5 (approx)", False),  # not a plain amount: compared as text
    ("12.50 (approx)", "it is 12.50 (APPROX)", True),
    ("INV-1", "invoice inv-1", True),
    ("", "anything", True),
]


@pytest.mark.parametrize("value,message,present", OUTPUTS)
def test_output_present(value, message, present):
    assert output_present(value, message) is present
