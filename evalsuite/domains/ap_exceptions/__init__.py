"""Accounts-payable exceptions: blocked invoices an AP clerk agent must hold, route or release."""
from evalsuite.domains.ap_exceptions.derive import derive_tasks as DERIVE
from evalsuite.domains.ap_exceptions.tools import DOMAIN

__all__ = ["DOMAIN", "DERIVE"]
