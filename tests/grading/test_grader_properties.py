"""Properties of the grader over random trials in the shop world (tests/grading/grader_shop.py).

- a collateral change anywhere (any table, any row no assertion covers; insert,
  update or delete) fails the trial, on "no collateral change" alone;
- masking a column makes changes to that column irrelevant, and changes nothing else;
- the order of the assertions does not change the verdict;
- the row-level verdict equals the whole-table verdict, on random edits and goals.

Examples are derandomized (the same ones every run, so a mutation score is
reproducible) and few, so the file runs in seconds.
"""
from __future__ import annotations

import itertools
from decimal import Decimal

import pytest
from grader_shop import CLERK, SHOP, build_world, named, play, verdict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalsuite.core.records import Assertion, GoalState, MaskedField
from evalsuite.grading.grader import grade

SETTINGS = settings(max_examples=60, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

COLUMNS = {"orders": ["order_id", "status", "total", "note"],
           "lines": ["order_id", "line_no", "qty", "price", "note"],
           "tags": ["tag", "label"]}
KEYS = {"orders": ["order_id"], "lines": ["order_id", "line_no"], "tags": ["tag"]}
VALUES = {"order_id": ["O1", "O2", "O3", "O4"], "line_no": [1, 2, 3], "tag": ["t1", "t2", "t3"],
          "status": ["open", "held", "closed"], "total": ["0.00", "10.00", "20.5", "20.50", "21.00"],
          "note": [None, "x", "vip", "gift"], "qty": [1, 2, 3], "price": [None, "0.00", "10.25", "10.250"],
          "label": [None, "red", "blue", "x"]}
MASKS = ["note", "orders.note", "lines.note", "tags.label", "label", "orders.total", "lines.qty", "status"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("shop") / "shop.sqlite")


def where(table):
    return " AND ".join(f"{k} = :k_{k}" for k in KEYS[table])


def key_params(table, key):
    return {f"k_{k}": v for k, v in zip(KEYS[table], key)}


# An edit is (sql, params): one run_sql call.
@st.composite
def edits(draw, tables=tuple(COLUMNS)):
    table = draw(st.sampled_from(tables))
    key = tuple(draw(st.sampled_from(VALUES[k])) for k in KEYS[table])
    data = [c for c in COLUMNS[table] if c not in KEYS[table]]
    kind = draw(st.sampled_from(["update", "update", "insert", "delete", "bulk", "rekey"]))
    if kind == "update":
        col = draw(st.sampled_from(data))
        return (f"UPDATE {table} SET {col} = :v WHERE {where(table)}",
                {"v": draw(st.sampled_from(VALUES[col])), **key_params(table, key)})
    if kind == "bulk":  # every row with one value in a column: several rows in one statement
        col, by = draw(st.sampled_from(data)), draw(st.sampled_from(COLUMNS[table][:2]))
        return (f"UPDATE {table} SET {col} = :v WHERE {by} = :w",
                {"v": draw(st.sampled_from(VALUES[col])), "w": draw(st.sampled_from(VALUES[by]))})
    if kind == "insert":
        row = dict(zip(KEYS[table], key)) | {c: draw(st.sampled_from([v for v in VALUES[c] if v is not None]))
                                             for c in data}
        cols = ", ".join(row)
        return f"INSERT OR IGNORE INTO {table} ({cols}) VALUES ({', '.join(':' + c for c in row)})", row
    if kind == "rekey":
        k = KEYS[table][-1]
        return (f"UPDATE OR IGNORE {table} SET {k} = :v WHERE {where(table)}",
                {"v": draw(st.sampled_from(VALUES[k])), **key_params(table, key)})
    return f"DELETE FROM {table} WHERE {where(table)}", key_params(table, key)


@st.composite
def assertions(draw, tables=("orders", "lines", "tags"), avoid: tuple = ()):
    table = draw(st.sampled_from(tables))
    cols = [c for c in COLUMNS[table] if (table, c) not in avoid]
    by = draw(st.sampled_from(["key", "key", "partial", "column"]))
    if by == "key":
        key = {k: draw(st.sampled_from(VALUES[k])) for k in KEYS[table]}
    elif by == "partial":
        key = {KEYS[table][0]: draw(st.sampled_from(VALUES[KEYS[table][0]]))}
    else:
        c = draw(st.sampled_from([c for c in cols if c not in KEYS[table]] or KEYS[table]))
        key = {c: draw(st.sampled_from(VALUES[c]))}
    expect_cols = draw(st.lists(st.sampled_from([c for c in cols if c not in KEYS[table]] or ["x"]), max_size=2,
                                unique=True))
    expect = {c: draw(st.sampled_from(VALUES.get(c, [1]))) for c in expect_cols}
    return Assertion(table=table, key=key, expect=expect, row_count=draw(st.sampled_from([None, None, 0, 1, 2])),
                     clause=draw(st.sampled_from(["C1", "C2"])))


def goals(avoid: tuple = (), masks=MASKS, unchanged=True):
    return st.builds(
        lambda a, m, u: GoalState(assertions=a, volatile_fields_masked=[MaskedField(field=f, justification="v")
                                                                        for f in m], unchanged_tables=u),
        st.lists(assertions(avoid=avoid), max_size=4),
        st.lists(st.sampled_from(masks), max_size=2, unique=True) if masks else st.just([]),
        st.lists(st.sampled_from(list(COLUMNS)), max_size=2, unique=True) if unchanged else st.just([]))


def run(world, trial_edits, role=CLERK):
    return play(world, [("run_sql", {"sql": s, "params": p}) for s, p in trial_edits], role)


OTHER_CALLS = st.sampled_from([("refund", {"order_id": "O2"}), ("purge_tags", {}), ("note", {"text": "n"}),
                               ("get_order", {"order_id": "O1"}), ("list_tags", {}),
                               ("set_status", {"order_id": "O3", "status": "held"})])


@SETTINGS
@given(calls=st.lists(st.one_of(edits(), OTHER_CALLS), max_size=6), goal=goals(), enforced=st.booleans(),
       forbidden=st.sampled_from([None, set(), {"set_status"}, {"refund", "purge_tags"}]))
def test_row_level_verdict_equals_whole_table_verdict(world, calls, goal, enforced, forbidden):
    trial = play(world, [c if c[0] in SHOP.tools else ("run_sql", {"sql": c[0], "params": c[1]}) for c in calls],
                 CLERK if enforced else None)
    v = verdict(world, trial, goal, "O1 20.50", CLERK, forbidden)  # asserts the two paths agree
    assert v.passed == all(named(v).values())


@SETTINGS
@given(trial_edits=st.lists(edits(), max_size=6), goal=goals(), data=st.data())
def test_the_order_of_assertions_does_not_change_the_verdict(world, trial_edits, goal, data):
    trial = run(world, trial_edits)
    end = trial.rows()
    order = data.draw(st.permutations(range(len(goal.assertions))))
    shuffled = goal.model_copy(update={"assertions": [goal.assertions[i] for i in order]})
    v1 = grade(world.schemas, world.initial_rows, end, trial.trace, "", goal, CLERK)
    v2 = verdict(world, trial, shuffled, "", CLERK)
    n = len(goal.assertions)
    assert v2.passed == v1.passed
    assert v2.checks[n:] == v1.checks[n:]  # unchanged tables, collateral (details too), trace
    for new, old in enumerate(order):  # each assertion's own check, under its new index
        a, b = v1.checks[old], v2.checks[new]
        assert (b.passed, b.detail, b.name) == (a.passed, a.detail, a.name.replace(f"[{old}]", f"[{new}]", 1))


def goal_for(trial, world) -> GoalState:
    """The goal a trial's own edits meet: every row it wrote, asserted by key (an update on its changed columns)."""
    out = []
    for table, keys in sorted(trial.changed_keys().items()):
        for key in sorted(keys):
            row, seed = trial.row(table, key), world.seed_row(table, key)
            k = dict(zip(KEYS[table], key))
            if row is None and seed is not None:
                out.append(Assertion(table=table, key=k, row_count=0, clause="C1"))
            elif row is not None:  # inserted (every column expected) or updated (the columns that changed)
                expect = {c: v for c, v, was in zip(COLUMNS[table], row, seed or [object()] * len(row))
                          if c not in KEYS[table] and v != was}
                out.append(Assertion(table=table, key=k, expect=expect, row_count=1, clause="C1"))
    return GoalState(assertions=out)


@st.composite
def collateral(draw, trial, goal):
    """One edit that really changes the state where no assertion allows it: (edit, table, key).

    On a row no assertion names: an insert, an update or a delete. On a row an assertion names: an update
    of a column it does not expect.
    """
    table = draw(st.sampled_from(list(COLUMNS)))
    now = {trial.world.selector.key_of(table, r): r for r in trial.rows()[table]}
    asserted = {tuple(a.key[k] for k in KEYS[table]): a for a in goal.assertions if a.table == table}
    data = [c for c in COLUMNS[table] if c not in KEYS[table]]
    options = [k for k in itertools.product(*(VALUES[k] for k in KEYS[table])) if k not in asserted]
    options += [k for k, a in asserted.items() if k in now and set(data) - set(a.expect)]
    key = draw(st.sampled_from(options))
    if key not in now:  # nothing there: insert it
        row = dict(zip(KEYS[table], key)) | {c: draw(st.sampled_from([v for v in VALUES[c] if v is not None]))
                                             for c in data}
        return (f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join(':' + c for c in row)})", row), table, key
    if key not in asserted and draw(st.booleans()):
        return (f"DELETE FROM {table} WHERE {where(table)}", key_params(table, key)), table, key
    col = draw(st.sampled_from([c for c in data if c not in (asserted[key].expect if key in asserted else ())]))
    old = now[key][COLUMNS[table].index(col)]
    new = draw(st.sampled_from([v for v in VALUES[col] if v != old and not _same_money(col, v, old)]))
    return (f"UPDATE {table} SET {col} = :v WHERE {where(table)}", {"v": new, **key_params(table, key)}), table, key


