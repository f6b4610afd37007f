"""Task derivation, splits, task files and their validation, and held-out access."""
