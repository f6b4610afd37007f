"""The domain registry: a domain package looked up by name and imported only when asked for."""
from __future__ import annotations

import importlib

from evalsuite.worlds.domain import Domain

KNOWN = {"ap_exceptions": "evalsuite.domains.ap_exceptions",
         "contract_review": "evalsuite.domains.contract_review",
         "agentdojo_banking": "evalsuite.domains.agentdojo_banking", "tau2_retail": "evalsuite.domains.tau2_retail",
         "tau2_airline": "evalsuite.domains.tau2_airline", "tau2_telecom": "evalsuite.domains.tau2_telecom",
         "retail_support": "evalsuite.domains.retail_support",
         "mobile_service": "evalsuite.domains.mobile_service"}


def get_domain(name: str) -> Domain:
    """The Domain object of a domain package (its module-level DOMAIN)."""
    if name not in KNOWN:
        raise KeyError(f"unknown domain {name!r}; known: {', '.join(sorted(KNOWN))}")
    return importlib.import_module(KNOWN[name]).DOMAIN


def get_deriver(name: str):
    """The domain's task derivation from resolved cases (its module-level DERIVE)."""
    module = importlib.import_module(KNOWN[name]) if name in KNOWN else None
    if module is None or not hasattr(module, "DERIVE"):
        raise KeyError(f"domain {name!r} derives no tasks from cases; give derivation.tasks in the spec")
    return module.DERIVE


def get_user_domain(name: str) -> Domain | None:
    """The user-side domain of a dual-control domain package (its module-level USER_DOMAIN: the tables and
    tools on the user's own device), or None where only the agent acts."""
    return getattr(importlib.import_module(KNOWN[name]), "USER_DOMAIN", None) if name in KNOWN else None


def get_link(name: str):
    """The link step of a dual-control domain package (its module-level LINK: `link(agent_ctx, user_ctx)`, run
    after every successful call on either world, e.g. τ²-bench telecom's sync of the line's state onto the
    phone), or None."""
    return getattr(importlib.import_module(KNOWN[name]), "LINK", None) if name in KNOWN else None
