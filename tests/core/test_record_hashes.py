"""Content hashes of records survive additive schema changes: an optional field nobody uses changes no version."""
from __future__ import annotations

from pydantic import Field

from evalsuite.core.hashing import json_sha256
from evalsuite.core.records import Record


class Before(Record):
    name: str
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


class After(Before):
    added: list[str] = Field(default_factory=list)  # a field a later version of the schema introduces
    extra: dict[str, int] = Field(default_factory=dict)


def test_an_unused_optional_field_leaves_the_hash_unchanged():
    after, before = After(name="a", tags=["x"]), Before(name="a", tags=["x"])
    assert json_sha256(after.hashed_form()) == json_sha256(before.hashed_form())


def test_a_used_optional_field_changes_the_hash():
    assert json_sha256(After(name="a", added=["y"]).hashed_form()) != json_sha256(Before(name="a").hashed_form())


def test_empty_values_are_dropped_at_every_level_but_list_items_keep_their_place():
    nested = After(name="a", tags=["", "b"], extra={}).hashed_form()
    assert nested == {"name": "a", "tags": ["", "b"]}
