"""Tables of the tau2 telecom worlds: the carrier's records (agent side) and the customer's phone (user side).

Agent side (TOOLS_SPEC.md §2): db.toml's five lists (plans, customers, lines,
bills, devices) become tables keyed by their ids with a `position` column (list
order is observable: lookups scan in order, the DB hash dumps lists in order);
a customer's payment methods, line ids and bill ids and a bill's line items
are rows keyed by (owner, position). Floats are REAL (tau2 holds floats),
booleans INTEGER 0/1, dates `YYYY-MM-DD` and datetimes `YYYY-MM-DD HH:MM:SS`
text (the form tau2 prints and hashes).

User side (§3): the phone is one row (`phone`, id 1) holding the device's
settings with its active APN record flattened into `apn_*` columns and its VPN
details into `vpn_*` columns (`vpn_server_performance` null = no details); a
value `set_apn_settings` stored that is no APN record at all (§15) is kept as
JSON in `apn_raw`, which then stands for the whole APN. Installed apps are rows
keyed by app name (map order in `position`); the surroundings are one row
(`surroundings`, id 1) with the payment request flattened into `request_*`
(`request_bill_id` null = no request); their per-technology signal map is
`signal_strengths`.
"""
from __future__ import annotations

from datetime import datetime
from functools import partial

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table

from evalsuite.domains.tau2 import rows
from evalsuite.domains.tau2.rows import CLUSTERED
from evalsuite.domains.tau2.tables import mapped, owned, required

# main_policy.md: "The current time is 2025-02-25 12:08:00 EST." Both worlds' clock; no tool reads another.
CLOCK = datetime(2025, 2, 25, 12, 8, 0)

metadata = MetaData()
user_metadata = MetaData()

plans = mapped(metadata, "plans", "plan_id", *required("name"),
               *required("data_limit_gb", "price_per_month", "data_refueling_price_per_gb", type_=Float))

customers = mapped(
    metadata, "customers", "customer_id",
    *required("full_name", "date_of_birth", "email", "phone_number", "street", "city", "state", "zip_code",
              "account_status", "created_at"),
    Column("last_extension_date", String),
    Column("goodwill_credit_used_this_year", Float, nullable=False),
)

# A customer's or a bill's lists.
payment_methods = owned(metadata, "payment_methods", "customer_id",
                        *required("method_type", "account_number_last_4", "expiration_date"))
customer_lines = owned(metadata, "customer_lines", "customer_id", *required("line_id"))
customer_bills = owned(metadata, "customer_bills", "customer_id", *required("bill_id"))

lines = mapped(
    metadata, "lines", "line_id",
    *required("phone_number", "status", "plan_id"),
    Column("device_id", String),
    Column("data_used_gb", Float, nullable=False),
    Column("data_refueling_gb", Float, nullable=False),
    Column("roaming_enabled", Integer, nullable=False),
    *[Column(f, String) for f in ("contract_end_date", "last_plan_change_date", "last_sim_replacement_date",
                                  "suspension_start_date")],
)
# The link step finds the phone's line by number, first in list order.
Index("ix_lines_phone_position", lines.c.phone_number, lines.c.position)

bills = mapped(metadata, "bills", "bill_id", *required("customer_id", "period_start", "period_end", "issue_date"),
               Column("total_due", Float, nullable=False), *required("due_date", "status"))

line_items = owned(metadata, "line_items", "bill_id", *required("description"),
                   Column("amount", Float, nullable=False), *required("date", "item_type"))

devices = mapped(
    metadata, "devices", "device_id",
    *required("device_type", "model"),
    Column("imei", String),
    *required("is_esim_capable", "activated", type_=Integer),
    Column("activation_date", String),
    Column("last_esim_transfer_date", String),
)

# ---- the phone (user side) ------------------------------------------------------------------------

