"""τ²-bench retail as an evalsuite domain: tau2's tables, tools and DB hash, from TOOLS_SPEC.md only."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalsuite.domains.package import DomainPackage
from evalsuite.domains.tau2.tools import tool_message
from evalsuite.domains.tau2_retail.convert import from_nested, to_nested
from evalsuite.domains.tau2_retail.tau2_hash import TAU2_HASH
from evalsuite.domains.tau2_retail.tools import DOMAIN, ROLE
from evalsuite.worlds.world import World

PACKAGE = DomainPackage(domain=DOMAIN)

__all__ = ["DOMAIN", "PACKAGE", "ROLE", "TAU2_HASH", "build_world", "from_nested", "to_nested", "tool_message"]


def build_world(db: Mapping[str, Any], path: str | Path) -> World:
    """The world file of a nested tau2 DB (db.json shape), built and opened."""
    return World.build(DOMAIN, from_nested(db), path)
