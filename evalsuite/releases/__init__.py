"""Immutable, versioned releases and the run folders of agents scored on them."""
