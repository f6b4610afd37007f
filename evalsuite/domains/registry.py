"""Where a spec's `domain:` is found, the one way every process turns a domain's name into its DomainPackage.

A domain reference (evalsuite.core.domain_refs, which finds it) is one of:

- the name of an entry point in the group `evalsuite.domains` (the bundled domains register there through the
  project's own pyproject.toml; a team's plugin package registers through its own);
- a path to a declarative domain file ending in `.yaml`/`.yml` (relative to the spec that names it);
- a dotted module path, `package.module` or `package.module:ATTRIBUTE` (default attribute `PACKAGE`).

The target is a DomainPackage (or a bare Domain, which provides only its world). `locate` finds a reference
without importing anything, so code versions and a spec's checks cost no domain import; `resolve` loads it and
remembers it by name, so `lookup(task.domain)` finds it again in this process. A process that did not resolve it
(a worker, a later command) finds a plugin by its entry point, or by the source a release or world reference
records.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from evalsuite.core.domain_refs import Location, UnknownDomainError, installed, locate
from evalsuite.domains.package import DomainPackage
from evalsuite.worlds.domain import Domain

_LOADED: dict[str, DomainPackage] = {}  # by domain name, in this process
_BY_REF: dict[tuple, DomainPackage] = {}  # by (location ref, bound columns)


def resolve(ref: str, base: str | Path | None = None, columns: dict[str, list[str]] | None = None) -> DomainPackage:
    """The DomainPackage a reference names, loaded once per process and remembered by its name. `columns` binds a
    declarative domain's tables to its sources' columns (the spec's files; ignored for Python domains)."""
    loc = locate(ref, base)
    key = (loc.ref, tuple(sorted((t, tuple(c)) for t, c in (columns or {}).items())) if loc.kind == "file" else ())
    if key not in _BY_REF:
        _BY_REF[key] = _load(loc, columns)
    package = _BY_REF[key]
    _LOADED[package.name] = package
    return package


def _load(loc: Location, columns: dict[str, list[str]] | None) -> DomainPackage:
    if loc.kind == "file":
        from evalsuite.domains.declarative import load_domain_file

        return load_domain_file(Path(loc.target), columns)
    module, _, attr = loc.target.partition(":")
    value = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        value = getattr(value, part, None)
    if isinstance(value, Domain):
        return DomainPackage(domain=value)
    if not isinstance(value, DomainPackage):
        raise UnknownDomainError(f"domain {loc.ref!r}: {loc.target} is not a DomainPackage or a Domain "
                                 f"(found {type(value).__name__})")
    return value


def lookup(name: str, source: str | None = None) -> DomainPackage:
    """The domain of that name: loaded in this process, else resolved from `source` (what a release or a world
    reference records for a domain found by file or dotted path), else the entry point of that name."""
    if name in _LOADED:
        return _LOADED[name]
    package = resolve(source or name)
    if package.name != name:
        raise UnknownDomainError(f"domain {source or name!r} is named {package.name!r}, not {name!r}")
    return package


def package_of(domain: Domain) -> DomainPackage:
    """The package a Domain object in hand belongs to (its user side, link…): the loaded or installed one of its
    name whose world it is, else the Domain alone (a world built in code provides only itself)."""
    found = _LOADED.get(domain.name)
    if found is None and domain.name in installed():
        found = resolve(domain.name)
    return found if found is not None and found.domain is domain else DomainPackage(domain=domain)


def domain_of(name: str) -> Domain:
    """The world (tables, tools, roles, checks) of the domain of that name."""
    return lookup(name).domain

