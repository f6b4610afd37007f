"""Code versions of the stages, computed from the library modules each stage really imports.

A stage's code version hashes the source of every `evalsuite` module reachable
from the stage's own module through its imports (top-level and inside
functions), plus the code of the suite's domain when the stage looks a domain
up (wherever it is installed: a bundled package's modules, a plugin package's
files, a declarative domain's file), plus the spec settings the stage reads. Editing a module
marks exactly the stages that run it as stale in the UI; nothing is listed by hand.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from evalsuite.core.domain_refs import Location
from evalsuite.core.hashing import file_sha256, json_sha256

LIBRARY = Path(__file__).resolve().parent.parent  # the evalsuite package folder
REGISTRY = "evalsuite.domains.registry"  # where domains are looked up: the spec's domain joins the closure
LOOKUPS = {"resolve", "lookup", "domain_of"}  # the registry's lookups
STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)  # what a statement body holds (an import is one)


@lru_cache(maxsize=None)
def module_file(name: str) -> Path | None:
    """The source file of an evalsuite module or package, or None if there is no such module (once per process, as
    module_digest: a code location that reloads after an edit does so in a new process)."""
    parts = name.split(".")
    if parts[0] != "evalsuite":
        return None
    rel = Path(*parts[1:])
    module = (LIBRARY / rel).with_name(f"{parts[-1]}.py") if parts[1:] else None
    for candidate in (module, LIBRARY / rel / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def _import_statements(name: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every import statement of a module, wherever it stands. Imports are statements, so only statement bodies are
    searched, not expressions: a tenth of the nodes of a full ast.walk, which the location pays for every module."""
    path = module_file(name)
    if path is None:
        return ()
    found, todo = [], list(ast.parse(path.read_text(), str(path)).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo += [n for n in getattr(node, field, ()) if isinstance(n, STATEMENTS)]
    return tuple(found)


@lru_cache(maxsize=None)
def imported_modules(name: str) -> frozenset[str]:
    """The evalsuite modules one module imports directly, wherever in the module the import stands."""
    found: set[str] = set()
    for node in _import_statements(name):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}  # `from pkg import module`
    mods = {m for m in found if m.split(".")[0] == "evalsuite" and module_file(m)}
    # importing a.b.c runs a/__init__ and a/b/__init__ too
    return frozenset(mods | {".".join(m.split(".")[:i]) for m in mods for i in range(2, m.count(".") + 1)})


@lru_cache(maxsize=None)
def looks_up_domains(name: str) -> bool:
    """Whether a module imports one of the registry's lookups (so runs whichever domain a spec names)."""
    for node in _import_statements(name):
        if isinstance(node, ast.ImportFrom) and node.module == REGISTRY and {a.name for a in node.names} & LOOKUPS:
            return True
        if isinstance(node, ast.Import) and any(a.name == REGISTRY for a in node.names):
            return True
    return False


def with_domain(mods: set[str], domain: Location | None) -> set[str]:
    """The modules plus a bundled domain's modules, when any of them looks a domain up."""
    if domain and domain.module and domain.module.startswith("evalsuite.") and any(map(looks_up_domains, mods)):
        return mods | closure([domain.module])
    return mods


def outside_files(mods: set[str], domain: Location | None) -> dict[str, str]:
    """The hashes of a domain's files outside the library (a plugin package, a declarative file), by path, when any
    of the modules looks a domain up."""
    if domain is None or (domain.module or "").startswith("evalsuite.") or not any(map(looks_up_domains, mods)):
        return {}
    return {str(p): file_sha256(p) for p in domain.files()}


def closure(roots: list[str]) -> set[str]:
    """Every evalsuite module reachable from the roots through imports."""
    return set(_closure(tuple(sorted(roots))))


@lru_cache(maxsize=None)
def _closure(roots: tuple[str, ...]) -> frozenset[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        m = todo.pop()
        if m not in seen and module_file(m):
            seen.add(m)
            todo += imported_modules(m)
    return frozenset(seen)


def source_digest(modules: set[str]) -> dict[str, str]:
    return {m: module_digest(m) for m in sorted(modules)}


@lru_cache(maxsize=None)
def module_digest(name: str) -> str:
    """A module's source hash, once per process: every stage's closure shares most modules, and a code location
    that reloads after an edit does so in a new process."""
    return file_sha256(module_file(name))


def code_version(module: str, domain: Location | None, config: object = None) -> str:
    """A short hash of the code a stage module runs (and the domain's, if it looks domains up) and its config."""
    stage = closure([module])
    code = {"code": source_digest(with_domain(stage, domain)), "config": config}
    if outside := outside_files(stage, domain):
        code["domain"] = outside
    return json_sha256(code)[:16]

