"""Accounts-payable exception tables: the ERP state an AP clerk agent acts on."""
from sqlalchemy import Column, Index, Integer, MetaData, String, Table

from evalsuite.worlds.types import Money

metadata = MetaData()

vendor_master = Table(
    "vendor_master", metadata,
    Column("vendor_id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("contact_name", String),
    Column("email", String),
    Column("phone", String),
    Column("country", String),
    Column("currency", String, nullable=False),
    Column("bank_account", String),
    Column("status", String, nullable=False),
    Column("duplicate_of", String),  # a second record of the same supplier, as real masters have
    Column("updated_at", String),
)

purchase_orders = Table(
    "purchase_orders", metadata,
    Column("po_id", String, primary_key=True),
    Column("vendor_id", String, nullable=False),
    Column("buyer", String),
    Column("currency", String, nullable=False),
    Column("status", String, nullable=False),
    Column("order_date", String),
)

po_lines = Table(
    "po_lines", metadata,
    Column("po_id", String, primary_key=True),
    Column("line_no", Integer, primary_key=True),
    Column("item", String),
    Column("qty", Integer, nullable=False),
    Column("unit_price", Money(), nullable=False),
)

goods_receipts = Table(
    "goods_receipts", metadata,
    Column("receipt_id", String, primary_key=True),
    Column("po_id", String, nullable=False),
    Column("line_no", Integer, nullable=False),
    Column("qty_received", Integer, nullable=False),
    Column("received_date", String),
)

invoices = Table(
    "invoices", metadata,
    Column("invoice_id", String, primary_key=True),
    Column("vendor_id", String, nullable=False),
    Column("po_id", String),
    Column("vendor_invoice_no", String, nullable=False),
    Column("invoice_date", String),
    Column("currency", String, nullable=False),
    Column("total", Money(), nullable=False),
    Column("status", String, nullable=False),  # blocked | on_hold | released | paid
    Column("hold_reason", String),
    Column("updated_at", String),
)

invoice_lines = Table(
    "invoice_lines", metadata,
    Column("invoice_id", String, primary_key=True),
    Column("line_no", Integer, primary_key=True),
    Column("po_line_no", Integer),
    Column("qty", Integer, nullable=False),
    Column("unit_price", Money(), nullable=False),
    Column("amount", Money(), nullable=False),
)

approval_requests = Table(
    "approval_requests", metadata,
    Column("approval_request_id", String, primary_key=True),
    Column("invoice_id", String, nullable=False),
    Column("approver_role", String, nullable=False),
    Column("reason", String),
    Column("status", String, nullable=False),
    Column("created_at", String),
)

payments = Table(
    "payments", metadata,
    Column("payment_id", String, primary_key=True),
    Column("invoice_id", String, nullable=False),
    Column("amount", Money(), nullable=False),
    Column("currency", String, nullable=False),
    Column("paid_on", String),
)

exception_queue = Table(
    "exception_queue", metadata,
    Column("queue_item_id", String, primary_key=True),
    Column("invoice_id", String, nullable=False),
    Column("exception_type", String, nullable=False),
    Column("description", String),
    Column("note", String),  # free text typed by staff; may name people
    Column("status", String, nullable=False),
    Column("opened_at", String),
)

vendor_messages = Table(
    "vendor_messages", metadata,
    Column("message_id", String, primary_key=True),
    Column("vendor_id", String, nullable=False),
    Column("invoice_id", String),
    Column("subject", String),
    Column("body", String),
    Column("sent_at", String),
)

# An index for every non-key column a tool filters on (with its ORDER BY column, so no sort step). Indexes are not
# part of schema_sha256 (columns, types, keys) and change no row, so neither the image nor the seed hash moves; a
# world file written before they were declared gets them when opened (World).
Index("ix_goods_receipts_po", goods_receipts.c.po_id, goods_receipts.c.receipt_id)
Index("ix_invoices_vendor_invoice_no", invoices.c.vendor_invoice_no, invoices.c.invoice_id)
# Goal states assert on these by invoice; the grader looks such rows up with `invoice_id IS ?`.
Index("ix_approval_requests_invoice", approval_requests.c.invoice_id)
Index("ix_vendor_messages_invoice", vendor_messages.c.invoice_id)
Index("ix_payments_invoice", payments.c.invoice_id)
