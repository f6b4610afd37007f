"""The retail tools, behaving as TOOLS_SPEC.md §2 and §4 describe (checks, effects, errors, quirks).

Tools take raw keyword arguments (see evalsuite.domains.tau2.tools): a wrong
type flows through and fails the way Python fails on it. Every write tool
finishes all its checks before its first write. Errors are raised as
ToolError(<tau2's exception text>).
"""
from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from evalsuite.domains.tau2.rows import Row, scalars, write
from evalsuite.domains.tau2.tools import add_generic_tools, agent_role, python_error, registrar
from evalsuite.domains.tau2_retail import convert, store
from evalsuite.domains.tau2_retail.schema import ADDRESS_FIELDS, metadata
from evalsuite.worlds.domain import Domain, ToolContext, ToolError

DOMAIN = Domain(name="tau2_retail", version="1.0.0", metadata=metadata)
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
_tool = registrar(DOMAIN, "RetailTools")


class UserAddress(BaseModel):
    """tau2 builds this record in the two address tools: the only arguments it type-checks (§10)."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


def _address(**fields: Any) -> dict[str, str]:
    try:
        return UserAddress(**fields).model_dump()
    except ValidationError as exc:  # tau2 shows the validation library's own multi-line text
        raise ToolError(str(exc)) from exc


# ---- read tools ----------------------------------------------------------------------------------

@_tool("read")
def find_user_id_by_email(ctx: ToolContext, /, email):
    """Find a user id by email (case-insensitive). Arguments: email (str). Returns the user id."""
    try:
        want = email.lower()
    except AttributeError as exc:
        raise python_error(exc) from exc
    # SQLite's lower() equals Python's on ASCII, and every stored email is ASCII (spec §1).
    found = scalars(ctx, "SELECT user_id FROM users WHERE lower(email) = ? ORDER BY position LIMIT 1", (want,))
    if not found:
        raise ToolError("User not found")
    return found[0]


@_tool("read")
def find_user_id_by_name_zip(ctx: ToolContext, /, first_name, last_name, zip):  # noqa: A002 - tau2's name
    """Find a user id by first name, last name (case-insensitive) and zip code. Arguments: first_name, last_name,
    zip (str). Returns the user id."""
    try:
        first = first_name.lower()
        candidates = ctx.db.execute(
            "SELECT user_id, last_name, zip FROM users WHERE lower(first_name) = ? ORDER BY position", (first,))
        for user_id, last, user_zip in candidates:  # tau2 tests last name only once the first name matched
            if last.lower() == last_name.lower() and user_zip == zip:
                return user_id
    except AttributeError as exc:
        raise python_error(exc) from exc
    raise ToolError("User not found")


@_tool("read")
def get_user_details(ctx: ToolContext, /, user_id):
    """A user's profile: name, default address, email, payment methods, order ids. Arguments: user_id (str)."""
    return store.user_entity(ctx, store.get_user(ctx, user_id))


@_tool("read")
def get_order_details(ctx: ToolContext, /, order_id):
    """An order: items, status, fulfillments, payment history. Arguments: order_id (str, e.g. '#W0000000')."""
    order = store.get_order(ctx, order_id)
    return store.order_entity(ctx, order["order_id"], order)


@_tool("read")
def get_product_details(ctx: ToolContext, /, product_id):
    """A product type with all its variant items. Arguments: product_id (str; not an item id)."""
    return store.product_entity(ctx, store.get_product(ctx, product_id))


@_tool("read")
def get_item_details(ctx: ToolContext, /, item_id):
    """One variant item: options, availability, price. Arguments: item_id (str)."""
    return convert.variant_entity(store.get_item(ctx, item_id))


@_tool("read")
def list_all_product_types(ctx: ToolContext, /):
    """All product types as a JSON object mapping product name to product id. No arguments."""
    names = ctx.db.execute("SELECT name, product_id FROM products ORDER BY position").fetchall()
    return json.dumps(dict(names), sort_keys=True)


add_generic_tools(_tool)


# ---- write tools ---------------------------------------------------------------------------------

@_tool("write")
def modify_user_address(ctx: ToolContext, /, user_id, address1, address2, city, state, country, zip):  # noqa: A002
    """Replace a user's default address (orders keep theirs). Arguments: user_id, address1, address2, city, state,
    country, zip (str)."""
    user = store.get_user(ctx, user_id)
    new = _address(address1=address1, address2=address2, city=city, state=state, country=country, zip=zip)
    _set_address(ctx, "users", "user_id", user["user_id"], new)
    return store.user_entity(ctx, store.get_user(ctx, user["user_id"]))


@_tool("write")
def modify_pending_order_address(ctx: ToolContext, /, order_id, address1, address2, city, state, country,
                                 zip):  # noqa: A002 - tau2's name
    """Replace the shipping address of a pending order. Arguments: order_id, address1, address2, city, state,
    country, zip (str)."""
    order = store.get_order(ctx, order_id)
    if "pending" not in order["status"]:
        raise ToolError("Non-pending order cannot be modified")
    new = _address(address1=address1, address2=address2, city=city, state=state, country=country, zip=zip)
    _set_address(ctx, "orders", "order_id", order["order_id"], new)
    return store.order_entity(ctx, order["order_id"])


