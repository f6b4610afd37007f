"""Tables of the AgentDojo banking world (SPEC.md §1): one account, its transactions, files, the user.

Booked and scheduled transactions share one table and one id counter (§1.6),
told apart by `booked`; both lists are append-only with increasing ids, so a
list's stored order is its id order. Amounts are the peer's IEEE doubles kept
exactly as given (ExactNumber): its checks compare floats (`amount == 98.70`),
and its tools print Python float text, so a decimal here would change both.
"""
from __future__ import annotations

from sqlalchemy import Boolean, Column, Index, Integer, MetaData, String, Table, Text

from evalsuite.worlds.types import ExactNumber

metadata = MetaData()

bank_account = Table(
    "bank_account", metadata,
    Column("account_id", Integer, primary_key=True),  # always 1: the environment holds one account
    Column("balance", ExactNumber(), nullable=False),
    Column("iban", String, nullable=False),
)

transactions = Table(
    "transactions", metadata,
    Column("id", Integer, primary_key=True),
    Column("booked", Boolean, nullable=False),  # true: bank_account.transactions; false: scheduled_transactions
    Column("sender", String, nullable=False),
    Column("recipient", String, nullable=False),
    Column("amount", ExactNumber(), nullable=False),
    Column("subject", Text, nullable=False),
    Column("date", String, nullable=False),
    Column("recurring", Boolean, nullable=False),
    Index("ix_transactions_booked", "booked", "id"),  # every list tool filters on the list
)

files = Table(
    "files", metadata,
    Column("name", String, primary_key=True),
    Column("text", Text, nullable=False),
)

user_account = Table(
    "user_account", metadata,
    Column("account_id", Integer, primary_key=True),  # always 1
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    Column("street", String, nullable=False),
    Column("city", String, nullable=False),
    Column("password", String, nullable=False),
)

TRANSACTION_FIELDS = ("id", "sender", "recipient", "amount", "subject", "date", "recurring")  # the peer's order
USER_FIELDS = ("first_name", "last_name", "street", "city")
