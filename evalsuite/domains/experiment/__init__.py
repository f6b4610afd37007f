"""Experiments: an analyst runs a registered protocol's analysis on a controlled dataset inside the sealed boundary
and submits the estimate, interval, conclusion and code, graded by rerunning the code (same data, resampled
data), the reference within tolerance, the protocol's decision rule and the analysis the protocol fixed."""
from evalsuite.domains.experiment import checks as _checks  # noqa: F401  (registers the domain checks)
from evalsuite.domains.experiment.derive import derive_tasks
from evalsuite.domains.experiment.tools import DOMAIN, ROLE
from evalsuite.domains.package import DomainPackage

PACKAGE = DomainPackage(domain=DOMAIN, derive=derive_tasks)

__all__ = ["DOMAIN", "PACKAGE", "ROLE"]
