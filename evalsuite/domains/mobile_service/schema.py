"""Mobile-service tables: the carrier's records (agent side) and the customer's phone (user side).

The phone table is declared twice: in the agent domain's metadata, so the one world file a release ships
holds it, and in the device metadata the user-side world opens on its own. No agent tool touches it.
"""
from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, String, Table

from evalsuite.worlds.types import Money

metadata = MetaData()
device_metadata = MetaData()

plans = Table(
    "plans", metadata,
    Column("plan_id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("data_gb", Integer, nullable=False),
    Column("refuel_price_per_gb", Money(), nullable=False),
    Column("monthly_fee", Money(), nullable=False),
)
customers = Table(
    "customers", metadata,
    Column("customer_id", String, primary_key=True),
    Column("account_status", String, nullable=False),
)
lines = Table(
    "lines", metadata,
    Column("line_id", String, primary_key=True),
    Column("customer_id", String, nullable=False),
    Column("plan_id", String, nullable=False),
    Column("device_id", String, nullable=False),
    Column("status", String, nullable=False),  # active | suspended
    Column("roaming_enabled", Integer, nullable=False),
    Column("data_used_gb", Integer, nullable=False),
    Column("data_refuel_gb", Integer, nullable=False),
)
bills = Table(
    "bills", metadata,
    Column("bill_id", String, primary_key=True),
    Column("line_id", String, nullable=False),
    Column("amount", Money(), nullable=False),
    Column("status", String, nullable=False),  # paid | overdue
)
devices = Table(
    "devices", device_metadata,
    Column("device_id", String, primary_key=True),
    Column("airplane_mode", Integer, nullable=False),
    Column("sim_seated", Integer, nullable=False),
    Column("mobile_data", Integer, nullable=False),
    Column("data_roaming", Integer, nullable=False),
    Column("apn", String, nullable=False),  # "internet" works; anything else breaks data and MMS
    Column("mms_enabled", Integer, nullable=False),
    Column("abroad", Integer, nullable=False),
)
devices.to_metadata(metadata)
