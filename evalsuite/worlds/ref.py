"""A reference to a world that another process can reopen: domain name, file, recorded seed hash."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evalsuite.worlds.registry import get_domain
from evalsuite.worlds.world import World


class WorldRef(BaseModel):
    """Enough to reopen a world in another process: domain name, SQLite path, recorded seed hash."""

    model_config = ConfigDict(frozen=True)

    domain: str
    path: str
    seed_sha256: str

    @classmethod
    def from_world(cls, world: World) -> WorldRef:
        return cls(domain=world.domain.name, path=str(Path(world.path).resolve()), seed_sha256=world.seed_sha256)

    def open(self) -> World:
        return World(get_domain(self.domain), self.path, seed_sha256=self.seed_sha256)
