"""Table shapes every tau2 domain's schema uses (the convention is in evalsuite.domains.tau2.rows).

A map of the source is a table keyed by its id with a `position` column; a list
owned by an entity is a table keyed by (owner id, position). Both are stored
WITHOUT ROWID (`CLUSTERED`), so a lookup by key or by owner is one B-tree
descent.
"""
from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Integer, MetaData, String, Table

from evalsuite.domains.tau2.rows import CLUSTERED

ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")


def mapped(metadata: MetaData, name: str, key: str, *columns: Column) -> Table:
    """A map of the source: keyed by `key`, its db.json order kept in `position`."""
    return Table(name, metadata, Column(key, String, primary_key=True), Column("position", Integer, nullable=False),
                 *columns, **CLUSTERED)


def owned(metadata: MetaData, name: str, owner: str, *columns: Column) -> Table:
    """A list owned by an entity: rows keyed by (owner id, position); the owner's table is its id's plural."""
    owner_table = owner.removesuffix("_id") + "s"
    return Table(name, metadata, Column(owner, String, ForeignKey(f"{owner_table}.{owner}"), primary_key=True),
                 Column("position", Integer, primary_key=True), *columns, **CLUSTERED)


def required(*names: str, type_=String) -> list[Column]:
    """Non-null columns of one type, in the order given."""
    return [Column(n, type_, nullable=False) for n in names]
