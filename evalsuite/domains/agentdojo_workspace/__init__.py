"""AgentDojo workspace as an evalsuite domain: the peer's inbox, calendar and cloud drive, its 24 tools and their
rendered outputs, written from the behaviour of the pinned package (agentdojo 0.1.35), never from its code."""
from __future__ import annotations

from evalsuite.domains.agentdojo_workspace import checks  # noqa: F401  (registers the domain's checks)
from evalsuite.domains.agentdojo_workspace.environment import (
    WorkspaceEnvironment,
    from_rows,
    load_environment,
    to_rows,
)
from evalsuite.domains.agentdojo_workspace.tools import DOMAIN, ROLE
from evalsuite.domains.package import DomainPackage

PACKAGE = DomainPackage(domain=DOMAIN)

__all__ = ["DOMAIN", "PACKAGE", "ROLE", "WorkspaceEnvironment", "from_rows", "load_environment", "to_rows"]
