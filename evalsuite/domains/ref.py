"""A reference to a world that another process can reopen: domain name (and where the domain is found), file,
recorded seed hash."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evalsuite.domains.registry import lookup
from evalsuite.worlds.world import World


class WorldRef(BaseModel):
    """Enough to reopen a world in another process: domain name, SQLite path, recorded seed hash, and the domain's
    source where its name alone does not find it (a declarative file or a dotted module path: registry.lookup)."""

    model_config = ConfigDict(frozen=True)

    domain: str
    path: str
    seed_sha256: str
    source: str | None = None

    @classmethod
    def from_world(cls, world: World, source: str | None = None) -> WorldRef:
        return cls(domain=world.domain.name, path=str(Path(world.path).resolve()), seed_sha256=world.seed_sha256,
                   source=source)

    def open(self) -> World:
        return World(lookup(self.domain, self.source).domain, self.path, seed_sha256=self.seed_sha256)
