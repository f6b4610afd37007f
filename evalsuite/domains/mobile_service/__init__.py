"""Mobile service (after the τ²-bench paper's telecom domain): a carrier agent and a customer who holds their own
phone.

Dual control: the agent's tools act on the carrier's records; the customer's phone is a second, user-side
world (user_domain) whose tools only the user runs, when the agent asks. Tasks are composed from verified
subtasks (generate) rather than derived from resolved cases.
"""
from evalsuite.domains.mobile_service.generate import generate
from evalsuite.domains.mobile_service.tools import DOMAIN
from evalsuite.domains.mobile_service.user_tools import USER_DOMAIN
from evalsuite.domains.package import DomainPackage

PACKAGE = DomainPackage(domain=DOMAIN, user_domain=USER_DOMAIN, generate=generate)

__all__ = ["DOMAIN", "PACKAGE", "USER_DOMAIN"]
