"""What the change log records and which rows a grade reads, pinned answer by answer.

A small world declared here: `mixed` has a one-column key of any SQLite type
(NULL, integer, real, text, blob), `pairs` a composite key (a WITHOUT ROWID
table with a money column and a unique column, so a REPLACE can delete a row
its statement never names) and `we"ird'tab` names with both quote characters.

Answers pinned (found by running the log, not assumed):
- every statement that touches a row logs its key, even when nothing differs
  afterwards (an UPDATE to the same value, a row changed and changed back, a row
  inserted then deleted): `changed_keys()` is the set of keys a statement touched,
  a superset of the keys whose row differs from the seed;
- keys keep their SQLite type (3, 3.5, '3' and b'3' are four keys) and their width
  (a one-column key is a 1-tuple although the log pads it to the widest key);
- `rows_to_grade` selects one set of keys per table (logged keys and the keys of
  rows the assertions' keys match now in SQL) and returns the seed rows and the rows
  now of those keys, tables in domain order and rows in SQLite's key order; an
  assertion naming an unknown table or column selects nothing and the later ones
  still select their rows;
- values SQL cannot compare as the grader does (money, integers outside 64 bits)
  stay out of the lookup's WHERE clause, so it selects more rows, never fewer.
"""
from __future__ import annotations

import sqlite3
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Integer, MetaData, String, Table, text

from evalsuite.core.records import Assertion, GoalState, Role
from evalsuite.grading.grader import grade, grade_trial
from evalsuite.worlds import Domain, ToolError, World
from evalsuite.worlds.changes import RowSelector, pk_order
from evalsuite.worlds.types import ExactNumber, Money

WEIRD, WID, WVAL = 'we"ird\'tab', 'i"d\'', 'v"al'
md = MetaData()
Table("mixed", md, Column("k", ExactNumber(), primary_key=True, nullable=True), Column("v", String))
Table("pairs", md, Column("a", String, primary_key=True), Column("b", Integer, primary_key=True),
      Column("amt", Money(), nullable=False), Column("memo", String), Column("tag", String, unique=True),
      sqlite_with_rowid=False)
Table(WEIRD, md, Column(WID, Integer, primary_key=True), Column(WVAL, String))
DOMAIN = Domain(name="selection", version="1", metadata=md)
ROLE = Role(name="clerk", write_tools=["run_sql", "write_then_fail"])
BIG, SMALL = 2**63 - 1, -(2**63)


@DOMAIN.tool("write")
def run_sql(ctx, /, sql: str, params: dict | None = None):
    """Run one statement."""
    ctx.execute(text(sql), params or {})


@DOMAIN.tool("write")
def write_then_fail(ctx, /, sql: str):
    """Write, then fail: the transaction is rolled back."""
    ctx.execute(text(sql))
    raise ToolError("refused after writing")


MIXED_SEED = [(None, "n"), (-5, "neg"), (2.5, "f"), (3, "i"), ("3", "t"), ("a", "a"), (b"3", "b")]  # key order
PAIRS_SEED = [("A", 1, "5.00", "x", "t1"), ("A", 2, "5.00", None, "t2"), ("B", 1, "20.50", "y", "t3"),
              ("B", BIG, "1.00", "max", "t4"), ("C", SMALL, "1.00", "min", "t5")]
WEIRD_SEED = [(1, "one"), (2, "two")]
SEED = {"mixed": [dict(k=k, v=v) for k, v in MIXED_SEED],
        "pairs": [dict(zip(["a", "b", "amt", "memo", "tag"], r)) for r in PAIRS_SEED],
        WEIRD: [{WID: i, WVAL: v} for i, v in WEIRD_SEED]}
COLS = {"mixed": ["k", "v"], "pairs": ["a", "b", "amt", "memo", "tag"], WEIRD: [WID, WVAL]}
KEYW = {"mixed": 1, "pairs": 2, WEIRD: 1}
SEED_ROWS = {"mixed": MIXED_SEED, "pairs": PAIRS_SEED, WEIRD: WEIRD_SEED}
PAIR = {r[:2]: r for r in PAIRS_SEED}
MIX = {r[:1]: r for r in MIXED_SEED}


@pytest.fixture
def world(tmp_path):
    """Built for each test, so the log's installation (triggers, quoting) runs under every test that reads it."""
    return World.build(DOMAIN, SEED, tmp_path / "w.sqlite")


