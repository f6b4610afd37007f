"""Data access for the retail tools: tau2's shared lookups (§2) and entity reads, in plain SQL.

Statements go to the trial's own DBAPI connection, inside the transaction the
world opened for the call, so a failing call still rolls back; writes add
their row counts to `ctx.rows_written` exactly as `ctx.execute` would. Plain
SQL on the DBAPI connection skips SQLAlchemy's per-statement cache-key,
compile and result machinery (tens of µs a statement against a few µs),
which would otherwise dominate gold replay.
"""
from __future__ import annotations

from typing import Any

from evalsuite.domains.tau2.rows import Row, key, named_queries, scalars
from evalsuite.domains.tau2.rows import select_sql as part_sql
from evalsuite.domains.tau2_retail import convert
from evalsuite.domains.tau2_retail.schema import select_sql
from evalsuite.worlds.domain import ToolContext

_SQL = {
    "order": select_sql("orders", "order_id = ?"),
    "user": select_sql("users", "user_id = ?"),
    "product": select_sql("products", "product_id = ?"),
    "variant": select_sql("variants", "product_id = ? AND item_id = ?"),
    "owned_variant": select_sql("variants", "product_id = ? AND item_id = ? AND EXISTS "
                                "(SELECT 1 FROM products p WHERE p.product_id = variants.product_id)"),
    "item": select_sql("variants", "item_id = ?"),
    "method": select_sql("payment_methods", "user_id = ? AND id = ?"),
    "owned_method": select_sql("payment_methods", "user_id = ? AND id = ? AND EXISTS "
                               "(SELECT 1 FROM users u WHERE u.user_id = payment_methods.user_id)"),
    "order_items": select_sql("order_items", "order_id = ?", "position"),
    # an entity's parts: only the columns its builder reads (convert.PART_COLUMNS)
    "methods": part_sql(convert.PART_COLUMNS, "payment_methods", "user_id = ?", "position"),
    "variants": part_sql(convert.PART_COLUMNS, "variants", "product_id = ?", "position"),
    "items": part_sql(convert.PART_COLUMNS, "order_items", "order_id = ?", "position"),
    "fulfillments": part_sql(convert.PART_COLUMNS, "fulfillments", "order_id = ?", "position"),
    "payments": part_sql(convert.PART_COLUMNS, "payments", "order_id = ?", "position"),
    "user_orders": "SELECT order_id FROM user_orders WHERE user_id = ? ORDER BY position",
}


rows, _one = named_queries(_SQL)


# ---- shared lookups: each raises tau2's exact message ------------------------------------------

def get_order(ctx: ToolContext, order_id: Any) -> Row:
    return _one(ctx, "order", "Order not found", key(order_id))


def get_user(ctx: ToolContext, user_id: Any) -> Row:
    return _one(ctx, "user", "User not found", key(user_id))


def get_product(ctx: ToolContext, product_id: Any) -> Row:
    return _one(ctx, "product", "Product not found", key(product_id))


# tau2 looks the owner up before the child, and its message says which was missing. One statement finds the child
# of an owner that exists (the row tau2 returns); only when it finds nothing are the two looked up in turn, to
# raise tau2's message: a found call costs one statement instead of two.

def get_variant(ctx: ToolContext, product_id: Any, item_id: Any) -> Row:
    if isinstance(product_id, str) and isinstance(item_id, str):
        found = rows(ctx, "owned_variant", product_id, item_id)
        if found:
            return found[0]
    get_product(ctx, product_id)
    return _one(ctx, "variant", "Variant not found", product_id, key(item_id))


def get_item(ctx: ToolContext, item_id: Any) -> Row:
    return _one(ctx, "item", "Item not found", key(item_id))


def get_payment_method(ctx: ToolContext, user_id: Any, method_id: Any) -> Row:
    if isinstance(user_id, str) and isinstance(method_id, str):
        found = rows(ctx, "owned_method", user_id, method_id)
        if found:
            return found[0]
    get_user(ctx, user_id)
    return _one(ctx, "method", "Payment method not found", user_id, key(method_id))


def is_gift_card(method: Row) -> bool:
    return method["source"] == "gift_card"  # the kind is decided by `source`, never by the id prefix


# ---- entities as tau2 returns them ---------------------------------------------------------------

def order_entity(ctx: ToolContext, order_id: str, order: Row | None = None) -> dict[str, Any]:
    """The Order as tau2 returns it; `order` is its row when already read and not written since."""
    order = order or rows(ctx, "order", order_id)[0]
    return convert.order_entity(order, rows(ctx, "items", order_id), rows(ctx, "fulfillments", order_id),
                                rows(ctx, "payments", order_id))


def user_entity(ctx: ToolContext, user: Row) -> dict[str, Any]:
    user_id = user["user_id"]
    return convert.user_entity(user, rows(ctx, "methods", user_id), scalars(ctx, _SQL["user_orders"], (user_id,)))


def product_entity(ctx: ToolContext, product: Row) -> dict[str, Any]:
    return convert.product_entity(product, rows(ctx, "variants", product["product_id"]))
