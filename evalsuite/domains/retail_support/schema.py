"""Tables of the retail-support world: copies of the τ²-bench retail tables as they are, plus authored support tables.

The inherited retail system (users, orders, items, payment methods) is tau2_retail's schema, copied table by table.
Every other table is an authored addition of evalsuite (after the support case of the environment-design guide,
the shared reference on choosing and checking business environments), labelled in its `info` and comment:
replacements of an order line, shipments and carrier events, previous contacts, cases, exception authorizations,
customer consents, a refund ledger with exact decimal money, ISO currency and idempotency keys, human-review
handoffs, investigations and the versioned support policies.
"""
from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, String, Table, Text, UniqueConstraint

from evalsuite.domains.tau2_retail.schema import metadata as tau2_metadata
from evalsuite.worlds.types import Money

metadata = MetaData()
for _table in tau2_metadata.tables.values():
    _table.to_metadata(metadata)
INHERITED = frozenset(tau2_metadata.tables)

AUTHORED_NOTE = ("authored addition (evalsuite retail_support, after the environment-design guide's support case); "
                 "not tau2 data")


def _authored(name: str, comment: str, *cols) -> Table:
    return Table(name, metadata, *cols, comment=f"{comment} [{AUTHORED_NOTE}]", info={"authored": True})


purchases = _authored(
    "purchases", "One purchased order line as the ledger knows it: its current revision and exact price",
    Column("purchase_id", String, primary_key=True), Column("order_id", String, nullable=False),
    Column("item_id", String, nullable=False), Column("revision", Integer, nullable=False),
    Column("amount", Money(), nullable=False), Column("currency", String(3), nullable=False))
replacements = _authored(
    "replacements", "A replacement sent for a purchase",
    Column("replacement_id", String, primary_key=True), Column("purchase_id", String, nullable=False),
    Column("shipment_id", String, nullable=False), Column("requested_at", String, nullable=False))
shipments = _authored(
    "shipments", "A carrier shipment; status as the carrier last reported it (lost, in_transit, unknown…)",
    Column("shipment_id", String, primary_key=True), Column("carrier", String, nullable=False),
    Column("tracking_id", String, nullable=False), Column("status", String, nullable=False))
carrier_events = _authored(
    "carrier_events", "Carrier scan events; code lost_confirmed is the carrier's confirmation of loss",
    Column("shipment_id", String, primary_key=True), Column("seq", Integer, primary_key=True),
    Column("at", String, nullable=False), Column("code", String, nullable=False), Column("detail", Text))
contacts = _authored(
    "contacts", "Previous customer contacts on a case",
    Column("contact_id", String, primary_key=True), Column("case_id", String, nullable=False),
    Column("at", String, nullable=False), Column("channel", String, nullable=False),
    Column("summary", Text, nullable=False))
cases = _authored(
    "cases", "A support case about one purchase, under one support policy version",
    Column("case_id", String, primary_key=True), Column("user_id", String, nullable=False),
    Column("purchase_id", String, nullable=False), Column("policy_version", String, nullable=False),
    Column("requested_remedy", String, nullable=False), Column("status", String, nullable=False),
    Column("resolution", Text), Column("updated_at", String))
authorizations = _authored(
    "authorizations", "Exception authorizations; only a support manager grants one (status granted, trusted 1)",
    Column("authorization_id", String, primary_key=True), Column("case_id", String, nullable=False),
    Column("purchase_id", String, nullable=False), Column("purchase_revision", Integer, nullable=False),
    Column("remedy", String, nullable=False), Column("amount", Money()), Column("currency", String(3)),
    Column("decided_by", String), Column("status", String, nullable=False), Column("trusted", Integer, nullable=False),
    Column("requested_at", String), Column("granted_at", String), Column("invalidated_at", String))
consents = _authored(
    "consents", "A customer's consent to a named remedy on a named purchase revision",
    Column("consent_id", String, primary_key=True), Column("case_id", String, nullable=False),
    Column("purchase_id", String, nullable=False), Column("purchase_revision", Integer, nullable=False),
    Column("remedy", String, nullable=False), Column("given_at", String, nullable=False),
    Column("withdrawn_at", String), Column("statement", Text))
refunds = _authored(
    "refunds", "The refund ledger: exact decimal amount, ISO currency, one row per idempotency key",
    Column("refund_id", String, primary_key=True), Column("idempotency_key", String, nullable=False),
    Column("case_id", String, nullable=False), Column("purchase_id", String, nullable=False),
    Column("purchase_revision", Integer, nullable=False), Column("amount", Money(), nullable=False),
    Column("currency", String(3), nullable=False), Column("authorization_id", String), Column("policy_clause", String),
    Column("consent_id", String, nullable=False), Column("created_at", String, nullable=False),
    UniqueConstraint("idempotency_key", name="uq_refunds_idempotency_key"))
handoffs = _authored(
    "handoffs", "Human-review cases opened by the agent, with the evidence it cites (JSON list of record ids)",
    Column("handoff_id", String, primary_key=True), Column("case_id", String, nullable=False),
    Column("reason", Text, nullable=False), Column("evidence", Text, nullable=False),
    Column("created_at", String, nullable=False))
investigations = _authored(
    "investigations", "Carrier investigations opened by the agent",
    Column("investigation_id", String, primary_key=True), Column("case_id", String, nullable=False),
    Column("shipment_id", String, nullable=False), Column("note", Text, nullable=False),
    Column("created_at", String, nullable=False))
support_policies = _authored(
    "support_policies", "Support policy versions; manager_discretion 1 lets a manager grant the lost-replacement "
    "exception; status unavailable means the text is withheld",
    Column("version", String, primary_key=True), Column("status", String, nullable=False),
    Column("manager_discretion", Integer), Column("text", Text))

AUTHORED = frozenset(t for t in metadata.tables if t not in INHERITED)