# The phone's own fields, in tau2's field order, and which of them are booleans (INTEGER 0/1).
PHONE_FIELDS = ("sim_card_status", "sim_card_missing", "airplane_mode", "network_signal_strength",
                "network_technology_connected", "network_connection_status", "battery_level", "data_enabled",
                "roaming_enabled", "network_mode_preference", "active_apn_settings", "wifi_enabled",
                "wifi_connected", "wifi_ssid", "wifi_signal_strength", "wifi_calling_enabled",
                "wifi_calling_mms_over_wifi", "data_saver_mode", "vpn_enabled_setting", "vpn_connected",
                "vpn_details", "app_statuses")
PHONE_BOOLS = frozenset({"sim_card_missing", "airplane_mode", "data_enabled", "roaming_enabled", "wifi_enabled",
                         "wifi_connected", "wifi_calling_enabled", "wifi_calling_mms_over_wifi", "data_saver_mode",
                         "vpn_enabled_setting", "vpn_connected"})
APN_FIELDS = ("apn_name", "reset_at_reboot", "mms_apn", "mmsc_url", "mms_proxy", "mms_port")
APN_COLUMN = {f: f if f == "apn_name" else f"apn_{f}" for f in APN_FIELDS}  # the phone column of each APN field
VPN_FIELDS = ("server_address", "protocol", "server_performance")
PERMISSIONS = ("sms", "storage", "phone", "network")
SURROUNDINGS_FIELDS = ("name", "phone_number", "is_abroad", "roaming_allowed", "signal_strength",
                       "mobile_data_usage_exceeded", "line_active", "payment_request")
SURROUNDINGS_BOOLS = frozenset({"is_abroad", "roaming_allowed", "mobile_data_usage_exceeded", "line_active"})
REQUEST_FIELDS = ("bill_id", "amount_due", "paid")

_SCALARS = [f for f in PHONE_FIELDS if f not in ("active_apn_settings", "vpn_details", "app_statuses")]

phone = Table(
    "phone", user_metadata,
    Column("id", Integer, primary_key=True),
    *[Column(f, Integer if f in PHONE_BOOLS or f == "battery_level" else String, nullable=f == "wifi_ssid")
      for f in _SCALARS],
    Column("apn_name", String), Column("apn_reset_at_reboot", Integer), Column("apn_mms_apn", String),
    Column("apn_mmsc_url", String), Column("apn_mms_proxy", String), Column("apn_mms_port", Integer),
    Column("apn_raw", String),  # JSON of a non-record APN value (§15); the apn_* columns are then null
    Column("vpn_server_address", String), Column("vpn_protocol", String), Column("vpn_server_performance", String),
    **CLUSTERED,
)

apps = Table(
    "apps", user_metadata,
    Column("app_key", String, primary_key=True),  # the map key (the record's own app_name is a field)
    Column("position", Integer, nullable=False),
    Column("app_name", String, nullable=False),
    *[Column(p, Integer, nullable=False) for p in PERMISSIONS],
    **CLUSTERED,
)

surroundings = Table(
    "surroundings", user_metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String),
    Column("phone_number", String),
    *[Column(f, Integer, nullable=False) for f in ("is_abroad", "roaming_allowed", "mobile_data_usage_exceeded",
                                                   "line_active")],
    Column("request_bill_id", String), Column("request_amount_due", Float), Column("request_paid", Integer),
    **CLUSTERED,
)

signal_strengths = Table(
    "signal_strengths", user_metadata,
    Column("technology", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("signal", String, nullable=False),
    **CLUSTERED,
)

COLUMNS = rows.table_columns(metadata)
USER_COLUMNS = rows.table_columns(user_metadata)

select_sql = partial(rows.select_sql, COLUMNS)  # select_sql(table, where="", order="")
user_select_sql = partial(rows.select_sql, USER_COLUMNS)

# One world file holds both sides: a trial opens the phone's world over the carrier's world file
# (evalsuite.trials.users.dual), so the carrier's metadata creates the phone's tables too. Only the phone's tools,
# hash and checks read them (COLUMNS above stays the carrier's own).
for _table in user_metadata.tables.values():
    _table.to_metadata(metadata)
