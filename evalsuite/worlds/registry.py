"""The domain registry: a domain package looked up by name and imported only when asked for."""
from __future__ import annotations

import importlib

from evalsuite.worlds.domain import Domain

KNOWN = {"ap_exceptions": "evalsuite.domains.ap_exceptions", "tau2_retail": "evalsuite.domains.tau2_retail"}


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
