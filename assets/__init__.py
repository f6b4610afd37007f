"""Dagster code location: thin wiring of evalsuite library calls into assets, checks, sensors and schedules."""
