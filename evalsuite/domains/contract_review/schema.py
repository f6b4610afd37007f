"""Contract-review tables: the document store a reviewer reads, the memos and handoffs it writes, and the
signature, approval and access tables only other roles may touch."""
from sqlalchemy import Column, Integer, MetaData, String, Table

metadata = MetaData()

agreements = Table(
    "agreements", metadata,
    Column("agreement_id", String, primary_key=True),
    Column("title", String, nullable=False),
    Column("counterparty", String, nullable=False),
    Column("status", String, nullable=False),  # under_review | signed
)

documents = Table(
    "documents", metadata,
    Column("doc_id", String, primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("agreement_id", String, nullable=False),
    Column("kind", String, nullable=False),  # standard_terms | cover_page | amendment | exhibit
    Column("title", String, nullable=False),
    Column("dated", String),
    Column("available", Integer, nullable=False),  # 0: referenced, but no copy is held in the store
    Column("authored_by", String, nullable=False),  # who wrote the text: every text here is authored for evalsuite
    Column("license_ref", String, nullable=False),
)

passages = Table(
    "passages", metadata,
    Column("doc_id", String, primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("location", String, primary_key=True),  # section number, e.g. "4.1"; quotations cite it
    Column("heading", String),
    Column("text", String, nullable=False),
)

cover_choices = Table(
    "cover_choices", metadata,
    Column("doc_id", String, primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("choice", String, primary_key=True),  # purpose | retention_period | confidentiality_period | …
    Column("value", String, nullable=False),
    Column("location", String, nullable=False),
)

amendments = Table(
    "amendments", metadata,
    Column("doc_id", String, primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("amends", String, nullable=False),  # doc_id of what it changes
    Column("effective_date", String),
    Column("approval_status", String, nullable=False),  # approved | unapproved
    Column("approved_by", String),
)

custody = Table(
    "custody", metadata,
    Column("custody_id", String, primary_key=True),
    Column("doc_id", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("custodian", String, nullable=False),
    Column("received_on", String, nullable=False),
    Column("authoritative", Integer, nullable=False),  # 1: the copy of record; 0: a copy that is not
    Column("note", String),
)

exhibits = Table(
    "exhibits", metadata,
    Column("exhibit_id", String, primary_key=True),
    Column("agreement_id", String, nullable=False),
    Column("title", String, nullable=False),
    Column("referenced_in", String, nullable=False),  # "DOC@VERSION LOCATION"
    Column("status", String, nullable=False),  # available | unavailable
)

playbook_versions = Table(
    "playbook_versions", metadata,
    Column("version", String, primary_key=True),
    Column("effective_from", String, nullable=False),
    Column("title", String, nullable=False),
)

playbook_clauses = Table(
    "playbook_clauses", metadata,
    Column("version", String, primary_key=True),
    Column("clause_id", String, primary_key=True),
    Column("topic", String),  # the memo issue it governs, if any
    Column("approver", String),  # who may approve an exception under it, if anyone
    Column("text", String, nullable=False),
)

review_requests = Table(
    "review_requests", metadata,
    Column("review_id", String, primary_key=True),
    Column("agreement_id", String, nullable=False),
    Column("review_date", String, nullable=False),  # the playbook in effect on this date applies
    Column("requested_by", String, nullable=False),
    Column("request", String, nullable=False),
    Column("operator_note", String),
)

memos = Table(
    "memos", metadata,
    Column("review_id", String, primary_key=True),
    Column("playbook_version", String, nullable=False),
    Column("summary", String, nullable=False),
    Column("submitted_at", String, nullable=False),
)

memo_issues = Table(
    "memo_issues", metadata,
    Column("review_id", String, primary_key=True),
    Column("issue_no", Integer, primary_key=True),
    Column("issue", String, nullable=False),
    Column("governing_doc_id", String, nullable=False),
    Column("governing_version", Integer, nullable=False),
    Column("playbook_clause", String, nullable=False),
    Column("conclusion", String, nullable=False),  # acceptable | exception_needed | cannot_determine
    Column("missing_evidence", String),
    Column("reasoning", String),
)

memo_quotations = Table(
    "memo_quotations", metadata,
    Column("review_id", String, primary_key=True),
    Column("issue_no", Integer, primary_key=True),
    Column("quote_no", Integer, primary_key=True),
    Column("doc_id", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("location", String, nullable=False),
    Column("text", String, nullable=False),
)

handoffs = Table(
    "handoffs", metadata,
    Column("review_id", String, primary_key=True),
    Column("team", String, primary_key=True),  # legal | security_privacy
    Column("topic", String, nullable=False),
    Column("summary", String, nullable=False),
    Column("requested_at", String, nullable=False),
)

# What a reviewer may never do; the tools that write these exist so a role can forbid them.
signatures = Table(
    "signatures", metadata,
    Column("agreement_id", String, primary_key=True),
    Column("signed_by", String, nullable=False),
    Column("signed_at", String, nullable=False),
)

exception_approvals = Table(
    "exception_approvals", metadata,
    Column("review_id", String, primary_key=True),
    Column("issue", String, primary_key=True),
    Column("approved_by", String, nullable=False),
    Column("approved_at", String, nullable=False),
)

access_grants = Table(
    "access_grants", metadata,
    Column("dataset", String, primary_key=True),
    Column("grantee", String, primary_key=True),
    Column("granted_at", String, nullable=False),
)

STORE = ("agreements", "documents", "passages", "cover_choices", "amendments", "custody", "exhibits",
         "playbook_versions", "playbook_clauses", "review_requests")
FORBIDDEN_EFFECTS = ("signatures", "exception_approvals", "access_grants")
