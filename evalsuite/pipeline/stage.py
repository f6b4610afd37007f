"""The pipeline's nouns: a stage, the gates that guard it, a gate's result and the error a blocking gate raises."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from evalsuite.pipeline.paths import Paths
    from evalsuite.sourcing.spec import SuiteSpec


class GateError(RuntimeError):
    """A gate blocked the build; `gate` names it, the message says why."""

    def __init__(self, gate: str, reason: str):
        super().__init__(f"gate {gate} blocked: {reason}")
        self.gate, self.reason = gate, reason


class GateResult(BaseModel):
    """One gate's result: passed, or failed blocking (ERROR) or failed within the allowed quarantine (WARN)."""

    gate: str
    passed: bool
    blocking: bool
    reason: str
    metadata: dict[str, Any] = {}


@dataclass
class StageOutput:
    """What a stage hands to its asset: the content hash that becomes the data version, and metadata for people."""

    data_version: str
    metadata: dict[str, Any] = field(default_factory=dict)


Decide = Callable[["SuiteSpec", "Paths"], GateResult]  # a gate's decision, from the records on disk


@dataclass(frozen=True)
class Gate:
    """A check that must pass before anything downstream of its stage may use the stage's output."""

    name: str
    stage: str
    decide: Decide
    description: str  # one sentence, shown in the UI, `evalsuite gates` and the README
    applies: Callable[["SuiteSpec"], bool] = lambda spec: True


@dataclass(frozen=True)
class Stage:
    """One build step: what it reads, what it writes, and the gates that guard its output."""

    name: str
    deps: tuple[str, ...]
    description: str
    kinds: frozenset[str]
    run: Callable[["SuiteSpec", "Paths"], StageOutput]
    module: str  # the module that runs it: its imports define the stage's code version
    # the spec settings and the suite's own files (in the home it is built in) that its result depends on
    config: Callable[["SuiteSpec", "Paths"], Any] = lambda spec, paths: None
    gates: tuple[Gate, ...] = ()
    applies: Callable[["SuiteSpec"], bool] = lambda spec: True  # a stage only some specs run (generation)


def passed(gate: str, reason: str, **metadata: Any) -> GateResult:
    return GateResult(gate=gate, passed=True, blocking=False, reason=reason, metadata=metadata)


def blocked(gate: str, reason: str, **metadata: Any) -> GateResult:
    return GateResult(gate=gate, passed=False, blocking=True, reason=reason, metadata=metadata)


def evaluate(gate: Gate, spec: SuiteSpec, paths: Paths) -> GateResult:
    """Decide one gate; a decision that raises is a blocking failure saying what went wrong, never a pass."""
    try:
        return gate.decide(spec, paths)
    except GateError as exc:
        return blocked(gate.name, exc.reason)
    except Exception as exc:  # a gate that cannot be evaluated must not pass
        return blocked(gate.name, f"cannot evaluate: {type(exc).__name__}: {exc}")


def require(stage: Stage, spec: SuiteSpec, paths: Paths) -> None:
    """Refuse to go on from a stage's output unless every gate of the stage that applies is not blocking."""
    for gate in stage.gates:
        if gate.applies(spec):
            v = evaluate(gate, spec, paths)
            if not v.passed and v.blocking:
                raise GateError(gate.name, v.reason)
