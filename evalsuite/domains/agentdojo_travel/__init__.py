"""AgentDojo travel as an evalsuite domain: the peer's catalogue (hotels, restaurants, car rental companies,
flights), user, reservation, calendar and inbox, its 28 tools and their rendered outputs, written from the
behaviour of the pinned package (agentdojo 0.1.35), never from its code."""
from __future__ import annotations

from pathlib import Path

from evalsuite.domains.agentdojo_travel import checks  # noqa: F401  (registers the domain's checks)
from evalsuite.domains.agentdojo_travel.environment import TravelEnvironment, from_rows, load_environment, to_rows
from evalsuite.domains.agentdojo_travel.tools import DOMAIN, ROLE
from evalsuite.domains.package import DomainPackage
from evalsuite.worlds.world import World

PACKAGE = DomainPackage(domain=DOMAIN)

__all__ = ["DOMAIN", "PACKAGE", "ROLE", "TravelEnvironment", "build_world", "from_rows", "load_environment"]


def build_world(env: TravelEnvironment, path: str | Path) -> World:
    """The world file of an environment, built and opened."""
    return World.build(DOMAIN, to_rows(env), path)