def _same_money(col, a, b):
    return col in ("total", "price") and None not in (a, b) and Decimal(a) == Decimal(b)


@SETTINGS
@given(solution=st.lists(edits(), max_size=5), data=st.data())
def test_a_collateral_change_anywhere_fails_the_trial(world, solution, data):
    trial = run(world, solution)
    goal = goal_for(trial, world)
    clean = verdict(world, trial, goal)
    assert clean.passed, clean.failures()  # the solution meets the goal made from it
    extra, table, key = data.draw(collateral(trial, goal))
    trial = run(world, [*solution, extra])
    v = verdict(world, trial, goal)
    assert not v.passed
    assert [c.name for c in v.failures()] == ["no collateral change"]
    assert f"{table} row {[str(k) for k in key]}" in v.failures()[0].detail


def _masked_tables(field):
    table, _, col = field.rpartition(".")
    return ([table] if table else [t for t in COLUMNS if col in COLUMNS[t]]), col


@SETTINGS
@given(trial_edits=st.lists(edits(), max_size=7), field=st.sampled_from(MASKS), data=st.data())
def test_a_masked_column_is_irrelevant_and_nothing_else_is(world, trial_edits, field, data):
    """Grading with `field` masked equals grading, unmasked, the end state with that column put back as seeded.

    A row whose key the seed has gets its seeded value of the column back (an insert keeps its own: masks
    excuse changed values, never a whole new row). Assertions must not look at the masked column (they would
    see its value, masked or not), and unchanged tables compare whole rows, masks aside: both are left out.
    """
    tables, col = _masked_tables(field)
    goal = data.draw(goals(avoid=tuple((t, col) for t in tables), masks=[], unchanged=False))
    masked = goal.model_copy(update={"volatile_fields_masked": [MaskedField(field=field, justification="v")]})
    trial = run(world, trial_edits)
    end = trial.rows()
    for t in tables:
        i = COLUMNS[t].index(col)
        seeded = lambda r: world.seed_row(t, world.selector.key_of(t, r))  # noqa: E731
        end[t] = [r if seeded(r) is None else (*r[:i], seeded(r)[i], *r[i + 1:]) for r in end[t]]
    unmasked = grade(world.schemas, world.initial_rows, end, trial.trace, "", goal, CLERK)
    assert verdict(world, trial, masked) == unmasked
