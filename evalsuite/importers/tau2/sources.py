"""What differs between the τ²-bench domains the tau2 importer reads: one `Tau2Source` per domain.

Everything else (the pinned-snapshot check, the Parquet seed, the rights
record, the versioned policy, the gold replay that derives each goal state,
the report) is the importer's own and the same for every domain.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlalchemy import Boolean, Column, Float, Integer

from evalsuite.core.records import Role, Simulator
from evalsuite.domains import tau2_airline, tau2_retail
from evalsuite.domains.tau2.tau2_hash import Tau2Hash
from evalsuite.importers.suite_folder import IMPORTED_USES
from evalsuite.sourcing.rights import RightsManifest
from evalsuite.worlds.domain import Domain

SOURCE_COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"  # sierra-research/tau2-bench HEAD, 2026-08-18
LICENSE_REF = "MIT (Copyright (c) 2025 Sierra Research; LICENSE)"
SIMULATOR = Simulator(model="gpt-4.1-2025-04-14", version="tau2-bench user simulator @a2c02472", temperature=0.0)
_ARROW = {Integer: pa.int64(), Float: pa.float64(), Boolean: pa.bool_()}


def arrow_type(column: Column, overrides: Mapping[str, pa.DataType] = {}) -> pa.DataType:  # noqa: B006 - read only
    """The Parquet type of a column: by its SQL type (`overrides` by column name); JSON columns are text already."""
    if column.name in overrides:
        return overrides[column.name]
    return next((t for k, t in _ARROW.items() if isinstance(column.type, k)), pa.string())


@dataclass(frozen=True)
class Tau2Source:
    """One τ²-bench domain as the importer reads it (data/tau2/domains/<upstream>/ at SOURCE_COMMIT)."""

    suite: str
    upstream: str
    domain: Domain
    role: Role
    tau2_hash: Tau2Hash
    from_nested: Callable[[Mapping[str, Any]], dict[str, list[dict[str, Any]]]]
    to_nested: Callable[[Mapping[str, Any]], dict[str, Any]]  # rows -> db.json form
    pinned_sha256: Mapping[str, str]  # README.md of the third-party folder
    policy_effective_from: dt.date
    policy_note: str  # why that date
    section_of_tool: Mapping[str, str]  # write tool -> the policy section (title) that governs it
    information_section: str  # the section a fact the agent must communicate falls under
    intent_of_tool: Mapping[str, str]  # write tool -> the task category it marks
    synthetic_columns: tuple[str, ...]  # generated people that look personal: the manifest names them
    rights_header: str
    # column name -> Parquet type where the SQL type says little
    arrow_overrides: Mapping[str, pa.DataType] = field(default_factory=dict)
    simulator: Simulator = field(default_factory=lambda: SIMULATOR)
    version: str = "1.0.0"

    @property
    def source_ref(self) -> str:
        return f"sierra-research/tau2-bench@{SOURCE_COMMIT}:data/tau2/domains/{self.upstream}/tasks.json"

    @property
    def manifest(self) -> RightsManifest:
        return RightsManifest(source=self.suite, license_ref=LICENSE_REF, licensor="Sierra Research",
                              permitted_uses=IMPORTED_USES, expires=None, personal_data=False,
                              deidentification_required=False, synthetic_columns=list(self.synthetic_columns))

    def arrow_type(self, column: Column) -> pa.DataType:
        return arrow_type(column, self.arrow_overrides)


RETAIL = Tau2Source(
    suite="tau2_retail", upstream="retail", domain=tau2_retail.DOMAIN, role=tau2_retail.ROLE,
    tau2_hash=tau2_retail.TAU2_HASH, from_nested=tau2_retail.from_nested, to_nested=tau2_retail.to_nested,
    pinned_sha256={
        "db.json": "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
        "tasks.json": "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
        "split_tasks.json": "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
        "policy.md": "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
        "LICENSE": "e67c5aa0074dfcaefd3c3a1aedb94cb539234aecd15d5a972574e3200e6252fe",
    },
    policy_effective_from=dt.date(2026, 8, 18), policy_note="",  # the upstream HEAD the snapshot was taken from
    section_of_tool={
        "modify_user_address": "General",
        "cancel_pending_order": "Cancel pending order",
        "modify_pending_order_address": "Modify pending order",
        "modify_pending_order_payment": "Modify pending order / Modify payment",
        "modify_pending_order_items": "Modify pending order / Modify items",
        "return_delivered_order_items": "Return delivered order",
        "exchange_delivered_order_items": "Exchange delivered order",
    },
    # "provide information about their own profile, orders, and related products"
    information_section="General",
    intent_of_tool={
        "modify_user_address": "modify_user_address", "cancel_pending_order": "cancel",
        "modify_pending_order_address": "modify_order_address", "modify_pending_order_payment": "modify_payment",
        "modify_pending_order_items": "modify_items", "return_delivered_order_items": "return",
        "exchange_delivered_order_items": "exchange",
    },
    synthetic_columns=("users.first_name", "users.last_name", "users.email", "users.address1", "users.address2",
                       "orders.address1", "orders.address2"),
    rights_header=("# tau2-bench retail data, MIT license: the full text is in LICENSE beside this file.\n"
                   "# No personal data: user names, emails and addresses in db.json are synthetic.\n"),
    # the int-or-float column is all null in the seed, so float64 loses nothing
    arrow_overrides={"exchange_price_difference": pa.float64()},
)

AIRLINE = Tau2Source(
    suite="tau2_airline", upstream="airline", domain=tau2_airline.DOMAIN, role=tau2_airline.ROLE,
    tau2_hash=tau2_airline.TAU2_HASH, from_nested=tau2_airline.from_nested, to_nested=tau2_airline.to_nested,
    pinned_sha256={
        "db.json": "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
        "tasks.json": "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
        "split_tasks.json": "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
        "policy.md": "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
        "LICENSE": "e67c5aa0074dfcaefd3c3a1aedb94cb539234aecd15d5a972574e3200e6252fe",
    },
    policy_effective_from=tau2_airline.DOMAIN.clock.date(),
    policy_note=("in effect on the day it names as now (\"The current time is 2024-05-15 15:00:00 EST.\"), the "
                 "world clock of every trial; upstream it was last changed in 37199f36 (2025-06-10)"),
    section_of_tool={
        "book_reservation": "Book flight",
        "cancel_reservation": "Cancel flight",
        "update_reservation_flights": "Modify flight",
        "update_reservation_baggages": "Modify flight",
        "update_reservation_passengers": "Modify flight",
        "send_certificate": "Refunds and Compensation",
    },
    # "You should not provide any information, knowledge, or procedures not provided by the user or available tools"
    information_section="General",
    intent_of_tool={
        "book_reservation": "book", "cancel_reservation": "cancel", "update_reservation_flights": "modify_flights",
        "update_reservation_baggages": "modify_baggages", "update_reservation_passengers": "modify_passengers",
        "send_certificate": "compensate",
    },
    synthetic_columns=("users.first_name", "users.last_name", "users.email", "users.dob", "users.address1",
                       "users.address2", "saved_passengers.first_name", "saved_passengers.last_name",
                       "saved_passengers.dob", "passengers.first_name", "passengers.last_name", "passengers.dob"),
    rights_header=("# tau2-bench airline data, MIT license: the full text is in LICENSE beside this file.\n"
                   "# No personal data: user and passenger names, emails, addresses and birth dates in db.json are "
                   "synthetic.\n"),
    # exact cells (a tool may store any value): every seed value is an int
    arrow_overrides={"total_baggages": pa.int64(), "nonfree_baggages": pa.int64()},
)

SOURCES = {"retail": RETAIL, "airline": AIRLINE}
