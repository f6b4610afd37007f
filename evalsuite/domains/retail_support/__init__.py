"""Retail support under faults: the τ²-bench retail world plus authored support controls, after the support case
of the environment-design guide (shared reference on choosing and checking business environments).

Tables copy tau2_retail's and add authored ones (schema.py); tools reuse tau2's reads as they are and add
authority-enforcing support writes (tools.py); obligations are domain checks on the ledger and trace (checks.py);
the tasks and their seed rows are authored in tasks.py / seed.py and shipped in suites/retail_support/; its
customizations (customize.py) move a task to the outcome a dossier customization declares; its fixed rules
(workflow.py) are the simpler alternative to an agent, over the same tools.
"""
from __future__ import annotations

from pathlib import Path

from evalsuite.domains.package import DomainPackage, FixedRules
from evalsuite.domains.retail_support import (
    checks,  # noqa: F401 - registers the domain checks
    fixed_rules,
)
from evalsuite.domains.retail_support.customize import CUSTOMIZE
from evalsuite.domains.retail_support.seed import tables
from evalsuite.domains.retail_support.tools import DOMAIN, ROLE
from evalsuite.worlds.world import World

PACKAGE = DomainPackage(domain=DOMAIN, customize=CUSTOMIZE, fixed_rules=FixedRules(
    decisions=fixed_rules.DECISIONS, gather=fixed_rules.gather, decide=fixed_rules.decide, act=fixed_rules.act))

__all__ = ["DOMAIN", "PACKAGE", "ROLE", "build_world", "open_or_build_world"]


def build_world(path: str | Path, tau2_source: str | Path) -> World:
    """The world file from tau2's Parquet exports (a folder) and the authored rows, built and opened."""
    return World.build(DOMAIN, tables(tau2_source), path)


def open_or_build_world(path: str | Path, tau2_source: str | Path) -> World:
    """The world at `path`, built first if absent (tests share one file; a build replaces it in one step)."""
    return World(DOMAIN, path) if Path(path).is_file() else build_world(path, tau2_source)
