"""Where a domain reference points, found without importing the domain: an installed entry point, a declarative
domain file, or a dotted module path (evalsuite.domains.registry loads what this finds). Kept below every layer so
a spec's loader can refuse an unknown domain before any stage runs, and code versions can follow a domain's files
wherever it is installed."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Literal

GROUP = "evalsuite.domains"
ATTRIBUTE = "PACKAGE"  # a dotted module path without `:ATTRIBUTE` names the module's PACKAGE
HOW = (f"a domain is an entry point in the group {GROUP!r} of an installed package, a domain file ending in "
       ".yaml, or a dotted module path (docs/domains/index.md)")


class UnknownDomainError(LookupError):
    """A domain reference that names no domain; the message is one line saying what is known and how to add one."""

    def __str__(self) -> str:  # KeyError-style quoting would wrap the line in quotes
        return str(self.args[0])


@dataclass(frozen=True)
class Location:
    """Where a domain is: `ref` is how another process finds it again (an entry point's name, a file's absolute
    path, a dotted path); `target` is `module:attribute`, or the file."""

    ref: str
    kind: Literal["entry_point", "file", "module"]
    target: str

    @property
    def module(self) -> str | None:
        return None if self.kind == "file" else self.target.partition(":")[0]

    def files(self) -> list[Path]:
        """The files that are the domain's code, found without importing it: the declarative file, or every Python
        file of the module's package."""
        if self.kind == "file":
            return [Path(self.target)]
        spec = importlib.util.find_spec(self.module)
        if spec is None or spec.origin is None:
            raise UnknownDomainError(f"domain {self.ref!r}: module {self.module} not found; {HOW}")
        if spec.submodule_search_locations:
            return sorted(p for d in spec.submodule_search_locations for p in Path(d).rglob("*.py")
                          if "__pycache__" not in p.parts)
        return [Path(spec.origin)]


@cache
def _entry_points() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


def installed() -> list[str]:
    """The names of the installed domains (entry points in GROUP)."""
    return sorted(_entry_points())


def is_file_ref(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml"))


def locate(ref: str, base: str | Path | None = None) -> Location:
    """Where the reference points, checked to exist; UnknownDomainError otherwise. Imports nothing of the domain."""
    if is_file_ref(ref):
        path = Path(ref) if base is None else Path(base) / ref
        if not path.is_file():
            raise UnknownDomainError(f"domain file not found: {path}")
        return Location(ref=str(path.resolve()), kind="file", target=str(path.resolve()))
    if ref in _entry_points():
        return Location(ref=ref, kind="entry_point", target=_entry_points()[ref])
    module, _, attr = ref.partition(":")
    if "." in module and module.replace(".", "").replace("_", "").isalnum():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a parent package that is not there
            found = False
        if found:
            return Location(ref=ref, kind="module", target=f"{module}:{attr or ATTRIBUTE}")
    raise UnknownDomainError(f"unknown domain {ref!r}; installed: {', '.join(installed())}; {HOW}")
