"""The de-identification rule set: per-column rule models, loading them from YAML, and checking they fit the tables."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import load_yaml_model

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_KEY_ENV = "EVALSUITE_DEID_KEY"


class DeidError(ValueError):
    """Rules that do not fit the tables, or a value a rule cannot transform."""


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PseudonymRule(_Rule):
    """Keyed token: prefix + first `length` hex chars of HMAC-SHA256(key, value)."""

    rule: Literal["pseudonym"]
    prefix: str = ""
    length: int = Field(default=16, ge=8, le=64)


SurrogateKind = Literal[
    "name", "first_name", "last_name", "email", "phone", "company", "street_address", "iban", "bank_account"
]


class SurrogateRule(_Rule):
    """A realistic fake value, seeded from the keyed token of the original value."""

    rule: Literal["surrogate"]
    kind: SurrogateKind
    locale: str = "en_US"


class DateShiftRule(_Rule):
    """Shift dates by a keyed per-entity number of days in [-max_days, max_days]."""

    rule: Literal["date_shift"]
    entity_column: str
    max_days: int = Field(default=30, ge=1, le=3650)


class GeneraliseRule(_Rule):
    """Coarsen a value: its first `length` characters (zip 94107 -> 941), or a date's month/year."""

    rule: Literal["generalise"]
    to: Literal["prefix", "month", "year"]
    length: int = Field(default=3, ge=1)


class DropRule(_Rule):
    rule: Literal["drop"]


class KeepRule(_Rule):
    """An explicit, reviewed decision that the column may stay as it is."""

    rule: Literal["keep"]


ColumnRule = Annotated[
    Union[PseudonymRule, SurrogateRule, DateShiftRule, GeneraliseRule, DropRule, KeepRule],
    Field(discriminator="rule"),
]
# Rules whose original values must never reappear anywhere in the output.
HIDING_RULES = frozenset({"pseudonym", "surrogate", "generalise", "drop"})


class TableRules(_Rule):
    columns: dict[str, ColumnRule] = Field(default_factory=dict)
    free_text: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _free_text_not_ruled(self) -> TableRules:
        both = sorted(set(self.free_text) & set(self.columns))
        if both:
            raise ValueError(f"columns {both} are both free_text and ruled; choose one")
        return self


class DeidRules(_Rule):
    """Per table, per column rules plus the free-text columns to scrub."""

    key_env: str = DEFAULT_KEY_ENV
    key_file: Path | None = None
    tables: dict[str, TableRules]

    @property
    def needs_key(self) -> bool:
        """Whether any rule draws on the key: pseudonyms, surrogates and date shifts are keyed, and so is free-text
        scrubbing (its replacements are surrogates); keep, drop and generalise are not."""
        keyed = {"pseudonym", "surrogate", "date_shift"}
        return any(t.free_text or any(r.rule in keyed for r in t.columns.values()) for t in self.tables.values())

    def ruled_columns(self) -> set[str]:
        """Every ruled column as 'table.column' (what the rights review asks for)."""
        return {f"{t}.{c}" for t, tr in self.tables.items() for c in tr.columns}

    def sha256(self) -> str:
        return json_sha256(self.model_dump(mode="json"))


def load_rules(path: str | Path) -> DeidRules:
    """Read rules from YAML; errors name the file and the field path on one line."""
    return load_yaml_model(path, DeidRules, error=DeidError)


def check_rules(tables: Mapping[str, pd.DataFrame], rules: DeidRules) -> None:
    """Every table and column the rules name (date-shift entities included) is present."""
    for name, trules in sorted(rules.tables.items()):
        if name not in tables:
            raise DeidError(f"rules name table {name!r}, which is not among the tables {sorted(tables)}")
        present = set(tables[name].columns)
        needed = list(trules.columns) + list(trules.free_text)
        needed += [r.entity_column for r in trules.columns.values() if isinstance(r, DateShiftRule)]
        missing = sorted(set(needed) - present)
        if missing:
            raise DeidError(f"rules for table {name!r} name missing columns {missing}")