def play(world, statements):
    trial = world.reset(ROLE)
    for s in statements:
        sql, params = (s, {}) if isinstance(s, str) else s
        ev = trial.call("run_sql", {"sql": sql, "params": params})
        assert ev.outcome == "ok", ev.error
    return trial


def typed(keys_by_table):
    """Keys with their Python types, so 3, 3.0 and True do not compare equal."""
    return {t: {tuple((type(v).__name__, v) for v in k) for k in ks} for t, ks in keys_by_table.items()}


def A(table, key, **kw):
    # Built unchecked: task records refuse integers beyond 64 bits, but the selector must still keep any value
    # that reaches it directly (a hand-built goal) out of its SQL lookup, and these cases pin that.
    return Assertion.model_construct(table=table, key=key, clause="C", **kw)


def test_the_seed_is_stored_as_declared(world):
    assert world.initial_rows == {"mixed": MIXED_SEED, "pairs": PAIRS_SEED, WEIRD: WEIRD_SEED}


# ---------------------------------------------------------------- changed_keys and row, statement by statement

Q = f'"{WEIRD.replace(chr(34), chr(34) * 2)}"'  # the quoted table name, for the statements below
QID, QVAL = (f'"{c.replace(chr(34), chr(34) * 2)}"' for c in (WID, WVAL))
CHANGES = [
    # (id, statements, changed_keys, {(table, key): row now})
    ("nothing", [], {}, {("pairs", ("A", 1)): PAIR["A", 1], ("mixed", (None,)): MIX[None,]}),
    ("insert", ["INSERT INTO pairs VALUES ('D', 1, '2.00', NULL, 't9')"], {"pairs": {("D", 1)}},
     {("pairs", ("D", 1)): ("D", 1, "2.00", None, "t9")}),
    ("update a column", ["UPDATE pairs SET memo = 'm' WHERE a = 'A' AND b = 2"], {"pairs": {("A", 2)}},
     {("pairs", ("A", 2)): ("A", 2, "5.00", "m", "t2"), ("pairs", ("A", 1)): PAIR["A", 1]}),
    ("update the key: old and new key", ["UPDATE pairs SET b = 7 WHERE a = 'A' AND b = 2"],
     {"pairs": {("A", 2), ("A", 7)}}, {("pairs", ("A", 2)): None, ("pairs", ("A", 7)): ("A", 7, "5.00", None, "t2")}),
    ("delete", ["DELETE FROM mixed WHERE v = 'neg'"], {"mixed": {(-5,)}}, {("mixed", (-5,)): None}),
    ("an update matching no row logs nothing", ["UPDATE pairs SET memo = 'm' WHERE a = 'Z'"], {}, {}),
    ("an update to the same value is logged", ["UPDATE pairs SET memo = 'x' WHERE a = 'A' AND b = 1"],
     {"pairs": {("A", 1)}}, {("pairs", ("A", 1)): PAIR["A", 1]}),
    ("changed and changed back is logged", ["UPDATE pairs SET memo = 'q' WHERE a = 'A' AND b = 1",
                                            "UPDATE pairs SET memo = 'x' WHERE a = 'A' AND b = 1"],
     {"pairs": {("A", 1)}}, {("pairs", ("A", 1)): PAIR["A", 1]}),
    ("inserted then deleted is logged", ["INSERT INTO pairs VALUES ('D', 1, '2.00', NULL, 't9')",
                                         "DELETE FROM pairs WHERE a = 'D'"], {"pairs": {("D", 1)}},
     {("pairs", ("D", 1)): None}),
    ("replace on the same key", ["INSERT OR REPLACE INTO pairs VALUES ('A', 1, '6.00', 'x', 't1')"],
     {"pairs": {("A", 1)}}, {("pairs", ("A", 1)): ("A", 1, "6.00", "x", "t1")}),
    ("replace deleting a row it never names", ["INSERT OR REPLACE INTO pairs VALUES ('D', 1, '1.00', NULL, 't1')"],
     {"pairs": {("A", 1), ("D", 1)}}, {("pairs", ("A", 1)): None, ("pairs", ("D", 1)): ("D", 1, "1.00", None, "t1")}),
    ("keys keep their type", ["INSERT INTO mixed VALUES (x'ff', 'blob'), ('b', 't'), (7, 'i'), (7.5, 'f')"],
     {"mixed": {(b"\xff",), ("b",), (7,), (7.5,)}},
     {("mixed", (b"\xff",)): (b"\xff", "blob"), ("mixed", (7,)): (7, "i"), ("mixed", (7.5,)): (7.5, "f"),
      ("mixed", ("7",)): None, ("mixed", (3,)): (3, "i"), ("mixed", ("3",)): ("3", "t"),
      ("mixed", (b"3",)): (b"3", "b")}),
    ("every kind of key deleted", ["DELETE FROM mixed"], {"mixed": {k[:1] for k in MIXED_SEED}},
     {("mixed", (None,)): None, ("mixed", (3,)): None}),
    ("a NULL key", ["UPDATE mixed SET v = 'z' WHERE k IS NULL"], {"mixed": {(None,)}},
     {("mixed", (None,)): (None, "z")}),
    ("three tables, narrow keys stay narrow",
     [f"UPDATE {Q} SET {QVAL} = 'uno' WHERE {QID} = 1", "UPDATE mixed SET v = 'w' WHERE k = 2.5",
      "DELETE FROM pairs WHERE b = 1"],
     {WEIRD: {(1,)}, "mixed": {(2.5,)}, "pairs": {("A", 1), ("B", 1)}},
     {(WEIRD, (1,)): (1, "uno"), (WEIRD, (2,)): (2, "two"), ("pairs", ("B", 1)): None}),
    ("64-bit extreme keys", ["UPDATE pairs SET memo = 'e' WHERE a IN ('B', 'C') AND b <> 1"],
     {"pairs": {("B", BIG), ("C", SMALL)}}, {("pairs", ("B", BIG)): ("B", BIG, "1.00", "e", "t4")}),
]


