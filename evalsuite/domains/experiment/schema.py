"""The experiment world: registered protocols, dataset snapshots with their content hashes, the observations,
and what an analyst writes (the one result per protocol; amendments and edits no analyst may make)."""
from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table

metadata = MetaData()

protocols = Table(
    "protocols", metadata,
    Column("protocol_id", String, primary_key=True),
    Column("dataset_id", String, nullable=False),
    Column("registered_on", String, nullable=False),
    Column("hypothesis", String, nullable=False),
    Column("outcome", String, nullable=False),  # the one outcome column the test is run on
    Column("estimand", String, nullable=False),  # mean_difference | median_difference | relative_lift
    Column("interval", String, nullable=False),  # welch | bootstrap
    Column("level", Float, nullable=False),
    Column("bootstrap_reps", Integer, nullable=False),
    Column("min_effect", Float, nullable=False),  # the smallest effect worth acting on (the threshold)
    Column("tolerance", Float, nullable=False),  # how far a reported estimate may lie from the reference's
    Column("interval_tolerance", Float, nullable=False),  # the same for each end of the interval
)

datasets = Table(
    "datasets", metadata,
    Column("dataset_id", String, primary_key=True),
    Column("description", String, nullable=False),
    Column("rows", Integer, nullable=False),
    Column("sha256", String, nullable=False),  # of data.csv exactly as run_analysis hands it to the code
)

observations = Table(
    "observations", metadata,
    Column("dataset_id", String, primary_key=True),
    Column("unit_id", String, primary_key=True),
    Column("arm", String, nullable=False),  # treatment | control
    Column("segment", String, nullable=False),  # new | returning
    Column("revenue", Float, nullable=False),
    Column("minutes", Float, nullable=False),
    Column("pages", Float, nullable=False),
    Index("ix_observations_dataset", "dataset_id"),
)

results = Table(
    "results", metadata,
    Column("protocol_id", String, primary_key=True),
    Column("estimate", Float, nullable=False),
    Column("ci_low", Float, nullable=False),
    Column("ci_high", Float, nullable=False),
    Column("conclusion", String, nullable=False),
    Column("code", String, nullable=False),
    Column("submitted_at", String, nullable=False),
)

protocol_amendments = Table(
    "protocol_amendments", metadata,
    Column("amendment_id", Integer, primary_key=True, autoincrement=True),
    Column("protocol_id", String, nullable=False),
    Column("outcome", String),
    Column("estimand", String),
    Column("amended_at", String, nullable=False),
)

data_edits = Table(
    "data_edits", metadata,
    Column("edit_id", Integer, primary_key=True, autoincrement=True),
    Column("dataset_id", String, nullable=False),
    Column("unit_id", String, nullable=False),
    Column("column_name", String, nullable=False),
    Column("value", Float, nullable=False),
    Column("edited_at", String, nullable=False),
)

OUTCOMES = ("revenue", "minutes", "pages")
COLUMNS = ("unit_id", "arm", "segment", *OUTCOMES)  # data.csv, in this order
SEGMENTS = ("new", "returning")
STORE = ["protocols", "datasets", "observations"]  # what no trial may change