@_tool("write")
def cancel_pending_order(ctx: ToolContext, /, order_id, reason):
    """Cancel a pending order and refund every payment (gift cards at once). Arguments: order_id (str),
    reason ('no longer needed' or 'ordered by mistake')."""
    order = store.get_order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] != "pending":
        raise ToolError("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolError("Invalid reason")
    history = store.rows(ctx, "payments", oid)
    balances: dict[str, float] = {}
    for entry in history:  # refunds include earlier refund entries (§10); each credit is rounded in turn
        method = store.get_payment_method(ctx, order["user_id"], entry["payment_method_id"])
        if store.is_gift_card(method):
            before = balances.get(method["id"], method["balance"])
            balances[method["id"]] = round(before + entry["amount"], 2)
    # Deviation: tau2 keeps earlier gift-card credits if a later lookup fails; our call is one transaction.
    _set_balances(ctx, balances)
    _append_payments(ctx, oid, len(history), [("refund", e["amount"], e["payment_method_id"]) for e in history])
    write(ctx, "UPDATE orders SET status = 'cancelled', cancel_reason = ? WHERE order_id = ?", (reason, oid))
    return store.order_entity(ctx, oid)


@_tool("write")
def modify_pending_order_payment(ctx: ToolContext, /, order_id, payment_method_id):
    """Pay a pending order with another of the user's payment methods; the old one is refunded.
    Arguments: order_id, payment_method_id (str)."""
    order = store.get_order(ctx, order_id)
    oid = order["order_id"]
    if "pending" not in order["status"]:
        raise ToolError("Non-pending order cannot be modified")
    new = store.get_payment_method(ctx, order["user_id"], payment_method_id)
    history = store.rows(ctx, "payments", oid)
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ToolError("There should be exactly one payment for a pending order")
    amount, old_id = history[0]["amount"], history[0]["payment_method_id"]
    if new["id"] == old_id:
        raise ToolError("The new payment method should be different from the current one")
    if store.is_gift_card(new) and new["balance"] < amount:
        raise ToolError("Insufficient gift card balance to pay for the order")
    old = store.get_payment_method(ctx, order["user_id"], old_id)
    _append_payments(ctx, oid, 1, [("payment", amount, new["id"]), ("refund", amount, old_id)])
    if store.is_gift_card(new):
        _set_balances(ctx, {new["id"]: round(new["balance"] - amount, 2)})
    if store.is_gift_card(old):
        _set_balances(ctx, {old_id: round(old["balance"] + amount, 2)})
    return store.order_entity(ctx, oid)


@_tool("write")
def modify_pending_order_items(ctx: ToolContext, /, order_id, item_ids, new_item_ids, payment_method_id):
    """Swap items of a pending order for other available variants of the same products (once per order).
    Arguments: order_id (str), item_ids (list[str]), new_item_ids (list[str], same length), payment_method_id (str)
    to pay or receive the price difference."""
    order = store.get_order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] != "pending":
        raise ToolError("Non-pending order cannot be modified")
    lines = store.rows(ctx, "order_items", oid)
    _check_counts(item_ids, [i["item_id"] for i in lines], "{} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match")
    diff, last_variant = _price_difference(ctx, lines, item_ids, new_item_ids, distinct=True)
    method = store.get_payment_method(ctx, order["user_id"], payment_method_id)
    if store.is_gift_card(method) and method["balance"] < diff:
        raise ToolError("Insufficient gift card balance to pay for the new item")
    history_len = len(store.rows(ctx, "payments", oid))
    # tau2 stores the unrounded difference; its float field turns an empty call's integer 0 into 0.0.
    _append_payments(ctx, oid, history_len, [("payment" if diff > 0 else "refund", float(abs(diff)), method["id"])])
    if store.is_gift_card(method):
        _set_balances(ctx, {method["id"]: round(method["balance"] - diff, 2)})
    current = [i["item_id"] for i in lines]
    touched = set()
    for old, new in zip(item_ids, new_item_ids):
        pos = current.index(old)  # the first line holding `old` now, after earlier pairs were applied
        current[pos] = new
        touched.add(pos)
    # tau2 quirk (§4.14, §7): every modified line takes the price and options of the LAST pair's variant.
    write(ctx, "UPDATE order_items SET item_id = ?, price = ?, options = ? WHERE order_id = ? AND position = ?",
                [(current[p], last_variant["price"], last_variant["options"], oid, lines[p]["position"])
                 for p in sorted(touched)], many=True)
    write(ctx, "UPDATE orders SET status = 'pending (item modified)' WHERE order_id = ?", (oid,))
    return store.order_entity(ctx, oid)


