"""The row-level change log and row-level grading, on a small domain built for their edge cases.

Every verdict here is also computed over whole tables, and the two must be
equal: that equality is what lets a grade read only the rows a trial touched.
"""
from __future__ import annotations

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, text

from evalsuite.core.records import Assertion, GoalState, MaskedField, Role
from evalsuite.grading.grader import grade, grade_trial
from evalsuite.worlds import Domain, ToolError, World
from evalsuite.worlds.types import Money

md = MetaData()
Table("accounts", md, Column("account_id", String, primary_key=True), Column("owner", String, nullable=False),
      Column("email", String, unique=True), Column("balance", Money(), nullable=False), Column("note", String))
Table("entries", md, Column("account_id", String, primary_key=True), Column("seq", Integer, primary_key=True),
      Column("amount", Money(), nullable=False), Column("memo", String), sqlite_with_rowid=False)
DOMAIN = Domain(name="ledger", version="1", metadata=md)
ROLE = Role(name="clerk", write_tools=["run_sql", "write_then_fail"], forbidden_tools=["close_books"])


@DOMAIN.tool("write")
def run_sql(ctx, /, sql: str, params: dict | None = None):
    """Run one statement (a test's stand-in for any write a tool makes)."""
    ctx.execute(text(sql), params or {})


@DOMAIN.tool("write")
def write_then_fail(ctx, /, sql):
    """Write, then fail: the call must leave no row and no log entry behind."""
    ctx.execute(text(sql))
    raise ToolError("refused after writing")


@DOMAIN.tool("write")
def close_books(ctx, *, year: int = 2026, **rest):
    """A forbidden write."""


