"""τ²-bench telecom's task set composed by evalsuite's composition machinery against the original's data.

Expectations come from the vendored data (tasks.json, split_tasks.json, tasks_small.json) and from
TOOLS_SPEC.md §12: counts are computed here from the catalogue's group sizes, strata from the split's ids.
"""
from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evalsuite.domains.tau2_telecom import build_worlds, from_toml
from evalsuite.domains.tau2_telecom import composition as c
from evalsuite.domains.tau2_telecom.issues import (
    DELETED,
    ENTITY,
    GROUPS,
    INTENTS,
    ISSUES,
    ORDER,
    handoff,
    subtask,
    then,
    user,
)
from evalsuite.domains.tau2_telecom.workbench import TelecomWorkbench
from evalsuite.tasks.composition import Composite, verify

SRC = Path(__file__).resolve().parents[2] / "third_party" / "tau2_telecom"
ID = re.compile(r"^\[(\w+)\](.+)\[PERSONA:(None|Easy|Hard)\]$")


@pytest.fixture(scope="module")
def raw() -> str:
    return (SRC / "tasks.json").read_text()


@pytest.fixture(scope="module")
def theirs(raw) -> list[dict[str, Any]]:
    return json.loads(raw)


@pytest.fixture(scope="module")
def splits() -> dict[str, list[str]]:
    return json.loads((SRC / "split_tasks.json").read_text())


@pytest.fixture(scope="module")
def composed() -> list[c.Composed]:
    return c.composed()


@pytest.fixture(scope="module")
def ours(composed) -> list[dict[str, Any]]:
    return [c.record(t) for t in c.kept(composed)]