@_tool("write")
def exchange_delivered_order_items(ctx: ToolContext, /, order_id, item_ids, new_item_ids, payment_method_id):
    """Request an exchange of delivered items for other available variants of the same products (once per
    order). Arguments: order_id (str), item_ids (list[str]), new_item_ids (list[str], same length),
    payment_method_id (str) to pay or receive the price difference."""
    order = store.get_order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] != "delivered":
        raise ToolError("Non-delivered order cannot be exchanged")
    lines = store.rows(ctx, "order_items", oid)
    _check_counts(item_ids, [i["item_id"] for i in lines], "Number of {} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match.")
    diff, _ = _price_difference(ctx, lines, item_ids, new_item_ids, distinct=False)
    diff = round(diff, 2)  # stays the integer 0 for empty lists (§6)
    method = store.get_payment_method(ctx, order["user_id"], payment_method_id)
    if store.is_gift_card(method) and method["balance"] < diff:
        raise ToolError("Insufficient gift card balance to pay for the price difference")
    write(ctx, "UPDATE orders SET status = 'exchange requested', exchange_items = ?, exchange_new_items = ?, "
                     "exchange_payment_method_id = ?, exchange_price_difference = ? WHERE order_id = ?",
                (json.dumps(sorted(item_ids)), json.dumps(sorted(new_item_ids)), method["id"], diff, oid))
    return store.order_entity(ctx, oid)


@_tool("write")
def return_delivered_order_items(ctx: ToolContext, /, order_id, item_ids, payment_method_id):
    """Request a return of delivered items; the refund goes to the original payment method or a gift card.
    Arguments: order_id (str), item_ids (list[str]), payment_method_id (str)."""
    order = store.get_order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] != "delivered":
        raise ToolError("Non-delivered order cannot be returned")
    method = store.get_payment_method(ctx, order["user_id"], payment_method_id)
    if not store.is_gift_card(method):
        history = store.rows(ctx, "payments", oid)
        if not history:  # tau2 indexes payment_history[0]; never empty in db.json
            raise ToolError("list index out of range")
        if method["id"] != history[0]["payment_method_id"]:
            raise ToolError("Payment method should be the original payment method")
    _check_counts(item_ids, [i["item_id"] for i in store.rows(ctx, "order_items", oid)], "Some item not found")
    write(ctx, "UPDATE orders SET status = 'return requested', return_items = ?, return_payment_method_id = ? "
                     "WHERE order_id = ?", (json.dumps(sorted(item_ids)), method["id"], oid))
    return store.order_entity(ctx, oid)


# ---- helpers of the write tools ------------------------------------------------------------------

def _check_counts(item_ids: Any, order_item_ids: list[str], message: str) -> None:
    """Each requested id may not occur more often than in the order (a string is iterated by character)."""
    try:
        for item_id in item_ids:
            if item_ids.count(item_id) > order_item_ids.count(item_id):
                raise ToolError(message.format(item_id))
    except AttributeError as exc:
        raise python_error(exc) from exc


def _price_difference(ctx: ToolContext, lines: list[Row], item_ids: Any, new_item_ids: Any,
                      distinct: bool) -> tuple[float | int, Row | None]:
    """Validate each (old, new) pair against the order as it was; sum new - old from the integer 0, unrounded."""
    diff: float | int = 0
    variant = None
    for old, new in zip(item_ids, new_item_ids):
        if distinct and old == new:
            raise ToolError("The new item id should be different from the old item id")
        line = next((i for i in lines if i["item_id"] == old), None)
        if line is None:  # unreachable after the count check (§10), kept as tau2 has it
            raise ToolError(f"Item {old} not found")
        variant = store.get_variant(ctx, line["product_id"], new)
        if not variant["available"]:
            raise ToolError(f"New item {new} not found or available")
        diff = diff + (variant["price"] - line["price"])
    return diff, variant


def _set_address(ctx: ToolContext, table: str, key_column: str, key: str, new: dict[str, str]) -> None:
    sets = ", ".join(f"{f} = ?" for f in ADDRESS_FIELDS)
    write(ctx, f"UPDATE {table} SET {sets} WHERE {key_column} = ?", (*(new[f] for f in ADDRESS_FIELDS), key))


def _append_payments(ctx: ToolContext, order_id: str, start: int, entries: list[tuple[str, float, str]]) -> None:
    write(ctx, "INSERT INTO payments (order_id, position, transaction_type, amount, payment_method_id) "
                     "VALUES (?, ?, ?, ?, ?)",
                [(order_id, start + i, *e) for i, e in enumerate(entries)], many=True)


def _set_balances(ctx: ToolContext, balances: dict[str, float]) -> None:
    write(ctx, "UPDATE payment_methods SET balance = ? WHERE id = ?",
                [(b, method_id) for method_id, b in balances.items()], many=True)


# ---- the agent's role --------------------------------------------------------------------------

ROLE = agent_role(DOMAIN, "retail_agent")
