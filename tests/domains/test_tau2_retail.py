"""The tau2 retail world against TOOLS_SPEC.md: data round trip, tau2's hash, every tool's effects and errors.

Expected numbers are worked by hand from db.json (the values quoted in the
comments); float expressions are written the way tau2 computes them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite.core.records import Assertion, GoalState
from evalsuite.domains.tau2.tau2_hash import hash_model_dump
from evalsuite.domains.tau2_retail import DOMAIN, ROLE, TAU2_HASH, build_world, tool_message
from evalsuite.domains.tau2_retail.convert import from_nested, to_nested
from evalsuite.grading.grader import grade, grade_trial
from evalsuite.worlds.faults import Fault, FaultPlan
from evalsuite.worlds.world import World

SRC = Path(__file__).resolve().parents[2] / "third_party" / "tau2_retail"
ADDR = dict(address1="1 Main St", address2="Apt 2", city="Austin", state="TX", country="USA", zip="73301")


@pytest.fixture(scope="module")
def raw() -> str:
    return (SRC / "db.json").read_text()


@pytest.fixture(scope="module")
def world(tmp_path_factory, raw):
    return build_world(json.loads(raw), tmp_path_factory.mktemp("tau2") / "world.sqlite")


@pytest.fixture
def trial(world):
    return world.reset(ROLE)


def ok(trial, tool, **args):
    ev = trial.call(tool, args)
    assert ev.outcome == "ok", ev.error
    return ev.result


def err(trial, tool, **args) -> str:
    ev = trial.call(tool, args)
    assert ev.outcome == "error", ev.result
    return ev.error


def order(trial, oid):
    return ok(trial, "get_order_details", order_id=oid)


def methods(trial, uid):
    return ok(trial, "get_user_details", user_id=uid)["payment_methods"]


# ---- data, round trip, hash ----------------------------------------------------------------------

def test_initial_tau2_hash(world, raw):
    assert TAU2_HASH.world_hash(world) == TAU2_HASH.initial == \
        "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"
    assert TAU2_HASH.hash_db_json(json.loads(raw)) == TAU2_HASH.initial
    assert hash_model_dump(json.loads(raw)).startswith("8c3593")  # as-is, without the null fields (§3)


def test_round_trip_is_byte_identical(world, raw):
    assert json.dumps(to_nested(world.initial_rows), indent=4) == raw
    assert {t: len(r) for t, r in world.initial_rows.items()} == {
        "products": 50, "variants": 591, "users": 500, "payment_methods": 695, "user_orders": 1000,
        "orders": 1000, "order_items": 2978, "fulfillments": 577, "payments": 1102}


def test_from_nested_refuses_what_it_cannot_write_back(raw):
    db = json.loads(raw)
    with pytest.raises(ValueError, match="top-level keys"):
        from_nested({**db, "extra": {}})
    db["orders"]["#W2378156"]["gift_wrap"] = True
    with pytest.raises(ValueError, match=r"orders\[#W2378156\]: order missing \[\] / unknown \['gift_wrap'\]"):
        from_nested(db)


def test_domain_surface():
    kinds = {n: t.kind for n, t in DOMAIN.tools.items()}
    assert sorted(kinds.values()).count("read") == 7 and sorted(kinds.values()).count("write") == 7
    assert {n for n, k in kinds.items() if k == "generic"} == {"calculate", "transfer_to_human_agents"}
    assert ROLE.permitted == {n for n, k in kinds.items() if k != "generic"}
    assert DOMAIN.name == "tau2_retail" and DOMAIN.roles["retail_agent"] == ROLE


# ---- read and generic tools ----------------------------------------------------------------------

def test_read_tools_return_the_db_entities(trial, raw):
    db = json.loads(raw)
    assert ok(trial, "find_user_id_by_email", email="YUSUF.Rossi7301@example.com") == "yusuf_rossi_9620"
    found = ok(trial, "find_user_id_by_name_zip", first_name="yusuf", last_name="ROSSI", zip="19122")
    assert found == "yusuf_rossi_9620"
    assert ok(trial, "get_user_details", user_id="yusuf_rossi_9620") == db["users"]["yusuf_rossi_9620"]
    nulls = dict.fromkeys(["cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                           "exchange_price_difference", "return_items", "return_payment_method_id"])
    assert order(trial, "#W2378156") == {**db["orders"]["#W2378156"], **nulls}
    assert ok(trial, "get_product_details", product_id="1656367028") == db["products"]["1656367028"]
    assert ok(trial, "get_item_details", item_id="7706410293") == db["products"]["1656367028"]["variants"]["7706410293"]
    types = ok(trial, "list_all_product_types")
    assert isinstance(types, str) and list(json.loads(types)) == sorted(json.loads(types))
    assert len(json.loads(types)) == 50 and json.loads(types)["T-Shirt"] == "9523456873"
    assert ok(trial, "transfer_to_human_agents", summary="x") == "Transfer successful"
    assert not trial.changed_keys()


@pytest.mark.parametrize("expr, want", [("1497.65", "1497.65"), ("5 / 2", "2.5"), ("2*2", "4.0"), ("2**3", "8.0"),
                                        ("7//2", "3.0"), ("10**20", "1e+20"), ("-0.001", "-0.0"),
                                        ("(269.16 - 272.33) + (249.01 - 262.47)", "-16.63")])
def test_calculate(trial, expr, want):
    assert ok(trial, "calculate", expression=expr) == want


@pytest.mark.parametrize("expr, message", [
    ("2 + x", "Invalid characters in expression"), ("1/0", "division by zero"),
    ("(1+2", "'(' was never closed (<string>, line 1)"), ("", "invalid syntax (<string>, line 0)"),
    ("()", "float() argument must be a string or a real number, not 'tuple'"),
    ("(-1)**0.5", "float() argument must be a string or a real number, not 'complex'"),
    ("10**400", "int too large to convert to float"), (7, "'int' object is not iterable"),
    ("9**9**9", "power exceeds 100000 bits"),  # tau2 would hang here; we refuse (the one departure)
])
def test_calculate_errors(trial, expr, message):
    assert err(trial, "calculate", expression=expr) == message


# ---- write tools: hand-worked effects ------------------------------------------------------------

def test_exchange(trial):
    # #W2378156 (delivered, paid by credit_card_9513926): keyboard 1151293680 (272.33) -> 7706410293 (269.16),
    # thermostat 4983901480 (262.47) -> 7747408585 (249.01): difference round(-3.17 - 13.46, 2) = -16.63.
    before = order(trial, "#W2378156")
    got = ok(trial, "exchange_delivered_order_items", order_id="#W2378156", item_ids=["4983901480", "1151293680"],
             new_item_ids=["7747408585", "7706410293"], payment_method_id="credit_card_9513926")
    assert got == {**before, "status": "exchange requested", "exchange_items": ["1151293680", "4983901480"],
                   "exchange_new_items": ["7706410293", "7747408585"],
                   "exchange_payment_method_id": "credit_card_9513926", "exchange_price_difference": -16.63}
    assert trial.changed_keys() == {"orders": {("#W2378156",)}}  # no payment, no item, no balance change


def test_return(trial):
    # #W6552785 (delivered, paid 3290.52 by paypal_7357553): return the t-shirt and the desk lamp.
    before = order(trial, "#W6552785")
    assert err(trial, "return_delivered_order_items", order_id="#W6552785", item_ids=["9354168549"],
               payment_method_id="credit_card_5650467") == "Payment method should be the original payment method"
    got = ok(trial, "return_delivered_order_items", order_id="#W6552785", item_ids=["9354168549", "4385534692"],
             payment_method_id="paypal_7357553")
    assert got == {**before, "status": "return requested", "return_items": ["4385534692", "9354168549"],
                   "return_payment_method_id": "paypal_7357553"}
    assert trial.changed_keys() == {"orders": {("#W6552785",)}}
    assert err(trial, "exchange_delivered_order_items", order_id="#W6552785", item_ids=[], new_item_ids=[],
               payment_method_id="paypal_7357553") == "Non-delivered order cannot be exchanged"


def test_cancel(trial):
    # #W8955613 (pending): watch 367.38 + backpack 218.59 = 585.97 paid by gift_card_6682391 (balance 35.0).
    got = ok(trial, "cancel_pending_order", order_id="#W8955613", reason="ordered by mistake")
    assert got["status"] == "cancelled" and got["cancel_reason"] == "ordered by mistake"
    assert got["payment_history"] == [
        {"transaction_type": "payment", "amount": 585.97, "payment_method_id": "gift_card_6682391"},
        {"transaction_type": "refund", "amount": 585.97, "payment_method_id": "gift_card_6682391"}]
    assert methods(trial, "olivia_lopez_9494")["gift_card_6682391"]["balance"] == 620.97  # round(35.0 + 585.97, 2)
    assert err(trial, "cancel_pending_order", order_id="#W8955613", reason="no longer needed") == \
        "Non-pending order cannot be cancelled"


def test_address_changes(trial):
    user = ok(trial, "modify_user_address", user_id="yusuf_rossi_9620", **ADDR)
    assert user["address"] == {k: ADDR[k] for k in ("address1", "address2", "city", "country", "state", "zip")}
    old = {"address1": "763 Broadway", "address2": "Suite 135", "city": "Philadelphia", "country": "USA",
           "state": "PA", "zip": "19122"}
    assert order(trial, "#W6247578")["address"] == old  # his pending order keeps its address
    got = ok(trial, "modify_pending_order_address", order_id="#W6247578", **{**ADDR, "zip": "73344"})
    assert got["address"]["zip"] == "73344" and got["status"] == "pending"
    assert ok(trial, "get_user_details", user_id="yusuf_rossi_9620")["address"]["zip"] == "73301"
    assert err(trial, "modify_pending_order_address", order_id="#W2378156", **ADDR) == \
        "Non-pending order cannot be modified"


def test_address_tools_type_check_their_fields(trial):
    message = err(trial, "modify_user_address", user_id="yusuf_rossi_9620", **{**ADDR, "zip": 73301})
    assert message.startswith("1 validation error for UserAddress\nzip\n  Input should be a valid string")
    assert not trial.changed_keys()


def test_payment_change(trial):
    # #W1080318 (pending, 53.43 by credit_card_3577130) -> gift_card_3749819 (balance 91.0).
    got = ok(trial, "modify_pending_order_payment", order_id="#W1080318", payment_method_id="gift_card_3749819")
    assert got["status"] == "pending"
    assert got["payment_history"] == [
        {"transaction_type": "payment", "amount": 53.43, "payment_method_id": "credit_card_3577130"},
        {"transaction_type": "payment", "amount": 53.43, "payment_method_id": "gift_card_3749819"},
        {"transaction_type": "refund", "amount": 53.43, "payment_method_id": "credit_card_3577130"}]
    assert methods(trial, "omar_kim_3528")["gift_card_3749819"]["balance"] == 37.57  # round(91.0 - 53.43, 2)
    assert err(trial, "modify_pending_order_payment", order_id="#W1080318", payment_method_id="credit_card_3577130") \
        == "There should be exactly one payment for a pending order"
    # §10: cancelling now refunds all three entries, the refund entry included; the gift card is credited once.
    got = ok(trial, "cancel_pending_order", order_id="#W1080318", reason="no longer needed")
    assert [(p["transaction_type"], p["payment_method_id"]) for p in got["payment_history"][3:]] == [
        ("refund", "credit_card_3577130"), ("refund", "gift_card_3749819"), ("refund", "credit_card_3577130")]
    assert methods(trial, "omar_kim_3528")["gift_card_3749819"]["balance"] == 91.0  # round(37.57 + 53.43, 2)


def test_item_modification(trial):
    # #W8955613: watch 2554056026 (367.38) -> 2860956907 (315.61), difference paid into gift_card_6682391 (35.0).
    diff = 0 + (315.61 - 367.38)
    got = ok(trial, "modify_pending_order_items", order_id="#W8955613", item_ids=["2554056026"],
             new_item_ids=["2860956907"], payment_method_id="gift_card_6682391")
    assert got["status"] == "pending (item modified)"
    assert got["items"][0] == {"name": "Smart Watch", "product_id": "6945232052", "item_id": "2860956907",
                               "price": 315.61, "options": {"color": "black", "band material": "silicone",
                                                            "display": "LCD"}}
    assert got["items"][1]["item_id"] == "6309044598"
    assert got["payment_history"][1] == {"transaction_type": "refund", "amount": abs(diff),
                                         "payment_method_id": "gift_card_6682391"}
    assert methods(trial, "olivia_lopez_9494")["gift_card_6682391"]["balance"] == 86.77  # round(35.0 + 51.77, 2)
    assert err(trial, "modify_pending_order_items", order_id="#W8955613", item_ids=[], new_item_ids=[],
               payment_method_id="gift_card_6682391") == "Non-pending order cannot be modified"
    assert err(trial, "cancel_pending_order", order_id="#W8955613", reason="no longer needed") == \
        "Non-pending order cannot be cancelled"


def test_item_modification_takes_the_last_variant(trial):
    # §4.14 quirk, with a repeated item: #W9093821 holds backpack 3557711149 (205.35) at lines 0 and 2.
    # Pairs -> 3928046918 (198.0) then 7251508981 (212.04, green/small/leather/camera): both lines get the last.
    diff = 0 + (198.0 - 205.35) + (212.04 - 205.35)
    got = ok(trial, "modify_pending_order_items", order_id="#W9093821", item_ids=["3557711149", "3557711149"],
             new_item_ids=["3928046918", "7251508981"], payment_method_id="credit_card_7422485")
    last = {"color": "green", "size": "small", "material": "leather", "compartment": "camera"}
    assert [(i["item_id"], i["price"], i["options"]) for i in got["items"][0:3:2]] == [
        ("3928046918", 212.04, last), ("7251508981", 212.04, last)]
    assert got["payment_history"][-1] == {"transaction_type": "refund", "amount": abs(diff),
                                          "payment_method_id": "credit_card_7422485"}
    assert abs(diff) != round(abs(diff), 2)  # stored unrounded, as tau2 does (§6)


def test_item_swap_within_an_order(trial):
    # §10: #W9318778 holds 5669664287 (543.68) at line 3 and 3076708684 (535.97) at line 4, one product.
    # A->B then B->A: the second pair re-finds line 3, so the ids end as they were; a refund is still appended.
    got = ok(trial, "modify_pending_order_items", order_id="#W9318778", item_ids=["5669664287", "3076708684"],
             new_item_ids=["3076708684", "5669664287"], payment_method_id="gift_card_7728021")
    assert [(i["item_id"], i["price"]) for i in got["items"][3:]] == [("5669664287", 543.68), ("3076708684", 535.97)]
    assert got["status"] == "pending (item modified)"
    diff = 0 + (535.97 - 543.68) + (543.68 - 535.97)
    assert got["payment_history"][-1] == {"transaction_type": "payment" if diff > 0 else "refund",
                                          "amount": abs(diff), "payment_method_id": "gift_card_7728021"}


def test_empty_lists_and_int_zero(trial):
    ok(trial, "exchange_delivered_order_items", order_id="#W2378156", item_ids=[], new_item_ids=[],
       payment_method_id="credit_card_9513926")
    row = trial.row("orders", ("#W2378156",))
    value = row[trial.world.schemas["orders"].columns.index("exchange_price_difference")]
    assert value == 0 and type(value) is int  # §6: hashes as 0, not 0.0
    assert '"exchange_price_difference": 0,' in json.dumps(order(trial, "#W2378156"), sort_keys=True)
    got = ok(trial, "modify_pending_order_items", order_id="#W1080318", item_ids=[], new_item_ids=[],
             payment_method_id="credit_card_3577130")
    assert got["status"] == "pending (item modified)"
    amount = got["payment_history"][-1]["amount"]
    assert got["payment_history"][-1]["transaction_type"] == "refund" and amount == 0.0 and type(amount) is float


def test_incremental_hash_equals_the_full_dump(trial, world):
    hasher = TAU2_HASH.hasher(world)
    assert hasher.hash(trial) == TAU2_HASH.initial
    ok(trial, "modify_user_address", user_id="yusuf_rossi_9620", **ADDR)
    ok(trial, "cancel_pending_order", order_id="#W8955613", reason="no longer needed")
    ok(trial, "modify_pending_order_items", order_id="#W9093821", item_ids=["3557711149"],
       new_item_ids=["3928046918"], payment_method_id="credit_card_7422485")
    assert hasher.hash(trial) == TAU2_HASH.world_hash(trial) == TAU2_HASH.hash_db_json(to_nested(trial.rows()))
    assert hasher.hash(trial) != TAU2_HASH.initial


# ---- errors --------------------------------------------------------------------------------------

MOD = dict(order_id="#W2918688", payment_method_id="credit_card_5869505")  # pending, 2106335193 at 903.95
EXC = dict(order_id="#W7728728", payment_method_id="paypal_7859314")  # delivered, 8555936349 at 226.49


@pytest.mark.parametrize("tool, args, message", [
    ("get_order_details", {"order_id": "W2378156"}, "Order not found"),  # the '#' is part of the id
    ("get_order_details", {"order_id": 2378156}, "Order not found"),  # no coercion: a wrong type is just absent
    ("get_order_details", {"order_id": ["#W2378156"]}, "unhashable type: 'list'"),
    ("get_user_details", {"user_id": "nobody_1"}, "User not found"),
    ("find_user_id_by_email", {"email": "nobody@example.com"}, "User not found"),
    ("find_user_id_by_email", {"email": 5}, "'int' object has no attribute 'lower'"),
    ("find_user_id_by_name_zip", {"first_name": "Yusuf", "last_name": "Rossi", "zip": "00000"}, "User not found"),
    ("get_product_details", {"product_id": "7706410293"}, "Product not found"),  # an item id by mistake
    ("get_product_details", {"product_id": 1656367028}, "Product not found"),
    ("get_item_details", {"item_id": "1656367028"}, "Item not found"),
    ("no_such_tool", {}, "Tool 'no_such_tool' not found."),
    ("cancel_pending_order", {"order_id": "#W8955613"},
     "RetailTools.cancel_pending_order() missing 1 required positional argument: 'reason'"),
    ("get_order_details", {"order_id": "#W8955613", "foo": 1},
     "RetailTools.get_order_details() got an unexpected keyword argument 'foo'"),
    ("cancel_pending_order", {"order_id": "#W2378156", "reason": "no longer needed"},
     "Non-pending order cannot be cancelled"),
    ("cancel_pending_order", {"order_id": "#W8955613", "reason": "too expensive"}, "Invalid reason"),
    ("modify_pending_order_payment", {"order_id": "#W2378156", "payment_method_id": "credit_card_9513926"},
     "Non-pending order cannot be modified"),
    ("modify_pending_order_payment", {"order_id": "#W2918688", "payment_method_id": "credit_card_9513926"},
     "Payment method not found"),  # another user's card
    ("modify_pending_order_payment", MOD, "The new payment method should be different from the current one"),
    ("modify_pending_order_payment", {**MOD, "payment_method_id": "gift_card_6023546"},
     "Insufficient gift card balance to pay for the order"),  # 36.0 < 903.95
    ("modify_pending_order_items", {**MOD, "order_id": "#W2378156", "item_ids": [], "new_item_ids": []},
     "Non-pending order cannot be modified"),
    ("modify_pending_order_items", {**MOD, "item_ids": ["2106335193", "2106335193"], "new_item_ids": ["1", "2"]},
     "2106335193 not found"),
    ("modify_pending_order_items", {**MOD, "item_ids": "8", "new_item_ids": ["1"]}, "8 not found"),  # §10
    ("modify_pending_order_items", {**MOD, "item_ids": ["2106335193"], "new_item_ids": []},
     "The number of items to be exchanged should match"),
    ("modify_pending_order_items", {**MOD, "item_ids": ["2106335193"], "new_item_ids": ["2106335193"]},
     "The new item id should be different from the old item id"),
    ("modify_pending_order_items", {**MOD, "item_ids": ["2106335193"], "new_item_ids": ["7706410293"]},
     "Variant not found"),  # a keyboard is not a variant of this product
    ("modify_pending_order_items", {**MOD, "item_ids": ["2106335193"], "new_item_ids": ["2235648106"],
                                    "payment_method_id": "paypal_0000000"}, "Payment method not found"),
    ("modify_pending_order_items", {**MOD, "item_ids": ["2106335193"], "new_item_ids": ["2235648106"],
                                    "payment_method_id": "gift_card_6023546"},
     "Insufficient gift card balance to pay for the new item"),  # 36.0 < 1054.43 - 903.95
    ("modify_pending_order_items", {"order_id": "#W8955613", "item_ids": ["2554056026"],
                                    "new_item_ids": ["4920090458"], "payment_method_id": "credit_card_6044108"},
     "New item 4920090458 not found or available"),
    ("exchange_delivered_order_items", {**EXC, "item_ids": ["8555936349", "8555936349"], "new_item_ids": ["1", "2"]},
     "Number of 8555936349 not found."),
    ("exchange_delivered_order_items", {**EXC, "item_ids": "9", "new_item_ids": []}, "Number of 9 not found."),
    ("exchange_delivered_order_items", {**EXC, "item_ids": ["8555936349"], "new_item_ids": []},
     "The number of items to be exchanged should match."),
    ("exchange_delivered_order_items", {**EXC, "item_ids": ["8555936349"], "new_item_ids": ["7706410293"]},
     "Variant not found"),
    ("exchange_delivered_order_items", {**EXC, "item_ids": ["8555936349"], "new_item_ids": ["9580569596"],
                                        "payment_method_id": "gift_card_2742113"},
     "Insufficient gift card balance to pay for the price difference"),  # 22.0 < 257.38 - 226.49
    ("exchange_delivered_order_items", {**EXC, "item_ids": ["8555936349"], "new_item_ids": ["9580569596"],
                                        "payment_method_id": "credit_card_9513926"}, "Payment method not found"),
    ("return_delivered_order_items", {**MOD, "item_ids": []}, "Non-delivered order cannot be returned"),
    ("return_delivered_order_items", {**EXC, "item_ids": [], "payment_method_id": "x"}, "Payment method not found"),
    ("return_delivered_order_items", {**EXC, "item_ids": ["2106335193"]}, "Some item not found"),
    ("return_delivered_order_items", {**EXC, "item_ids": "8"}, "Some item not found"),
])
def test_error_messages(trial, tool, args, message):
    assert err(trial, tool, **args) == message
    assert not trial.changed_keys()  # every check runs before the first write


def test_unavailable_new_item_in_exchange(trial):
    # 2235648106 is no watch; take an unavailable variant of the exchanged product instead.
    unavailable = next(r for r in trial.world.initial_rows["variants"] if r[1] == "6945232052" and not r[3])[0]
    message = err(trial, "exchange_delivered_order_items", order_id="#W2378156", item_ids=["9408160950"],
                  new_item_ids=[unavailable], payment_method_id="credit_card_9513926")
    assert message == f"New item {unavailable} not found or available"


def test_tool_message_renders_as_tau2(trial):
    assert tool_message(trial.call("get_order_details", {"order_id": "nope"})) == "Error: Order not found"
    assert tool_message(trial.call("calculate", {"expression": "2*2"})) == "4.0"
    shown = tool_message(trial.call("get_item_details", {"item_id": "7706410293"}))
    assert json.loads(shown) == {"item_id": "7706410293", "options": {"switch type": "clicky", "backlight": "none",
                                                                      "size": "full size"},
                                 "available": True, "price": 269.16}


def test_a_failed_commit_rolls_back(world):
    trial = world.reset(ROLE, faults=FaultPlan({"cancel_pending_order": {1: Fault.ERROR_BEFORE_COMMIT}}))
    event = trial.call("cancel_pending_order", {"order_id": "#W8955613", "reason": "no longer needed"})
    assert event.outcome == "fault"
    assert not trial.changed_keys() and TAU2_HASH.world_hash(trial) == TAU2_HASH.initial


def test_row_level_grading_matches_a_whole_table_diff_on_hand_written_goals(world):
    goals = [
        GoalState(assertions=[Assertion(table="payments", key={"order_id": "#W8955613"}, row_count=2, clause="R-7")]),
        GoalState(assertions=[Assertion(table="orders", key={"order_id": "#W8955613"}, expect={"status": "cancelled"},
                                        clause="R-7"),
                              Assertion(table="payments", key={"order_id": "#W8955613", "position": 1},
                                        expect={"amount": 585.97}, clause="R-7"),
                              Assertion(table="payments", key={"order_id": "#W8955613", "position": 2},
                                        row_count=0, clause="R-7")],
                  unchanged_tables=["users", "order_items"]),
        GoalState(assertions=[Assertion(table="orders", key={"order_id": "#W2378156"}, expect={"status": "delivered"},
                                        clause="R-12")], unchanged_tables=["orders"]),
    ]
    for cancel in (False, True):
        trial = world.reset(ROLE)
        if cancel:
            ok(trial, "cancel_pending_order", order_id="#W8955613", reason="no longer needed")
        for goal in goals:
            whole = grade(world.schemas, world.initial_rows, trial.rows(), trial.trace, "", goal, ROLE)
            assert grade_trial(trial, "", goal, ROLE) == whole


def test_a_child_whose_owner_is_gone_is_refused_with_the_owners_message(tmp_path, raw):
    """tau2 looks a payment method's user and a variant's product up first: with the owner's row gone (a world built
    from records that lost it), the child's own row is not enough, and the message names the owner."""
    tables = from_nested(json.loads(raw))
    tables["users"] = [u for u in tables["users"] if u["user_id"] != "emma_santos_9753"]  # #W2918688's customer
    tables["products"] = [p for p in tables["products"] if p["product_id"] != "8024098596"]  # its item's product
    trial = World.build(DOMAIN, tables, tmp_path / "world.sqlite").reset(ROLE)
    assert err(trial, "modify_pending_order_items", **MOD, item_ids=["2106335193"],
               new_item_ids=["2235648106"]) == "Product not found"
    assert err(trial, "modify_pending_order_payment", **MOD) == "User not found"