def differences(ours: Any, theirs: Any, path: str) -> list[str]:
    """Every leaf where the two differ, as `path: ours != theirs`."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        keys = [*theirs, *(k for k in ours if k not in theirs)]
        return [d for k in keys for d in differences(ours.get(k, "<absent>"), theirs.get(k, "<absent>"),
                                                       f"{path}.{k}")]
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if ours == theirs and type(ours) is type(theirs) else [f"{path}: {ours!r} != {theirs!r}"]


def stratum_of(task_id: str) -> tuple[str, int, str]:
    intent, issues, persona = ID.match(task_id).groups()
    return intent, len(issues.split("|")), persona


def test_the_full_set_has_the_task_files_ids_in_its_order(ours, theirs):
    assert [t["id"] for t in ours] == [t["id"] for t in theirs]


@pytest.mark.parametrize("field", ["initial_state.initialization_actions", "evaluation_criteria.actions",
                                   "evaluation_criteria.env_assertions", "evaluation_criteria.reward_basis",
                                   "user_scenario", "ticket", "description"])
def test_every_task_field_equals_the_task_files(ours, theirs, field):
    def get(task):
        for key in field.split("."):
            task = task[key]
        return task
    diffs = [d for a, b in zip(ours, theirs) for d in differences(get(a), get(b), f"{b['id']} {field}")]
    assert diffs == []


def test_the_full_set_serialises_to_the_task_file_byte_for_byte(ours, theirs, raw):
    assert [d for a, b in zip(ours, theirs) for d in differences(a, b, b["id"])] == []  # every field, nulls too
    assert json.dumps(ours, indent=2) == raw


def _count(intent: str, without: frozenset[str]) -> int:
    """Combinations of one alternative or none per group, less those the validity rule refuses (no issue from
    its required groups)."""
    i = INTENTS[intent]
    sizes = {g: sum(issue.name not in without for issue in GROUPS[g]) for g in i.groups}
    return math.prod(sizes[g] + 1 for g in i.groups) - math.prod(sizes[g] + 1 for g in i.groups
                                                                    if g not in i.required)


def test_counts_per_intent_follow_from_the_group_sizes(composed, theirs):
    in_file = Counter(stratum_of(t["id"])[0] for t in theirs)
    after = {name: _count(name, frozenset({DELETED})) for name in ORDER}
    before = {name: _count(name, frozenset()) for name in ORDER}
    assert after == dict(in_file) == {"mobile_data_issue": 254, "service_issue": 47, "mms_issue": 1984}
    assert before == dict(Counter(t.composite.intent for t in composed))
    assert sum(before.values()) == 3405  # the spec's count of what the code composes before the deletion
    assert len(GROUPS) == 14 and sum(map(len, GROUPS.values())) == 20


def test_personas_are_assigned_before_the_deletion(composed, theirs):
    """Dropping the deleted issue's tasks first would shift the cyclic personas off the file's."""
    dropped_first = [f"[{t.composite.intent}]{'|'.join(t.issues)}[PERSONA:{list(c.PERSONAS)[k % 3]}]"
                     for name in ORDER
                     for k, t in enumerate(x for x in c.with_personas(INTENTS[name]) if DELETED not in x.issues)]
    assert [t.id for t in c.kept(composed)] == [t["id"] for t in theirs]
    assert dropped_first != [t["id"] for t in theirs]


def test_the_sample_is_the_base_split_and_the_single_issue_tasks_the_small_one(composed, splits):
    sample = c.sampled(composed)
    assert len(sample) == 152
    assert {t.id for t in c.kept(sample)} == set(splits["base"]) and len(c.kept(sample)) == len(splits["base"])
    assert [t.id for t in c.single_issue(c.kept(composed))] == splits["small"]
    small_file = json.loads((SRC / "tasks_small.json").read_text())
    assert [c.record(t) for t in c.single_issue(c.kept(composed))] == small_file


def test_the_sample_is_what_the_module_level_random_functions_draw(composed):
    """§12.3 step 6 as written: random.seed(42), then random.sample of min(3, size) per bin in first-seen order."""
    bins: dict[tuple, list[str]] = {}
    for t in composed:
        key = stratum_of(t.id)
        if key[1] >= 2:
            bins.setdefault(key, []).append(t.id)
    state = random.getstate()
    try:
        random.seed(42)
        expected = [i for ids in bins.values() for i in random.sample(ids, min(3, len(ids)))]
    finally:
        random.setstate(state)
    assert [t.id for t in c.sampled(composed)] == expected


def test_the_strata_table_counts_the_base_split_per_intent_issue_count_and_persona(composed, theirs, splits):
    table = c.strata(c.kept(composed), c.kept(c.sampled(composed)))
    in_base = Counter(map(stratum_of, splits["base"]))
    in_file = Counter(stratum_of(t["id"]) for t in theirs if stratum_of(t["id"])[1] >= 2)
    assert {(r["intent"], r["issues"], r["persona"]): r["sampled"] for r in table if r["sampled"]} == in_base
    assert {(r["intent"], r["issues"], r["persona"]): r["available"] for r in table} == in_file
    assert all(r["sampled"] <= min(3, r["available"]) for r in table)
    per_intent = Counter()
    for r in table:
        per_intent[r["intent"]] += r["sampled"]
    assert per_intent == Counter(stratum_of(i)[0] for i in splits["base"])  # README: 49 / 36 / 29


@pytest.fixture(scope="module")
def box(tmp_path_factory) -> TelecomWorkbench:
    worlds = build_worlds(from_toml(SRC / "db.toml"), from_toml(SRC / "user_db.toml"),
                          tmp_path_factory.mktemp("tel") / "world.sqlite")
    return TelecomWorkbench(*worlds)


def test_every_task_verifies_with_the_domains_tools(composed, box):
    """§12.3 step 5 on all 2,285 tasks: the fresh state passes the intent's check, the setup breaks it (each issue's
    setup checks holding), it stays broken before each gold action and is fixed after the last (unfixable tasks:
    still broken after the transfer), and the stored assertions hold."""
    assert c.verify_all(c.kept(composed), box) == {}


def test_verification_fails_a_task_whose_gold_leaves_it_broken(box):
    apn = replace(ISSUES["break_apn_settings"], fix=user("reset_apn_settings"))  # no reboot: the reset never happens
    broken = Composite("service_issue", (subtask(apn),), handoff(INTENTS["service_issue"]))
    assert verify(broken, ENTITY, box, stepwise=True) == "not solved after every solution"
    twice = replace(ISSUES["data_mode_off"], fix=then(user("toggle_data"), user("check_status_bar")))
    early = Composite("mobile_data_issue", (subtask(twice),), handoff(INTENTS["mobile_data_issue"]))
    assert verify(early, ENTITY, box, stepwise=True) == "solved before solution call 1 (check_status_bar)"


def test_the_assertions_that_hold_before_any_action_are_the_ones_the_spec_names(composed, theirs, box):
    """§15: an unfixable task's failure assertion holds from the start (a lone transfer wins); the overdue-bill
    assertion holds in the fixable service tasks that create no overdue bill. §9.3: mobile data already works
    when the only issues slow it (data saver, a poor VPN, 2G preferred)."""
    slowing = {"data_saver_mode_on", "bad_vpn", "bad_network_preference"}
    expected = {}
    for t in theirs:
        intent, issues, _ = ID.match(t["id"]).groups()
        names = set(issues.split("|"))
        if "ACTION" in t["evaluation_criteria"]["reward_basis"]:
            expected[t["id"]] = ["assert_service_status({'expected_status': 'no_service'})"]
        elif intent == "service_issue" and "overdue_bill_suspension" not in names:
            expected[t["id"]] = ["assert_no_overdue_bill({'overdue_bill_id': 'B1234321'})"]
        elif intent == "mobile_data_issue" and names <= slowing:
            expected[t["id"]] = ["assert_mobile_data_status({'expected_status': True})"]
    got = c.holding_at_start(c.kept(composed), box)
    assert got == expected
    assert Counter(v[0].split("(")[0] for v in got.values()) == Counter(
        {"assert_service_status": 32, "assert_no_overdue_bill": 7, "assert_mobile_data_status": 7})
