"""Task derivation, composition, splits, task files and held-out access."""
