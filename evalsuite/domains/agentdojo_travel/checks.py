"""Checks of the travel domain that a row assertion cannot express (filled in with the importer)."""
