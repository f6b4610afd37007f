"""Task files that are clearly wrong are refused by field: duplicate ids, empty ids, values a goal cannot compare."""
from __future__ import annotations

import json

import pytest

from evalsuite.audit.validation import validate_file


def write(tmp_path, objs) -> str:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))  # json.dumps writes NaN as the JSON extension NaN
    return str(path)


def first_write_task(ap) -> dict:
    return json.loads(next(t for t in ap.tasks if t.goal_state.assertions).model_dump_json())


def test_the_same_task_twice_in_one_file_is_refused(ap, tmp_path):
    task = first_write_task(ap)
    problems = [str(p) for p in validate_file(write(tmp_path, [task, task]))]
    assert problems == [f"{tmp_path / 'tasks.jsonl'}:{task['task_id']}:task_id: "
                        "duplicate task id in suite 'ap_exceptions' (first at record 1)"]


@pytest.mark.parametrize("task_id", ["", " ", "a b", "../x"])
def test_an_empty_or_path_like_task_id_is_refused(ap, tmp_path, task_id):
    task = {**first_write_task(ap), "task_id": task_id}
    problems = validate_file(write(tmp_path, [task]))
    assert [p.field for p in problems] == ["task_id"]


@pytest.mark.parametrize("part, value, message", [
    ("expect", float("nan"), "is not a number a goal can compare"),
    ("expect", float("inf"), "is not a number a goal can compare"),
    ("key", 2**64, "does not fit a 64-bit integer"),
])
def test_values_a_goal_cannot_compare_exactly_are_refused(ap, tmp_path, part, value, message):
    task = first_write_task(ap)
    assertion = task["goal_state"]["assertions"][0]
    column = next(iter(assertion[part] or assertion["key"]))
    assertion[part] = {**assertion[part], column: value}
    problems = validate_file(write(tmp_path, [task]))
    assert len(problems) == 1 and problems[0].field.startswith(f"goal_state.assertions.0.{part}")
    assert message in problems[0].message


def test_a_negative_row_count_is_refused(ap, tmp_path):
    task = first_write_task(ap)
    task["goal_state"]["assertions"][0]["row_count"] = -1
    assert [p.field for p in validate_file(write(tmp_path, [task]))] == ["goal_state.assertions.0.row_count"]


@pytest.mark.parametrize("value, message", [
    (1234.5678901234, "money must be a decimal string such as '12.50' or an integer, not float 1234.5678901234"),
    ("NaN", "'NaN' is not a decimal amount such as '12.50'"),
    ("12.345", "'12.345' has more than 2 decimal places"),
])
def test_money_in_a_goal_is_exact(ap, tmp_path, value, message):
    task = first_write_task(ap)
    task["goal_state"]["assertions"][0]["expect"]["total"] = value
    problems = validate_file(write(tmp_path, [task]))
    assert [(p.field, p.message) for p in problems] == [("goal_state.assertions.0.expect.total", message)]


@pytest.mark.parametrize("tool, message", [
    ("refund_invoice", "unknown tool 'refund_invoice' in domain ap_exceptions"),
    ("__role_lacks__", "is not among the role's tools: the fault would never fire"),
])
def test_a_fault_plan_naming_a_tool_the_role_cannot_call_is_refused(ap, tmp_path, tool, message):
    task = first_write_task(ap)
    if tool == "__role_lacks__":
        allowed = {*task["role"]["read_tools"], *task["role"]["write_tools"]}
        tool = next(t for t in ap.world.domain.tools if t not in allowed)
    task["trial_protocol"]["fault_plans"] = [{"name": "p", "faults": [{"tool": tool, "kind": "timeout"}]}]
    problems = validate_file(write(tmp_path, [task]))
    assert [p.field for p in problems] == ["trial_protocol.fault_plans.0.faults.0.tool"]
    assert message in problems[0].message
