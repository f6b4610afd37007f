"""Accounts-payable exceptions: blocked invoices an AP clerk agent must hold, route or release."""
from evalsuite.domains.ap_exceptions.derive import derive_tasks
from evalsuite.domains.ap_exceptions.tools import DOMAIN
from evalsuite.domains.package import DomainPackage

PACKAGE = DomainPackage(domain=DOMAIN, derive=derive_tasks)

__all__ = ["DOMAIN", "PACKAGE"]
