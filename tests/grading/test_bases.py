"""τ²-bench reward bases: each basis passes and fails where the original's evaluator would, on the bundled retail
suite's own tasks (and the grader's shop domain for assertion functions), and the reward is their product."""
from __future__ import annotations

import json

import pytest

from evalsuite.core.records import EnvAssertion, GoalState, GoldAction, TraceEvent
from evalsuite.domains.tau2_retail import tau2_hash
from evalsuite.grading.grader import grade_trial
from evalsuite.grading.reward_bases import action_matches, combine, grade_bases
from tests.audit.test_probes import _task as shop_task
from tests.grading import test_domain_checks  # noqa: F401  (registers the shop's closed_exactly check)
from tests.grading.grader_shop import build_world as build_shop
from tests.grading.retail_bases import ROOT, act, bases_of, basis, statuses, with_criteria

# ---- the bundled suite carries the original's criteria --------------------------------------------------------

def test_the_retail_suite_carries_every_task_s_criteria(retail_tasks):
    raw = {str(t["id"]): t["evaluation_criteria"] for t in json.loads((ROOT / "third_party/tau2_retail/tasks.json")
                                                                       .read_text())}
    assert set(retail_tasks) == set(raw)
    for tid, task in retail_tasks.items():
        crit, want = task.evaluation_criteria, raw[tid]
        assert crit.reward_basis == want["reward_basis"] and crit.nl_assertions == (want["nl_assertions"] or [])
        assert [a.model_dump(exclude_none=True) for a in crit.actions] == \
            [{"requestor": "assistant", **{k: v for k, v in a.items() if v is not None}} for a in want["actions"]]
        assert crit.communicate_info == want["communicate_info"]
        assert (crit.judge is not None) == bool(want["nl_assertions"])  # pinned where assertions count
    assert sum(1 for t in retail_tasks.values() if t.evaluation_criteria.nl_assertions) == 40


# ---- DB ---------------------------------------------------------------------------------------------------------

def test_db_passes_the_gold_end_state_and_fails_another(retail, retail_tasks):
    task = retail_tasks["0"]
    assert statuses(bases_of(task, act(retail, task, task.evaluation_criteria.actions)))["DB"] == "pass"
    wrong = [a.model_copy(update={"arguments": {**a.arguments, "new_item_ids": ["7747408585", "7706410293"]}})
             if a.name == "exchange_delivered_order_items" else a for a in task.evaluation_criteria.actions]
    db = basis(bases_of(task, act(retail, task, wrong)), "DB")
    assert db.status == "fail" and db.counted
    assert [c.name for c in db.checks] == ["assertion[0] orders {'order_id': '#W2378156'} (R-12)"]


def test_db_is_the_end_state_only_not_the_final_message(retail, retail_tasks):
    task = retail_tasks["4"]  # evalsuite's verdict also wants "10" in the final message, the original's DB not
    trial = act(retail, task, task.evaluation_criteria.actions)
    verdict = grade_trial(trial, "", task.goal_state, task.role, task.forbidden)
    assert not verdict.passed and [c.name for c in verdict.failures()] == ["output communicate_info[0]"]
    assert statuses(grade_bases(task, verdict, trial, None, ""))["DB"] == "pass"


def test_db_agrees_with_tau2_s_hash_on_every_task(retail, retail_tasks):
    """The DB basis is the verdict's end-state check; on every task, for the gold, for doing nothing and for the
    next task's gold, it passes exactly when tau2's DB hash equals the gold end state's."""
    hasher, ordered = tau2_hash.TAU2_HASH.hasher(retail), list(retail_tasks.values())
    agree = 0
    for task, other in zip(ordered, ordered[1:] + ordered[:1]):
        gold = hasher.hash(act(retail, task, task.evaluation_criteria.actions))
        for calls in (task.evaluation_criteria.actions, [], other.evaluation_criteria.actions):
            trial = act(retail, task, calls)
            assert (statuses(bases_of(task, trial))["DB"] == "pass") == (hasher.hash(trial) == gold), task.task_id
            agree += 1
    assert agree == 3 * 114