@pytest.mark.parametrize("statements, keys, rows", [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_changed_keys_and_rows_after_each_kind_of_write(world, statements, keys, rows):
    trial = play(world, statements)
    assert typed(trial.changed_keys()) == typed(keys)
    for (table, key), row in rows.items():
        assert trial.row(table, key) == row
        assert type(trial.row(table, key)) is (type(None) if row is None else tuple)
    for table, ks in keys.items():
        assert all(len(k) == KEYW[table] for k in trial.changed_keys()[table])


def test_the_log_table_and_its_triggers_by_name(world):
    """One log table, keys padded to the widest key (two columns), and three triggers per table named
    _evs_<table>_<insert|update|delete> (SQLite compares names case-insensitively; the stored names are these)."""
    db = world.reset(ROLE).db
    assert db.execute("SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'trigger') "
                      "ORDER BY type, name").fetchall() == [
        ("table", "_evalsuite_changes", "_evalsuite_changes"), ("table", "mixed", "mixed"),
        ("table", "pairs", "pairs"), ("table", WEIRD, WEIRD),
        *sorted(("trigger", f"_evs_{t}_{op}", t) for t in ("mixed", "pairs", WEIRD)
                for op in ("insert", "update", "delete"))]
    assert [c[1:3] for c in db.execute('PRAGMA table_info("_evalsuite_changes")')] == [
        ("tbl", "TEXT"), ("k0", ""), ("k1", "")]


def test_a_failed_call_logs_nothing_and_a_reset_empties_the_log(world):
    trial = play(world, ["DELETE FROM mixed"])
    assert trial.changed_keys()
    trial = world.reset(ROLE)
    assert trial.changed_keys() == {}
    ev = trial.call("write_then_fail", {"sql": "DELETE FROM pairs"})
    assert ev.outcome == "error" and trial.changed_keys() == {} and trial.rows() == world.initial_rows


def test_seed_rows_by_key(world):
    assert world.seed_row("pairs", ("B", BIG)) == PAIR["B", BIG]
    assert world.seed_row("pairs", ["B", 1]) == PAIR["B", 1]  # any sequence is a key
    assert world.seed_row("mixed", (None,)) == (None, "n") and world.seed_row("mixed", ("3",)) == ("3", "t")
    assert world.seed_row("mixed", (4,)) is None and world.seed_row(WEIRD, (2,)) == (2, "two")
    assert world.selector.key_of("pairs", PAIR["C", SMALL]) == ("C", SMALL)


# ---------------------------------------------------------------- rows_to_grade: the exact selection

def rows(table, *keys, now=None):
    src = {r[:KEYW[table]]: r for r in SEED_ROWS[table]} if now is None else now
    return [src[k] for k in keys]


ALL_PAIRS = [("A", 1), ("A", 2), ("B", 1), ("B", BIG), ("C", SMALL)]
SELECTIONS = [
    # (id, statements, assertions, seed side, side now)
    ("nothing written or asserted", [], [], {}, {}),
    ("an unwritten row an assertion matches, on both sides", [], [A("pairs", {"a": "B", "b": 1})],
     {"pairs": rows("pairs", ("B", 1))}, {"pairs": rows("pairs", ("B", 1))}),
    ("an unknown table does not stop later assertions", [],
     [A("nope", {"x": 1}), A("pairs", {"a": "B", "b": 1}), A("nope", {"y": 2})],
     {"pairs": rows("pairs", ("B", 1))}, {"pairs": rows("pairs", ("B", 1))}),
    ("an unknown column does not stop later assertions", [],
     [A("pairs", {"colour": "red"}), A("mixed", {"v": "i"}), A("pairs", {"a": "A", "colour": "red"})],
     {"mixed": rows("mixed", (3,))}, {"mixed": rows("mixed", (3,))}),
    ("a key naming every column", [], [A(WEIRD, {WID: 2, WVAL: "two"})],
     {WEIRD: rows(WEIRD, (2,))}, {WEIRD: rows(WEIRD, (2,))}),
    ("a non-key column matching several rows, in key order", [], [A("pairs", {"amt": "5.00", "memo": "x"}),
                                                                   A("pairs", {"b": 1})],
     {"pairs": rows("pairs", ("A", 1), ("B", 1))}, {"pairs": rows("pairs", ("A", 1), ("B", 1))}),
    ("money stays out of SQL: every row of the other columns' match", [], [A("pairs", {"a": "B", "amt": "20.5"})],
     {"pairs": rows("pairs", ("B", 1), ("B", BIG))}, {"pairs": rows("pairs", ("B", 1), ("B", BIG))}),
    ("money alone: the whole table", [], [A("pairs", {"amt": "1"})],
     {"pairs": rows("pairs", *ALL_PAIRS)}, {"pairs": rows("pairs", *ALL_PAIRS)}),
    ("the largest 64-bit integer is compared in SQL", [], [A("pairs", {"b": BIG})],
     {"pairs": rows("pairs", ("B", BIG))}, {"pairs": rows("pairs", ("B", BIG))}),
    ("the smallest 64-bit integer is compared in SQL", [], [A("pairs", {"b": SMALL})],
     {"pairs": rows("pairs", ("C", SMALL))}, {"pairs": rows("pairs", ("C", SMALL))}),
    ("an integer above 64 bits stays out of SQL", [], [A("pairs", {"a": "A", "b": BIG + 1})],
     {"pairs": rows("pairs", ("A", 1), ("A", 2))}, {"pairs": rows("pairs", ("A", 1), ("A", 2))}),
    ("an integer below 64 bits stays out of SQL", [], [A("pairs", {"a": "C", "b": SMALL - 1})],
     {"pairs": rows("pairs", ("C", SMALL))}, {"pairs": rows("pairs", ("C", SMALL))}),
    ("a NULL value is compared in SQL", [], [A("pairs", {"memo": None}), A("mixed", {"k": None})],
     {"mixed": rows("mixed", (None,)), "pairs": rows("pairs", ("A", 2))},
     {"mixed": rows("mixed", (None,)), "pairs": rows("pairs", ("A", 2))}),
    ("a boolean is compared in SQL (as 1)", [], [A("pairs", {"b": True})],
     {"pairs": rows("pairs", ("A", 1), ("B", 1))}, {"pairs": rows("pairs", ("A", 1), ("B", 1))}),
    ("a float is compared in SQL (1.0 is 1)", [], [A("pairs", {"b": 1.0, "a": "A"}), A("mixed", {"k": 2.5})],
     {"mixed": rows("mixed", (2.5,)), "pairs": rows("pairs", ("A", 1))},
     {"mixed": rows("mixed", (2.5,)), "pairs": rows("pairs", ("A", 1))}),
    ("a value with no SQL form (a decimal) stays out of SQL", [], [A(WEIRD, {WID: Decimal(2), WVAL: "one"})],
     {WEIRD: rows(WEIRD, (1,))}, {WEIRD: rows(WEIRD, (1,))}),
    ("a blob stays out of SQL", [], [A("mixed", {"k": b"3"})],
     {"mixed": MIXED_SEED}, {"mixed": MIXED_SEED}),
    ("text is not a number in a BLOB-affinity key", [], [A("mixed", {"k": "3"})],
     {"mixed": rows("mixed", ("3",))}, {"mixed": rows("mixed", ("3",))}),
    ("a row matching no assertion and never written is not read", [], [A("pairs", {"a": "Z"})], {}, {}),
    ("tables in domain order, whatever the write order",
     [f"DELETE FROM {Q} WHERE {QID} = 2", "UPDATE pairs SET memo = 'w' WHERE b = 2",
      "INSERT INTO mixed VALUES (9, 'nine')"], [],
     {"mixed": [], "pairs": rows("pairs", ("A", 2)), WEIRD: rows(WEIRD, (2,))},
     {"mixed": [(9, "nine")], "pairs": [("A", 2, "5.00", "w", "t2")], WEIRD: []}),
    ("mixed key types in SQLite's order: NULL, numbers, text, blobs", ["DELETE FROM mixed"], [],
     {"mixed": rows("mixed", (None,), (-5,), (2.5,), (3,), ("3",), ("a",), (b"3",))}, {"mixed": []}),
    ("inserted rows in key order, on the side now only",
     ["INSERT INTO mixed VALUES (x'00', 'b0'), ('Z', 'z'), (1, 'one'), (-7.5, 'f'), ('', 'e')"], [],
     {"mixed": []}, {"mixed": [(-7.5, "f"), (1, "one"), ("", "e"), ("Z", "z"), (b"\x00", "b0")]}),
    ("a written row an assertion also matches is selected once",
     ["UPDATE pairs SET memo = 'w' WHERE a = 'A' AND b = 1"], [A("pairs", {"a": "A"}), A("pairs", {"b": 1})],
     {"pairs": rows("pairs", ("A", 1), ("A", 2), ("B", 1))},
     {"pairs": [("A", 1, "5.00", "w", "t1"), PAIR["A", 2], PAIR["B", 1]]}),
    ("an assertion matching a row only now (a key change)", ["UPDATE pairs SET b = 5 WHERE a = 'A' AND b = 2"],
     [A("pairs", {"b": 5})], {"pairs": rows("pairs", ("A", 2))}, {"pairs": [("A", 5, "5.00", None, "t2")]}),
    ("a key change in the composite key, sorted by its second column",
     ["UPDATE pairs SET b = -1 WHERE a = 'A' AND b = 2", "UPDATE pairs SET a = 'AA' WHERE a = 'B' AND b = 1"], [],
     {"pairs": rows("pairs", ("A", 2), ("B", 1))}, {"pairs": [("A", -1, "5.00", None, "t2"),
                                                             ("AA", 1, "20.50", "y", "t3")]}),
]


@pytest.mark.parametrize("statements, assertions, initial, end", [c[1:] for c in SELECTIONS],
                         ids=[c[0] for c in SELECTIONS])
def test_rows_to_grade_selects_exactly(world, statements, assertions, initial, end):
    trial = play(world, statements)
    goal = GoalState(assertions=assertions)
    got = world.selector.rows_to_grade(trial.db, goal)
    assert got == (initial, end)
    assert [list(side) for side in got] == [list(initial), list(end)]  # tables in domain order
    assert grade_trial(trial, "", goal, ROLE) == grade(world.schemas, world.initial_rows, trial.rows(), trial.trace,
                                                       "", goal, ROLE)


def test_an_assertion_row_that_differs_from_the_seed_without_a_log_record_is_an_error(world):
    trial = world.reset(ROLE)
    trial.db.execute('DROP TRIGGER "_evs_pairs_update"')
    trial.db.execute("UPDATE pairs SET memo = 'hidden' WHERE a = 'B' AND b = 1")
    goal = GoalState(assertions=[A("nope", {}), A("pairs", {"memo": "hidden"})])
    with pytest.raises(RuntimeError) as err:
        world.selector.rows_to_grade(trial.db, goal)
    assert str(err.value) == ("table pairs row ('B', 1): differs from the seed but the change log has no record of "
                              "it; the grade would be wrong")
    # An unlogged row still equal to its seed row is fine, logged or not.
    ok = GoalState(assertions=[A("pairs", {"memo": "x"})])
    assert world.selector.rows_to_grade(trial.db, ok) == ({"pairs": rows("pairs", ("A", 1))},
                                                          {"pairs": rows("pairs", ("A", 1))})


def test_a_logged_row_differing_from_the_seed_is_no_error(world):
    trial = play(world, ["UPDATE pairs SET memo = 'seen' WHERE a = 'B' AND b = 1"])
    goal = GoalState(assertions=[A("pairs", {"memo": "seen"})])
    assert world.selector.rows_to_grade(trial.db, goal) == ({"pairs": rows("pairs", ("B", 1))},
                                                            {"pairs": [("B", 1, "20.50", "seen", "t3")]})


def test_a_collated_primary_key_is_refused_and_other_collations_are_not():
    m = MetaData()
    bad = Table("people", m, Column("name", String(collation="NOCASE"), primary_key=True))
    with pytest.raises(ValueError) as err:
        RowSelector({"people": bad}, {"people": []})
    assert str(err.value) == "table people: primary key column(s) ['name'] declare a collation; not supported"
    fine = Table("notes", m, Column("id", Integer, primary_key=True), Column("body", String(collation="NOCASE")))
    assert RowSelector({"notes": fine}, {"notes": [(1, "x")]}).seed_row("notes", (1,)) == (1, "x")


# ---------------------------------------------------------------- pk_order is SQLite's BINARY order

def test_pk_order_answers():
    assert pk_order(()) == ()
    assert pk_order((None, -1, 2.5, "a", b"a")) == ((0, 0), (1, -1), (1, 2.5), (2, "a"), (3, b"a"))
    keys = [(b"",), ("",), (3,), (None,), (-2**63,), (2.5,), ("B",), ("a",), (b"\x00",), (-0.5,), (True,)]
    assert sorted(keys, key=pk_order) == [(None,), (-2**63,), (-0.5,), (True,), (2.5,), (3,), ("",), ("B",), ("a",),
                                          (b"",), (b"\x00",)]
    assert sorted([("b", None), ("a", 2), ("a", None), ("a", "1")], key=pk_order) == [
        ("a", None), ("a", 2), ("a", "1"), ("b", None)]


SQL_VALUES = st.one_of(st.none(), st.integers(min_value=SMALL, max_value=BIG),
                       st.floats(allow_nan=False, allow_infinity=True, width=64),
                       st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=4),
                       st.binary(max_size=4))
PROPS = settings(max_examples=80, deadline=None, database=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@PROPS
@given(st.lists(st.tuples(SQL_VALUES, SQL_VALUES), max_size=12))
def test_pk_order_sorts_as_sqlite_orders(keys):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (a, b)")  # no declared type: values kept as bound
    db.executemany("INSERT INTO t VALUES (?, ?)", keys)
    ordered = db.execute("SELECT a, b FROM t ORDER BY a, b").fetchall()
    by_pk_order = sorted(db.execute("SELECT a, b FROM t").fetchall(), key=pk_order)
    # equal keys (1 and 1.0, 0.0 and -0.0) may come in either order: compare them as SQLite compares them
    assert [tuple(pk_order(k)) for k in by_pk_order] == [tuple(pk_order(k)) for k in ordered]


# ---------------------------------------------------------------- properties over random writes

PAIR_KEYS = [(a, b) for a in "ABD" for b in (1, 2, 3)] + [("B", BIG), ("C", SMALL)]
MIX_KEYS = [(-5,), (2.5,), (3,), ("3",), (b"3",), ("a",), (4,), ("z",), (b"\x01",), (None,)]
MEMOS, AMTS, TAGS = [None, "x", "y", "m"], ["5.00", "5.0", "1.00", "20.5"], ["t1", "t2", "t3", "t6", "t7"]


@st.composite
def writes(draw):
    """One write as (statement, params, model step); a step updates {table: {key: row}} and the touched keys."""
    kind = draw(st.sampled_from(["put", "memo", "amt", "rekey", "delete", "mput", "mset", "mdelete", "weird",
                                 "fail", "bulk"]))
    pk = draw(st.sampled_from(PAIR_KEYS))
    mk = draw(st.sampled_from(MIX_KEYS))
    memo, amt, tag = draw(st.sampled_from(MEMOS)), draw(st.sampled_from(AMTS)), draw(st.sampled_from(TAGS))
    newb = draw(st.sampled_from([1, 2, 3, 4]))
    if kind in ("put", "memo", "amt", "rekey", "delete", "bulk"):
        return _pairs_write(kind, pk, memo, amt, tag, newb)
    if kind == "weird":
        return _weird_write(draw(st.sampled_from([1, 2, 3])), memo)
    if kind in ("mput", "mset", "mdelete"):
        return _mixed_write(kind, mk, memo)
    return None, {"sql": "DELETE FROM pairs"}, lambda now, touched: None  # fail: rolled back


def _pairs_write(kind, pk, memo, amt, tag, newb):
    """A write on the two-column-key table."""
    where = {"a": pk[0], "b": pk[1]}
    if kind == "put":  # REPLACE: deletes the row with this key and the row with this tag
        def step(now, touched):
            gone = {k for k, r in now["pairs"].items() if k == pk or r[4] == tag}
            for k in gone:
                del now["pairs"][k]
            now["pairs"][pk] = (*pk, amt, memo, tag)
            touched["pairs"] |= gone | {pk}
        return ("INSERT OR REPLACE INTO pairs VALUES (:a, :b, :amt, :memo, :tag)",
                {**where, "amt": amt, "memo": memo, "tag": tag}, step)
    if kind in ("memo", "amt"):
        pos, value = (3, memo) if kind == "memo" else (2, amt)

        def step(now, touched):
            if pk in now["pairs"]:
                r = now["pairs"][pk]
                now["pairs"][pk] = r[:pos] + (value,) + r[pos + 1:]
                touched["pairs"].add(pk)
        return f"UPDATE pairs SET {kind} = :v WHERE a = :a AND b = :b", {**where, "v": value}, step
    if kind == "rekey":
        new = (pk[0], newb)

        def step(now, touched):
            if pk in now["pairs"] and (new == pk or new not in now["pairs"]):
                now["pairs"][new] = new + now["pairs"].pop(pk)[2:]
                touched["pairs"] |= {pk, new}
        # a clash with an existing key is skipped in SQL too, so the statement never fails
        return ("UPDATE pairs SET b = :nb WHERE a = :a AND b = :b AND (:nb = :b OR NOT EXISTS "
                "(SELECT 1 FROM pairs WHERE a = :a AND b = :nb))", {**where, "nb": newb}, step)
    if kind == "delete":
        def step(now, touched):
            if pk in now["pairs"]:
                del now["pairs"][pk]
                touched["pairs"].add(pk)
        return "DELETE FROM pairs WHERE a = :a AND b = :b", where, step

    def step(now, touched):  # bulk
        hit = {k for k, r in now["pairs"].items() if r[3] == memo}
        for k in hit:
            now["pairs"][k] = now["pairs"][k][:2] + ("0.00",) + now["pairs"][k][3:]
        touched["pairs"] |= hit
    return "UPDATE pairs SET amt = '0.00' WHERE memo IS :m", {"m": memo}, step


def _mixed_write(kind, mk, memo):
    """A write on the table whose one-column key mixes types (NULL included)."""
    if kind == "mput":
        k = mk if mk != (None,) else ("n",)  # a second NULL key would be a second row with that key

        def step(now, touched):
            now["mixed"][k] = (*k, memo)
            touched["mixed"].add(k)
        return "INSERT OR REPLACE INTO mixed VALUES (:k, :v)", {"k": k[0], "v": memo}, step

    def step(now, touched):
        if mk in now["mixed"]:
            if kind == "mset":
                now["mixed"][mk] = (*mk, memo)
            else:
                del now["mixed"][mk]
            touched["mixed"].add(mk)
    sql = "UPDATE mixed SET v = :v WHERE k IS :k" if kind == "mset" else "DELETE FROM mixed WHERE k IS :k"
    return sql, {"k": mk[0], "v": memo}, step


def _weird_write(i, memo):
    """A write on the table with quoted, odd names."""
    def step(now, touched):  # rows 1 and 2 are never deleted, row 3 is (re)inserted
        now[WEIRD][(i,)] = (i, memo)
        touched[WEIRD].add((i,))
    return f"INSERT OR REPLACE INTO {Q} ({QID}, {QVAL}) VALUES (:i, :v)" if i == 3 else \
        f"UPDATE {Q} SET {QVAL} = :v WHERE {QID} = :i", {"i": i, "v": memo}, step


COLUMN_VALUES = {"a": list("ABCDZ"), "b": [1, 2, 3, 4, BIG, SMALL, 1.0, True, BIG + 1], "amt": AMTS + ["0", "1"],
                 "memo": MEMOS, "tag": TAGS, "k": [k[0] for k in MIX_KEYS] + ["n"], "v": MEMOS + ["n", "i"],
                 WID: [1, 2, 3], WVAL: ["one", "two"] + MEMOS, "colour": ["red"]}


@st.composite
def assertions(draw):
    table = draw(st.sampled_from(["pairs", "pairs", "mixed", WEIRD, "nope"]))
    cols = COLS.get(table, ["a"]) + ["colour"]
    key_cols = draw(st.lists(st.sampled_from(cols), min_size=1, max_size=3, unique=True))
    key = {c: draw(st.sampled_from(COLUMN_VALUES[c])) for c in key_cols}
    expect_cols = draw(st.lists(st.sampled_from(COLS.get(table, ["a"])), max_size=1))
    expect = {c: draw(st.sampled_from(COLUMN_VALUES[c])) for c in expect_cols}
    row_count = draw(st.sampled_from([None, None, 0, 1, 2]))
    return A(table, key, expect=expect, row_count=row_count)


@PROPS
@given(st.lists(writes(), max_size=8), st.lists(assertions(), max_size=4))
def test_the_log_and_the_selection_over_random_writes(world, steps, goal_assertions):
    trial = world.reset(ROLE)
    now = {t: {r[:KEYW[t]]: r for r in SEED_ROWS[t]} for t in SEED_ROWS}
    touched = {t: set() for t in SEED_ROWS}
    for sql, params, step in steps:
        if sql is None:
            assert trial.call("write_then_fail", params).outcome == "error"
        else:
            assert trial.call("run_sql", {"sql": sql, "params": params}).outcome == "ok"
        step(now, touched)
    # the state is the model's, each table in SQLite's key order (pk_order reproduces it)
    assert trial.rows() == {t: sorted(now[t].values(), key=lambda r, t=t: pk_order(r[:KEYW[t]])) for t in now}
    # the log holds exactly the keys a statement touched: every row that differs, and rows changed back
    logged = trial.changed_keys()
    assert typed(logged) == typed({t: ks for t, ks in touched.items() if ks})
    seed = {t: {r[:KEYW[t]]: r for r in SEED_ROWS[t]} for t in SEED_ROWS}
    differs = {t: {k for k in seed[t].keys() | now[t].keys() if seed[t].get(k) != now[t].get(k)} for t in seed}
    assert all(differs[t] <= logged.get(t, set()) for t in differs)
    for t, ks in touched.items():
        for k in ks:
            assert trial.row(t, k) == now[t].get(k)
    # the selection: one key set per table, seed rows and rows now of it, in key order; every logged key in it
    goal = GoalState(assertions=goal_assertions)
    initial, end = world.selector.rows_to_grade(trial.db, goal)
    assert list(initial) == list(end) == [t for t in SEED_ROWS if t in initial]
    for t in initial:
        selected = {r[:KEYW[t]] for r in initial[t]} | {r[:KEYW[t]] for r in end[t]}
        assert {k for k in logged.get(t, ()) if k in seed[t] or k in now[t]} <= selected
        order = sorted(selected, key=pk_order)
        assert initial[t] == [seed[t][k] for k in order if k in seed[t]]
        assert end[t] == [now[t][k] for k in order if k in now[t]]
    assert set(logged) <= set(initial)
    # row-level grading is whole-table grading
    assert grade_trial(trial, "", goal, ROLE) == grade(world.schemas, world.initial_rows, trial.rows(), trial.trace,
                                                       "", goal, ROLE)


class _Unread(dict):
    """Seed rows a selector must not read: a table read whole fails the test."""

    def __getitem__(self, table):
        raise AssertionError(f"table {table} read whole")


def test_with_the_seed_as_a_database_a_seed_row_is_looked_up_by_key_never_read_with_its_table(world, tmp_path):
    # A million-row world's grade reads the few rows it needs: the selector looks each up in the seed database.
    selector = RowSelector(DOMAIN.tables, _Unread(), seed_db=sqlite3.connect(tmp_path / "w.sqlite"))
    assert selector.seed_row("pairs", ("B", BIG)) == PAIR["B", BIG]
    assert selector.seed_row("mixed", (4,)) is None


def test_rows_a_trial_started_from_whose_keys_mix_types_are_no_change_of_the_agent(world):
    # The baseline (rows an initialization or an injection put there) joins the seed in SQLite's key order,
    # which orders 4 and '4' where Python cannot.
    trial = play(world, ["INSERT INTO mixed VALUES (4, 'x')", "INSERT INTO mixed VALUES ('4', 'y')"])
    baseline = {"mixed": {(4,): (4, "x"), ("4",): ("4", "y")}}
    assert grade_trial(trial, "", GoalState(), ROLE, baseline=baseline).passed
    assert not grade_trial(trial, "", GoalState(), ROLE).passed
