"""Exporters: a release as a task other evaluation tools run (Inspect AI)."""
