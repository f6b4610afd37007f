"""What every domain's task derivation receives and returns.

A domain derives tasks from resolved cases with verified outcomes; the suite
build hands it the de-identified records, the policy documents and this
context, and gets back the tasks plus counts of what it skipped and why.
"""
from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from evalsuite.core.records import Deidentification, Environment, SuiteRef, TaskRecord, TrialProtocol
from evalsuite.sourcing.policies import PolicyDoc
from evalsuite.worlds.world import World


class DeriveContext(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    suite: SuiteRef
    environment: Environment
    seed: int
    splits: dict[str, float]
    protocol: TrialProtocol
    license_ref: str
    deidentification: Deidentification | None = None
    # the world just built from the de-identified snapshot: a derivation that replays recorded actions to find the
    # goal state (the declarative domain's) resets and acts on it; never part of a record
    world: World | None = Field(None, exclude=True)


class Derivation(BaseModel):
    tasks: list[TaskRecord]
    skipped: dict[str, int]


Deriver = Callable[[dict[str, list[dict]], list[PolicyDoc], DeriveContext], Derivation]


def truthy(value) -> bool:
    """Booleans as suppliers export them: True/False, 1/0, yes/no, t/f."""
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("true", "1", "yes", "t", "y"):
            return True
        if v in ("false", "0", "no", "f", "n", ""):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    return bool(value)
