"""`make mutation`: a mutant's tests run fastest first (tests/conftest.py's collection hook calls this)."""
from __future__ import annotations

import json
import os
from pathlib import Path


def fastest_first(items: list) -> None:
    """Under `make mutation`, sort a mutant's tests by mutmut's measured durations, so with -x a killed mutant stops
    at its cheapest failing test. mutmut's fork runner orders them so; its forkserver runner, which pyproject's
    [tool.mutmut] needs, passes them in set order, and a mutant paid for its slowest tests before its fastest."""
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    durations = json.loads(Path("mutmut-stats.json").read_text())["duration_by_test"]  # mutmut runs in ./mutants
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))
