"""How the peer turns a tool's return value into the text the model reads (SPEC.md §2.4)."""
from __future__ import annotations

from typing import Any

import yaml


def render(value: Any) -> str:
    """A list (of transaction maps): PyYAML safe_dump with sorted keys, stripped; a string as it is; a float as
    Python float text; a dict as Python's repr of it."""
    if isinstance(value, list):
        return yaml.safe_dump(value).strip()
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return str(value)
    raise TypeError(f"no rendering of a {type(value).__name__} result")
