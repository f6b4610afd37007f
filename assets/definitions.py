"""The code location's one Definitions object."""
import dagster as dg

defs = dg.Definitions(assets=[])