SEED = {
    "accounts": [dict(account_id=a, owner=o, email=f"{a}@x", balance=b, note=None)
                 for a, o, b in [("A1", "ann", "10.00"), ("A2", "bob", "20.50"), ("A3", "ann", "0.00")]],
    "entries": [dict(account_id=a, seq=s, amount=m, memo=memo)
                for a, s, m, memo in [("A1", 1, "5.00", "x"), ("A1", 2, "5.00", None), ("A2", 1, "20.50", "y")]],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return World.build(DOMAIN, SEED, tmp_path_factory.mktemp("ledger") / "w.sqlite")


def sql(trial, statement):
    ev = trial.call("run_sql", {"sql": statement})
    assert ev.outcome == "ok", ev.error
    return ev


def same_as_whole_tables(world, trial, goal, message=""):
    verdict = grade_trial(trial, message, goal, ROLE)
    assert verdict == grade(world.schemas, world.initial_rows, trial.rows(), trial.trace, message, goal, ROLE)
    return verdict


def test_the_log_keeps_primary_keys_of_inserts_updates_deletes_and_key_changes(world):
    trial = world.reset(ROLE)
    sql(trial, "INSERT INTO entries VALUES ('A3', 1, '1.00', NULL)")
    sql(trial, "UPDATE entries SET seq = 9 WHERE account_id = 'A1' AND seq = 2")  # a key change: old and new key
    sql(trial, "DELETE FROM accounts WHERE account_id = 'A2'")
    sql(trial, "UPDATE accounts SET note = 'n' WHERE owner = 'nobody'")  # no row: nothing logged
    assert trial.changed_keys() == {"entries": {("A3", 1), ("A1", 2), ("A1", 9)}, "accounts": {("A2",)}}
    assert trial.row("entries", ("A1", 9)) == ("A1", 9, "5.00", None) and trial.row("entries", ("A1", 2)) is None
    assert world.seed_row("entries", ("A1", 2)) == ("A1", 2, "5.00", None)


def test_a_replace_that_deletes_a_conflicting_row_is_logged(world):
    trial = world.reset(ROLE)
    # The email is unique: replacing into A9 deletes A1, a row whose key the insert never names.
    sql(trial, "INSERT OR REPLACE INTO accounts VALUES ('A9', 'ann', 'A1@x', '1.00', NULL)")
    assert trial.changed_keys() == {"accounts": {("A1",), ("A9",)}}


def test_a_failed_call_leaves_no_row_and_no_log_entry(world):
    trial = world.reset(ROLE)
    ev = trial.call("write_then_fail", {"sql": "DELETE FROM entries"})
    assert ev.outcome == "error" and trial.changed_keys() == {} and trial.rows() == world.initial_rows


def test_a_reset_closes_the_previous_trial(world):
    old = world.reset(ROLE)
    world.reset(ROLE)
    with pytest.raises(RuntimeError, match="trial closed"):
        old.call("run_sql", {"sql": "DELETE FROM entries"})
    with pytest.raises(RuntimeError, match="trial closed"):
        grade_trial(old, "", GoalState(), ROLE)


GOALS = [
    GoalState(),
    # a partial composite key, and a non-key column matching several rows
    GoalState(assertions=[Assertion(table="entries", key={"account_id": "A1"}, row_count=2, clause="C"),
                          Assertion(table="accounts", key={"owner": "ann"}, expect={"note": None}, clause="C")]),
    # money compared as a number ('20.5' is '20.50'), a NULL key value, an integer key given as a float
    GoalState(assertions=[Assertion(table="entries", key={"amount": "20.5"}, expect={"memo": "y"}, clause="C"),
                          Assertion(table="entries", key={"memo": None}, row_count=1, clause="C"),
                          Assertion(table="entries", key={"account_id": "A1", "seq": 1.0}, expect={"amount": 5},
                                    clause="C")]),
    # deletions pinned by row_count 0, unchanged tables, a masked column
    GoalState(assertions=[Assertion(table="accounts", key={"account_id": "A2"}, row_count=0, clause="C"),
                          Assertion(table="entries", key={"account_id": "A2"}, row_count=0, clause="C")],
              unchanged_tables=["entries"], volatile_fields_masked=[MaskedField(field="note", justification="free")]),
    # a column the table lacks and a table the domain lacks: no rows, as over whole tables
    GoalState(assertions=[Assertion(table="accounts", key={"colour": "red"}, row_count=0, clause="C"),
                          Assertion(table="ledgers", key={"id": 1}, clause="C")]),
]
TRIALS = [
    [],
    ["UPDATE accounts SET note = 'n' WHERE owner = 'ann'"],
    ["DELETE FROM entries WHERE account_id = 'A2'", "DELETE FROM accounts WHERE account_id = 'A2'"],
    ["INSERT INTO entries VALUES ('A2', 2, '20.50', NULL)", "UPDATE entries SET memo = 'z' WHERE seq = 1",
     "UPDATE accounts SET balance = '7.00', email = 'q' WHERE account_id = 'A3'"],
    ["UPDATE accounts SET balance = '99.00' WHERE account_id = 'A1'",  # changed, then back: no net change
     "UPDATE accounts SET balance = '10.00' WHERE account_id = 'A1'"],
    # more collateral rows than a verdict lists (5): which ones it names depends on key order
    [f"INSERT INTO entries VALUES ('{a}', {n}, '1.00', NULL)" for a, n in
     [("B", 3), ("A3", 12), ("A1", 7), ("A3", 2), ("A2", 9), ("A1", 3), ("A10", 1), ("A2", 10)]],
]


@pytest.mark.parametrize("statements", TRIALS)
def test_row_level_verdicts_equal_whole_table_verdicts(world, statements):
    trial = world.reset(ROLE)
    for s in statements:
        sql(trial, s)
    trial.call("close_books", {})
    verdicts = [same_as_whole_tables(world, trial, goal, "done") for goal in GOALS]
    assert any(not v.passed for v in verdicts)


def test_a_write_the_log_missed_is_an_error_not_a_wrong_verdict(world):
    trial = world.reset(ROLE)
    trial.db.execute('DROP TRIGGER "_evs_accounts_update"')
    trial.db.execute("UPDATE accounts SET note = 'hidden' WHERE account_id = 'A1'")
    goal = GoalState(assertions=[Assertion(table="accounts", key={"account_id": "A1"}, clause="C")])
    with pytest.raises(RuntimeError, match="change log has no record"):
        grade_trial(trial, "", goal, ROLE)


def test_raw_keyword_tools_show_their_parameters():
    assert DOMAIN.tools["run_sql"].schema()["parameters"] == {
        "type": "object",
        "properties": {"sql": {"type": "string"},
                       "params": {"anyOf": [{"type": "object", "additionalProperties": True}, {"type": "null"}],
                                  "default": None}},
        "required": ["sql"], "additionalProperties": False}
    assert DOMAIN.tools["write_then_fail"].schema()["parameters"] == {
        "type": "object", "properties": {"sql": {}}, "required": ["sql"], "additionalProperties": False}
    assert DOMAIN.tools["close_books"].schema()["parameters"] == {
        "type": "object", "properties": {"year": {"type": "integer", "default": 2026}}, "additionalProperties": True}
