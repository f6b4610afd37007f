"""τ²-bench telecom as an evalsuite domain: dual control, from TOOLS_SPEC.md only.

Two worlds: the carrier's records (DOMAIN, 13 agent tools, tables from db.toml)
and the customer's phone with its surroundings (USER_DOMAIN, 30 user tools,
tables from user_db.toml). LINK is tau2's sync step, run after every
successful call on either world; the set-up and grading helpers tasks call are
registered with `Domain.helper`, the assertions also as domain checks.
TAU2_HASH gives tau2's two DB hashes of a state; replay runs a tasks.json
record (initialization, gold actions live, env assertions).

One deliberate departure: tau2's `break_vpn` makes a process-wide default VPN
details object poor, so after any bad-VPN task every later `connect_vpn` in
that process connects a poor VPN (TOOLS_SPEC.md §15). Here each `connect_vpn`
connects fresh default details (performance excellent), as a fresh tau2
process does; `break_vpn` makes only the VPN it connects poor.
"""
from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalsuite.domains.package import DomainPackage
from evalsuite.domains.tau2.tools import tool_message
from evalsuite.domains.tau2_telecom import helpers, phone_helpers  # noqa: F401 - registers the helpers and checks
from evalsuite.domains.tau2_telecom.convert import from_nested, to_nested
from evalsuite.domains.tau2_telecom.link import LINK
from evalsuite.domains.tau2_telecom.phone_convert import user_from_nested, user_to_nested
from evalsuite.domains.tau2_telecom.task_run import TaskRun, run_task
from evalsuite.domains.tau2_telecom.tau2_hash import TAU2_HASH
from evalsuite.domains.tau2_telecom.tools import DOMAIN, ROLE
from evalsuite.domains.tau2_telecom.user_tools import USER_DOMAIN
from evalsuite.worlds.world import World

PACKAGE = DomainPackage(domain=DOMAIN, user_domain=USER_DOMAIN, link=LINK)

__all__ = ["DOMAIN", "LINK", "PACKAGE", "ROLE", "TAU2_HASH", "USER_DOMAIN", "TaskRun", "build_worlds", "from_nested",
           "from_toml", "run_task", "to_nested", "tool_message", "user_from_nested", "user_to_nested"]


def from_toml(path: str | Path) -> dict[str, Any]:
    """A parsed TOML file (db.toml or user_db.toml), as tau2 reads it."""
    with open(path, "rb") as f:
        return tomllib.load(f)


def build_worlds(db: Mapping[str, Any], user_db: Mapping[str, Any], path: str | Path) -> tuple[World, World]:
    """The world file at `path` (the carrier's tables and the phone's), opened as the agent's world and the
    phone's, as a trial opens them."""
    agent = World.build(DOMAIN, {**from_nested(db), **user_from_nested(user_db)}, path)
    return agent, World(USER_DOMAIN, agent.path)
