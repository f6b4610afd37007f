"""Tables of the tau2 retail world, following TOOLS_SPEC.md's suggested SQL mapping.

Maps of the source (products, variants, users, payment methods, orders) get a
`position` column: db.json key order is observable (find_user_* scan users in
db order) and keeps the JSON round trip exact. Lists (order items, payments,
fulfillments, a user's orders) are rows keyed by (owner, position). Money is
REAL, i.e. the same IEEE double tau2 holds, so its hash is reproduced bit for
bit; `exchange_price_difference` keeps tau2's int-vs-float distinction (an
empty exchange stores the integer 0). Lists owned by one order field
(exchange/return items) and option maps are JSON text (json.dumps defaults),
which keeps order, tells NULL from [] and survives a Parquet round trip as
plain strings.
"""
from __future__ import annotations

from functools import partial

from sqlalchemy import Boolean, Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text, func

from evalsuite.domains.tau2 import rows
from evalsuite.domains.tau2.rows import CLUSTERED
from evalsuite.domains.tau2.tables import ADDRESS_FIELDS, mapped, owned, required
from evalsuite.worlds.types import ExactNumber

metadata = MetaData()

products = mapped(metadata, "products", "product_id", *required("name"))

variants = Table(
    "variants", metadata,
    Column("item_id", String, primary_key=True),
    Column("product_id", String, ForeignKey("products.product_id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("available", Boolean, nullable=False),
    Column("price", Float, nullable=False),
    Column("options", Text, nullable=False),
    Index("ix_variants_product", "product_id", "position"),
    **CLUSTERED,
)

users = mapped(metadata, "users", "user_id", *required("first_name", "last_name", "email", *ADDRESS_FIELDS))
# The find_user_* tools match lower(...) = ? and take matches in db order; these indexes serve exactly those
# expressions, in position order (no sort step).
Index("ix_users_email_lower_position", func.lower(users.c.email), users.c.position)
Index("ix_users_first_name_lower_position", func.lower(users.c.first_name), users.c.position)

payment_methods = Table(
    "payment_methods", metadata,
    Column("id", String, primary_key=True),
    Column("user_id", String, ForeignKey("users.user_id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("source", String, nullable=False),
    Column("brand", String),  # credit_card only
    Column("last_four", String),  # credit_card only
    Column("balance", Float),  # gift_card only
    Index("ix_payment_methods_user", "user_id", "position"),
    **CLUSTERED,
)

user_orders = owned(metadata, "user_orders", "user_id", *required("order_id"))

orders = mapped(
    metadata, "orders", "order_id",
    *required("user_id", *ADDRESS_FIELDS, "status"),
    Column("cancel_reason", String),
    Column("exchange_items", Text),
    Column("exchange_new_items", Text),
    Column("exchange_payment_method_id", String),
    Column("exchange_price_difference", ExactNumber),
    Column("return_items", Text),
    Column("return_payment_method_id", String),
)

order_items = owned(metadata, "order_items", "order_id", *required("item_id", "product_id", "name"),
                    Column("price", Float, nullable=False), Column("options", Text, nullable=False))
fulfillments = owned(metadata, "fulfillments", "order_id", *required("tracking_ids", "item_ids", type_=Text))
payments = owned(metadata, "payments", "order_id", *required("transaction_type"),
                 Column("amount", Float, nullable=False), *required("payment_method_id"))

# The seven order fields absent from db.json; tau2 reads absent as null.
ORDER_OPTIONAL = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                  "exchange_price_difference", "return_items", "return_payment_method_id")

COLUMNS = rows.table_columns(metadata)
# Text columns holding JSON (json.dumps defaults, so equal values are equal text).
JSON_COLUMNS: dict[str, frozenset[str]] = {
    "variants": frozenset({"options"}), "order_items": frozenset({"options"}),
    "fulfillments": frozenset({"tracking_ids", "item_ids"}),
    "orders": frozenset({"exchange_items", "exchange_new_items", "return_items"}),
}

select_sql = partial(rows.select_sql, COLUMNS)  # select_sql(table, where="", order="")
