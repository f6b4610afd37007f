"""Decision briefs (research): an analyst searches and opens a catalogue of sources (some unavailable, some
contradicting each other on a figure) and submits one brief: a decision under the research policy's rule, claims
with verbatim quotations of opened sources, the conflicts between sources and the questions left unknown. Graded by
program, each part its own check."""
from evalsuite.domains.decision_brief import checks as _checks  # noqa: F401  (registers the domain checks)
from evalsuite.domains.decision_brief.derive import derive_tasks
from evalsuite.domains.decision_brief.tools import DOMAIN, ROLE
from evalsuite.domains.package import DomainPackage

PACKAGE = DomainPackage(domain=DOMAIN, derive=derive_tasks)

__all__ = ["DOMAIN", "PACKAGE", "ROLE"]
