"""Contract review: an agent reviews an authored NDA, its amendments and exhibits against a versioned playbook and
submits a structured memo, graded by coverage, source identity, quotation identity and conclusions."""
from evalsuite.domains.contract_review import checks as _checks  # noqa: F401  (registers the domain checks)
from evalsuite.domains.contract_review.tools import DOMAIN, ROLE
from evalsuite.domains.package import DomainPackage

PACKAGE = DomainPackage(domain=DOMAIN)

__all__ = ["DOMAIN", "PACKAGE", "ROLE"]
