"""Domain checks: obligations a goal names and the domain computes from the end state, the seed and the trace."""
from __future__ import annotations

import pytest

from evalsuite.core.records import Check, DomainCheck, GoalState
from evalsuite.grading.grader import grade_trial
from evalsuite.worlds import Domain
from evalsuite.worlds.domain import CheckInput
from tests.grading.grader_shop import CLERK, SHOP, build_world, named, play


def _closed_orders(db) -> int:
    return db.execute("SELECT count(*) FROM orders WHERE status = 'closed'").fetchone()[0]


@SHOP.check
def closed_exactly(inp: CheckInput) -> Check:
    """Exactly `more` orders were closed by the trial (end state against the seed), by a call that succeeded."""
    more = _closed_orders(inp.end) - _closed_orders(inp.seed)
    calls = [e for e in inp.trace if e.tool == "set_status" and e.outcome == "ok"]
    ok = more == inp.params["more"] and len(calls) == more
    return Check.outcome(ok, "" if ok else f"{more} more closed, {len(calls)} successful set_status calls")


GOAL = GoalState(domain_checks=[DomainCheck(name="closed_exactly", params={"more": 1}, clause="c1")],
                 volatile_fields_masked=[{"field": "orders.status", "justification": "the check judges it"}])


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("w") / "shop.sqlite")


def test_a_domain_check_judges_the_end_state_against_the_seed(world):
    done = play(world, [("set_status", {"order_id": "O1", "status": "closed"})])
    assert named(grade_trial(done, "", GOAL, CLERK))["check closed_exactly"] is True
    noop = play(world, [])
    verdict = grade_trial(noop, "", GOAL, CLERK)
    assert not verdict.passed
    assert [c.detail for c in verdict.failures()] == ["0 more closed, 0 successful set_status calls"]


def test_a_domain_check_sees_the_trace_not_only_the_state(world):
    # the state is right, but the close came from raw SQL, not the tool the check requires
    sneaky = play(world, ["UPDATE orders SET status = 'closed' WHERE order_id = 'O1'"])
    assert named(grade_trial(sneaky, "", GOAL, CLERK))["check closed_exactly"] is False


def test_an_unknown_check_name_is_refused_by_name(world):
    goal = GoalState(domain_checks=[DomainCheck(name="nope", clause="c1")])
    with pytest.raises(KeyError, match="'nope' is not a check of domain shop"):
        grade_trial(play(world, []), "", goal, CLERK)


def test_checks_register_per_domain():
    other = Domain(name="other", version="1", metadata=SHOP.metadata)
    assert "closed_exactly" in SHOP.checks and other.checks == {}
