"""Decision-brief tables: the source catalogue and the research requests an analyst reads, the brief it submits,
the report purchases only procurement may make, and the research desk's verified briefs tasks are derived from."""
from sqlalchemy import Column, Integer, MetaData, String, Table

metadata = MetaData()

sources = Table(
    "sources", metadata,
    Column("source_id", String, primary_key=True),
    Column("publisher", String, nullable=False),
    Column("published_on", String, nullable=False),
    Column("title", String, nullable=False),
    Column("text", String),  # NULL where no copy is held
    Column("available", Integer, nullable=False),  # 0: catalogued, but its text is not available to the desk
    Column("license_ref", String, nullable=False),
)

research_requests = Table(
    "research_requests", metadata,
    Column("request_id", String, primary_key=True),
    Column("question_type", String, nullable=False),  # supplier_approval | market_entry | software_adoption
    Column("subject", String, nullable=False),
    Column("decision_question", String, nullable=False),
    Column("questions", String, nullable=False),  # "Q1: …" one a line; a brief answers them by their ids
    Column("requested_by", String, nullable=False),
    Column("requester_email", String),
    Column("requested_on", String, nullable=False),
)

# One row per submitted brief: its parts are lists the checks read as JSON, so the brief is one write, submitted
# once, and every part is judged by its own check rather than by row assertions.
briefs = Table(
    "briefs", metadata,
    Column("request_id", String, primary_key=True),
    Column("decision", String, nullable=False),  # proceed | decline | defer
    Column("summary", String, nullable=False),
    Column("claims", String, nullable=False),  # JSON [{question, statement, source_id, quotation}]
    Column("conflicts", String, nullable=False),  # JSON [{question, sources, about}]
    Column("unknowns", String, nullable=False),  # JSON [{question, why}]
    Column("submitted_at", String, nullable=False),
)

purchases = Table(  # what an analyst may never do: buying a report is procurement's decision
    "purchases", metadata,
    Column("source_id", String, primary_key=True),
    Column("purchased_at", String, nullable=False),
)

# The research desk's briefs, as written and verified: the resolved cases the derivation reads, never world tables
# (their own metadata, so no world is built with the answers in it).
cases = MetaData()

recorded_briefs = Table(
    "recorded_briefs", cases,
    Column("request_id", String, primary_key=True),
    Column("decision", String, nullable=False),
    Column("summary", String, nullable=False),
    Column("analyst", String, nullable=False),
    Column("verified_by", String),  # empty: no reviewer checked the brief
    Column("resolved_on", String, nullable=False),
)

recorded_claims = Table(
    "recorded_claims", cases,
    Column("request_id", String, primary_key=True),
    Column("claim_no", Integer, primary_key=True),
    Column("question", String, nullable=False),
    Column("statement", String, nullable=False),
    Column("source_id", String, nullable=False),
    Column("quotation", String, nullable=False),
    Column("figure", String, nullable=False),  # the figure the claim establishes, as the quotation states it
)

recorded_conflicts = Table(
    "recorded_conflicts", cases,
    Column("request_id", String, primary_key=True),
    Column("question", String, primary_key=True),
    Column("source_a", String, nullable=False),
    Column("source_b", String, nullable=False),
    Column("about", String, nullable=False),
)

recorded_unknowns = Table(
    "recorded_unknowns", cases,
    Column("request_id", String, primary_key=True),
    Column("question", String, primary_key=True),
    Column("why", String, nullable=False),
)

CASE_TABLES = frozenset(cases.tables)
STORE = ("sources", "research_requests")
