"""AgentDojo slack as an evalsuite domain: the peer's workspace and web, its eleven tools and their rendered
outputs, written from the behaviour of the pinned package (agentdojo 0.1.35), never from its code."""
from __future__ import annotations

from pathlib import Path

from evalsuite.domains.agentdojo_slack import checks  # noqa: F401  (registers the domain's checks)
from evalsuite.domains.agentdojo_slack.environment import SlackEnvironment, from_rows, load_environment, to_rows
from evalsuite.domains.agentdojo_slack.tools import DOMAIN, ROLE
from evalsuite.domains.package import DomainPackage
from evalsuite.worlds.world import World

PACKAGE = DomainPackage(domain=DOMAIN)

__all__ = ["DOMAIN", "PACKAGE", "ROLE", "SlackEnvironment", "build_world", "from_rows", "load_environment"]


def build_world(env: SlackEnvironment, path: str | Path) -> World:
    """The world file of an environment, built and opened."""
    return World.build(DOMAIN, to_rows(env), path)
