"""AgentDojo banking as an evalsuite domain: the peer's environment, its eleven tools and their rendered outputs,
written from SPEC.md (its behavioural specification) only."""
from __future__ import annotations

from pathlib import Path

from evalsuite.domains.agentdojo_banking import checks  # noqa: F401  (registers the domain's checks)
from evalsuite.domains.agentdojo_banking.environment import BankingEnvironment, from_rows, load_environment, to_rows
from evalsuite.domains.agentdojo_banking.tools import DOMAIN, ROLE
from evalsuite.domains.package import DomainPackage
from evalsuite.worlds.world import World

PACKAGE = DomainPackage(domain=DOMAIN)

__all__ = ["DOMAIN", "PACKAGE", "ROLE", "BankingEnvironment", "build_world", "from_rows", "load_environment"]


def build_world(env: BankingEnvironment, path: str | Path) -> World:
    """The world file of an environment, built and opened."""
    return World.build(DOMAIN, to_rows(env), path)