# ---- COMMUNICATE -----------------------------------------------------------------------------------------------

def test_communicate_finds_the_string_in_any_agent_message(retail, retail_tasks):
    task = retail_tasks["4"]  # communicate_info ["10"]
    said = ["Let me look that up.", "There are 10 t-shirt options available."]
    assert statuses(bases_of(task, act(retail, task, [], said=said)))["COMMUNICATE"] == "pass"
    assert statuses(bases_of(task, act(retail, task, []), final="We have 10 of them."))["COMMUNICATE"] == "pass"
    failed = bases_of(task, act(retail, task, [], said=["There are ten options."], heard=["Are there 10?"]))
    communicate = basis(failed, "COMMUNICATE")
    assert communicate.status == "fail" and not communicate.counted  # not in retail's reward basis
    assert communicate.checks[0].detail == "in none of 1 agent messages"  # the customer's "10" does not count


def test_communicate_drops_commas_from_the_message_only(retail, retail_tasks):
    task = with_criteria(retail_tasks["4"], reward_basis=["COMMUNICATE"], communicate_info=["23553", "Total: 1,000"])
    got = bases_of(task, act(retail, task, [], said=["Your total is $23,553.", "Total: 1,000"]))
    assert [c.passed for c in basis(got, "COMMUNICATE").checks] == [True, False]
    assert got.reward == "fail"


# ---- ACTION ----------------------------------------------------------------------------------------------------

def test_action_wants_every_reference_call_in_any_order(retail, retail_tasks):
    task = with_criteria(retail_tasks["0"], reward_basis=["ACTION"],
                         actions=retail_tasks["0"].evaluation_criteria.actions)
    gold = task.evaluation_criteria.actions
    assert bases_of(task, act(retail, task, list(reversed(gold)))).reward == "pass"
    missing = bases_of(task, act(retail, task, gold[:-1]))
    assert missing.reward == "fail"
    assert basis(missing, "ACTION").checks[-1].detail == "no call of exchange_delivered_order_items"
    other = [a.model_copy(update={"arguments": {**a.arguments, "order_id": "#W0000000"}}) if a.action_id == "0_1"
             else a for a in gold]
    failed = basis(bases_of(task, act(retail, task, other)), "ACTION")
    assert [c.detail for c in failed.checks if not c.passed] == [
        "1 call(s) of get_order_details, arguments differ on ['order_id'] (first: #2)"]


def test_action_compares_as_the_original_does():
    call = TraceEvent(seq=1, tool="transfer_to_human_agents", arguments={"summary": "anything at all"},
                      permitted=True, outcome="ok")
    name_only = GoldAction(action_id="10_4", name="transfer_to_human_agents", arguments={"summary": "x"},
                           compare_args=[])
    assert action_matches(name_only, call)
    assert not action_matches(name_only.model_copy(update={"compare_args": None}), call)
    refund = GoldAction(action_id="a", name="refund", arguments={"order_id": "O1", "reason": "late"})
    args = lambda **a: TraceEvent(seq=1, tool="refund", arguments=a, permitted=True, outcome="ok")  # noqa: E731
    assert action_matches(refund, args(order_id="O1", reason="late"))
    assert action_matches(refund, args(order_id="O1"))  # the keys compared are the call's: an omitted one is free
    assert not action_matches(refund, args(order_id="O1", reason="late", note="x"))  # an extra one is not
    assert not action_matches(refund, args(order_id="O2", reason="late"))
    assert action_matches(refund.model_copy(update={"compare_args": ["order_id"]}), args(order_id="O1", reason="?"))
    assert action_matches(refund, args(order_id="O1", reason="late").model_copy(update={"actor": "user"}))


# ---- ENV_ASSERTION ---------------------------------------------------------------------------------------------

