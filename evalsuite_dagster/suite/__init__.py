"""The suite graph: its component, assets, gates as checks, held-back steps and automation."""
