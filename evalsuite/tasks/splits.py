"""Deterministic splits: a case's split depends only on its id and the seed, so adding cases moves nothing."""
from __future__ import annotations

import hashlib


def assign_split(case_id: str, seed: int, fractions: dict[str, float]) -> str:
    if not fractions or abs(sum(fractions.values()) - 1.0) > 1e-9:
        raise ValueError(f"split fractions must sum to 1, got {fractions}")
    h = int.from_bytes(hashlib.sha256(f"{seed}:{case_id}".encode()).digest()[:8], "big") / 2**64
    acc = 0.0
    for name, frac in sorted(fractions.items()):
        acc += frac
        if h < acc:
            return name
    return sorted(fractions)[-1]
