"""Rights review: may these supplier records become a test world at all?

Every source comes with a rights manifest (YAML) saying who licensed it, for
which uses, until when, which of its columns hold personal data and which only
look personal but are synthetic. The review
blocks a build when a manifest is missing, the license has expired, a needed use
is not granted, or a personal column has no de-identification rule. A manifest
must state its expiry: a date, or `expires: null` for a license that does not
expire (an open-source license); one that says nothing is refused, since silence
is not a perpetual grant. The decision records each license's expiry as stated
and the sha256 of each manifest it relied on, so a built world can be traced
back to the exact rights it was cleared under.
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_serializer,
    model_validator,
)

from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import load_yaml_model

Use = Literal["build_environments", "derive_tasks", "redistribute", "train"]
USES: frozenset[str] = frozenset(get_args(Use))

# "table.column": exactly one dot, both parts non-empty, so a typo cannot pass as a column.
ColumnRef = Annotated[str, StringConstraints(pattern=r"^[^.\s]+\.[^.\s]+$")]


class RightsError(ValueError):
    """A manifest that cannot be read or does not validate; the message is one line."""


class RightsManifest(BaseModel):
    """What the licensor granted for one source."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1)
    license_ref: str = Field(min_length=1)
    licensor: str = Field(min_length=1)
    permitted_uses: set[Use]
    expires: date | None  # required: a date, or null for a license that does not expire
    personal_data: bool
    personal_columns: list[ColumnRef] = Field(default_factory=list)
    # Columns that look personal but hold made-up values (a public benchmark's generated users): named one by
    # one, so that the personal-data scan lets them through and a blanket `personal_data: false` clears nothing.
    synthetic_columns: list[ColumnRef] = Field(default_factory=list)
    deidentification_required: bool

    @model_validator(mode="after")
    def _consistent(self) -> RightsManifest:
        # Listing personal columns while denying personal data is a contradiction the
        # licensor must resolve; guessing either way could clear personal data unreviewed.
        if self.personal_columns and not self.personal_data:
            raise ValueError("personal_columns listed but personal_data is false")
        both = sorted(set(self.personal_columns) & set(self.synthetic_columns))
        if both:
            raise ValueError(f"columns {both} are listed both as personal and as synthetic")
        return self

    @field_serializer("permitted_uses")
    def _sorted_uses(self, uses: set[str]) -> list[str]:
        # Sets have no order; sorting keeps the manifest hash stable across runs.
        return sorted(uses)

    def sha256(self) -> str:
        """Hash of the canonical JSON form (sorted keys, sorted uses). An empty synthetic_columns is left out, so a
        manifest that does not use it keeps the hash (and the release versions) it had before the field existed."""
        exclude = None if self.synthetic_columns else {"synthetic_columns"}
        return json_sha256(self.model_dump(mode="json", exclude=exclude))


class RightsDecision(BaseModel):
    """Outcome of a review: blocked if any reason was found."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["cleared", "blocked"]
    reasons: list[str] = Field(default_factory=list)
    needed_uses: list[str]
    reviewed_on: date
    manifest_sha256: dict[str, str] = Field(default_factory=dict)
    expires: dict[str, date | None] = Field(default_factory=dict)  # per source as its manifest states; null: never

    @property
    def cleared(self) -> bool:
        return self.status == "cleared"


def load_manifest(path: str | Path) -> RightsManifest:
    """Read and validate one manifest; any problem becomes a one-line RightsError."""
    return load_yaml_model(path, RightsManifest, RightsError)


def _manifest_reasons(
    name: str, manifest: RightsManifest, needed_uses: set[str], ruled: set[str], today: date
) -> list[str]:
    reasons: list[str] = []
    if manifest.source != name:
        reasons.append(f"{name}: manifest is for source {manifest.source!r}")
    # A license is valid through its expiry date and lapses the day after.
    if manifest.expires is not None and manifest.expires < today:
        reasons.append(f"{name}: expired license on {manifest.expires.isoformat()}")
    for use in sorted(needed_uses - manifest.permitted_uses):
        reasons.append(f"{name}: use {use} not permitted")
    for column in manifest.personal_columns:
        if column not in ruled:
            reasons.append(f"{name}: personal column {column} without a de-identification rule")
    if manifest.deidentification_required and not manifest.personal_columns:
        reasons.append(f"{name}: de-identification required but no personal columns listed")
    return reasons


def review(
    manifests: Mapping[str, RightsManifest | None],
    needed_uses: set[str],
    deid_rules_columns: set[str],
    today: date,
) -> RightsDecision:
    """Clear or block a build; `deid_rules_columns` are the ruled columns as 'table.column'."""
    unknown = set(needed_uses) - USES
    if unknown:
        raise ValueError(f"unknown uses {sorted(unknown)}; known: {sorted(USES)}")
    reasons: list[str] = []
    hashes: dict[str, str] = {}
    expires: dict[str, date | None] = {}
    for name in sorted(manifests):
        manifest = manifests[name]
        if manifest is None:
            reasons.append(f"{name}: missing manifest")
            continue
        hashes[name] = manifest.sha256()
        expires[name] = manifest.expires
        reasons += _manifest_reasons(name, manifest, set(needed_uses), set(deid_rules_columns), today)
    return RightsDecision(
        status="blocked" if reasons else "cleared",
        reasons=reasons,
        needed_uses=sorted(needed_uses),
        reviewed_on=today,
        manifest_sha256=hashes,
        expires=expires,
    )
