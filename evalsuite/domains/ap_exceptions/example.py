"""The bundled AP-exceptions example built straight from the generator (no spec, no Dagster).

Used by tests and benchmarks that need a world and tasks in one call.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalsuite.core.records import Environment, SuiteRef, TaskRecord, TrialProtocol
from evalsuite.domains.ap_exceptions.derive import derive_tasks
from evalsuite.domains.ap_exceptions.generator import generate
from evalsuite.domains.ap_exceptions.tools import DOMAIN
from evalsuite.sourcing.policies import PolicyDoc, load_policy
from evalsuite.tasks.derivation import DeriveContext
from evalsuite.worlds import World

AP_POLICY_DIR = Path(__file__).parent / "policies"


def ap_policies() -> list[PolicyDoc]:
    return [load_policy(p) for p in sorted(AP_POLICY_DIR.glob("*.md"))]


@dataclass
class Example:
    world: World
    tasks: list[TaskRecord]
    skipped: dict[str, int]
    tables: dict[str, list[dict]]


def ap_example(workdir: str | Path, seed: int = 7, n_cases: int = 56) -> Example:
    domain = DOMAIN
    tables = generate(seed=seed, n_cases=n_cases)
    own_tables = {k: v for k, v in tables.items() if k in domain.tables}
    world = World.build(domain, own_tables, Path(workdir) / "ap_world.sqlite")
    env = Environment(image=f"{domain.name}:{domain.version}", seed_snapshot="generated", seed_sha256=world.seed_sha256)
    ctx = DeriveContext(suite=SuiteRef(name="ap_exceptions", version="example"), environment=env, seed=seed,
                        splits={"train": 0.4, "test": 0.4, "held_out": 0.2}, protocol=TrialProtocol(),
                        license_ref="generated example")
    der = derive_tasks(tables, ap_policies(), ctx)
    return Example(world=world, tasks=der.tasks, skipped=der.skipped, tables=tables)
