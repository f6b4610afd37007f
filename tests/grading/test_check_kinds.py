"""A check carries its kind as a field, set where the grader makes it: the scorecard's measures, acceptance and the
regrade of recorded runs read the kind, never the name; checks recorded before kinds were fields read the same."""
from __future__ import annotations

from sqlalchemy import MetaData

from evalsuite.core.records import Assertion, Check, GoalState, RequiredOutput, Role
from evalsuite.grading.grader import Verdict, grade, state_checks
from evalsuite.grading.measures import outcome_passed
from evalsuite.worlds.domain import Domain
from evalsuite.worlds.world import TableSchema

SCHEMAS = {"orders": TableSchema(columns=["order_id", "status"], key=["order_id"]),
           "notes": TableSchema(columns=["note_id", "text"], key=["note_id"])}


def test_each_check_the_grader_makes_says_what_it_judges():
    goal = GoalState(assertions=[Assertion(table="orders", key={"order_id": "O1"}, expect={"status": "closed"},
                                           clause="c1")],
                     unchanged_tables=["notes"], required_outputs=[RequiredOutput(name="decision", value="closed")])
    verdict = grade(SCHEMAS, {"orders": [("O1", "open")]}, {"orders": [("O1", "closed")]}, [], "closed it",
                    goal, Role(name="r"))
    kinds = {c.name: (c.kind, c.subject) for c in verdict.checks}
    assert kinds == {"assertion[0] orders {'order_id': 'O1'} (c1)": ("state", None), "unchanged notes": ("state", None),
                     "no collateral change": ("state", None), "no forbidden call": ("trace", None),
                     "no write outside role": ("trace", None), "output decision": ("output", "decision")}


def test_the_measures_read_the_kind_not_the_name():
    domain = Domain(name="d", version="1", metadata=MetaData(), attempt_checks=frozenset({"no_refused_refund"}))
    attempt = Check(name="refunds refused by the rules", passed=False, kind="domain", subject="no_refused_refund")
    renamed_trace = Check(name="calls of forbidden tools", passed=False, kind="trace")
    assert outcome_passed(Verdict(passed=False, checks=[attempt, renamed_trace]), domain)
    state = Check(name="no forbidden call", passed=False, kind="state")  # a state check, whatever its name says
    assert not outcome_passed(Verdict(passed=False, checks=[state]), domain)
    assert state_checks(Verdict(passed=False, checks=[state, renamed_trace])) == [state]


def test_a_check_recorded_before_kinds_were_fields_reads_with_its_kind():
    old = [{"name": "user world: check told_user", "passed": False}, {"name": "no write outside role", "passed": True},
           {"name": "output variance amount per unit", "passed": False}, {"name": "unchanged payments", "passed": True}]
    read = [Check.model_validate(c) for c in old]
    assert [(c.kind, c.subject, c.side) for c in read] == [
        ("domain", "told_user", "user"), ("trace", None, "agent"), ("output", "variance amount per unit", "agent"),
        ("state", None, "agent")]
    assert [c.name for c in read] == [c["name"] for c in old]  # the names people read stay as they were
    again = [Check.model_validate(c.model_dump()) for c in read]
    assert again == read


def test_a_check_the_grader_makes_unvalidated_is_the_one_validation_makes():
    """Check.made skips validating what the grader already typed; field for field, set fields and serialized form
    included, it is the check the constructor makes (a pydantic release that stores a model otherwise fails here)."""
    for given in ({"name": "unchanged notes", "passed": True, "kind": "state"},
                  {"name": "no collateral change", "passed": False, "kind": "state", "detail": "notes row ['1'] x"},
                  {"name": "output decision", "passed": True, "kind": "output", "subject": "decision", "detail": ""}):
        made, validated = Check.made(**given), Check(**given)
        assert made == validated and repr(made) == repr(validated)
        assert made.model_fields_set == validated.model_fields_set
        assert made.model_dump_json() == validated.model_dump_json()
        assert made.model_copy(update={"side": "user"}) == validated.model_copy(update={"side": "user"})
        assert Verdict(passed=True, checks=[made]).model_dump_json() == Verdict(
            passed=True, checks=[validated]).model_dump_json()