SHOP_GOAL = GoalState(volatile_fields_masked=[{"field": "orders.status", "justification": "the check judges it"}])
CLOSED_ONE = EnvAssertion(env_type="assistant", func_name="closed_exactly", arguments={"more": 1})


def test_env_assertion_runs_the_domain_s_check_on_the_end_state(tmp_path):
    shop = build_shop(tmp_path / "shop.sqlite")
    task = with_criteria(shop_task(SHOP_GOAL), reward_basis=["ENV_ASSERTION"], env_assertions=[CLOSED_ONE])
    closed = act(shop, task, task.reference_solution)
    assert bases_of(task, closed).reward == "pass"
    failed = bases_of(task, act(shop, task, []))
    env = basis(failed, "ENV_ASSERTION")
    assert failed.reward == "fail" and env.checks[0].name == "assistant closed_exactly is True"
    assert env.checks[0].detail == "0 more closed, 0 successful set_status calls"
    negated = with_criteria(task, reward_basis=["ENV_ASSERTION"],
                            env_assertions=[CLOSED_ONE.model_copy(update={"assert_value": False})])
    assert bases_of(negated, act(shop, task, [])).reward == "pass"  # it holds when the check gives assert_value


def test_env_assertion_on_the_user_s_world(tmp_path):
    shop = build_shop(tmp_path / "shop.sqlite")
    user_side = [CLOSED_ONE.model_copy(update={"env_type": "user"})]
    task = with_criteria(shop_task(SHOP_GOAL), reward_basis=["ENV_ASSERTION"], env_assertions=user_side)
    device = act(shop.sibling(), task, task.reference_solution)  # the checks run on the world the assertion names
    assert bases_of(task, act(shop, task, []), device=device).reward == "pass"
    with pytest.raises(ValueError, match="env_assertions.0: env_type user, but the domain shop has no user-side"):
        bases_of(task, act(shop, task, []))
    unknown = with_criteria(task, env_assertions=[CLOSED_ONE.model_copy(update={"func_name": "nope"})])
    with pytest.raises(KeyError, match="evaluation_criteria.env_assertions.0: 'nope' is not a check of domain shop"):
        bases_of(unknown, act(shop, task, []))


# ---- NL_ASSERTION without a judge, the reward --------------------------------------------------------------------

def test_nl_assertion_without_a_judge_is_not_graded_never_passed(retail, retail_tasks, monkeypatch):
    monkeypatch.delenv("EVALSUITE_JUDGE_BASE_URL", raising=False)
    task = retail_tasks["4"]
    gold = bases_of(task, act(retail, task, task.evaluation_criteria.actions))
    nl = basis(gold, "NL_ASSERTION")
    assert (nl.status, nl.counted, gold.reward) == ("not_graded", True, "not_graded")
    assert nl.detail == "not judged: no judge endpoint (EVALSUITE_JUDGE_BASE_URL is not set)"
    assert bases_of(task, act(retail, task, [])).reward == "fail"  # DB fails: 0 times anything is 0
    zero = retail_tasks["0"]
    no_assertions = bases_of(zero, act(retail, zero, zero.evaluation_criteria.actions))
    assert statuses(no_assertions)["NL_ASSERTION"] == "pass" and no_assertions.reward == "pass"  # empty list: 1
    only_db = retail_tasks["33"]
    assert "NL_ASSERTION" not in statuses(bases_of(only_db, act(retail, only_db, [])))  # not in its reward basis


def test_the_reward_is_the_product_of_the_counted_bases():
    assert combine(["pass", "pass"]) == "pass" and combine([]) == "pass"
    assert combine(["pass", "not_graded"]) == "not_graded" and combine(["not_graded", "fail"]) == "fail"
    assert combine(["pass"], exhausted="step budget of 40 used") == "fail"  # no stop: the original gives 0


def test_a_task_without_criteria_has_no_bases(retail, retail_tasks):
    task = retail_tasks["0"].model_copy(update={"evaluation_criteria": None})
    assert bases_of(task, act(retail, task, [])) is None
