"""Recorded runs of other harnesses imported as run folders of a release: replayed open loop and regraded."""
