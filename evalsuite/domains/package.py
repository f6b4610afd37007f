"""The domain contract: everything a domain provides, in one typed object the registry hands out.

A bundled domain, a plugin domain installed as its own package and a declarative domain (one YAML file with SQL)
all end up as a `DomainPackage`: the world the agent acts on, how tasks are made for it (derived from resolved
cases or generated), the user's side of a dual-control domain and the step linking the two, the outcomes a dossier
customization may move a task to, and the fixed rules a workflow agent follows. Nothing is read from module-level
names: what a domain does not provide is None here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalsuite.worlds.domain import Domain


@dataclass(frozen=True)
class FixedRules:
    """A domain's fixed rules, the simpler alternative to an agent: gather the facts of a trigger through the
    tools, decide one of `decisions` (name -> what it means) from them, act on the decision and return the closing
    message. The `workflow` agents run them (`workflow:MODEL` asks a model for the decision instead)."""

    decisions: Mapping[str, str]
    gather: Callable[[Any, Any], dict[str, Any]]  # (trigger, env) -> facts
    decide: Callable[[dict[str, Any]], str]  # facts -> decision
    act: Callable[[str, dict[str, Any], Any], str]  # (decision, facts, env) -> closing message


@dataclass(frozen=True)
class DomainPackage:
    """What a domain provides. Only `domain` is required.

    - `derive(tables, policies, ctx) -> Derivation`: tasks from the resolved cases of the de-identified snapshot
      (evalsuite.tasks.derivation.Deriver); `ctx.world` is the freshly built world.
    - `generate(plans, policy, *, n, seed, protocol, intents, max_subtasks) -> Generation`: tasks composed from
      verified subtasks instead (a spec's `generation:`).
    - `user_domain`, `link(agent_ctx, user_ctx)`: the user's own device in a dual-control domain, and the step run
      after every successful call on either world.
    - `customize`: outcome name -> `fn(task, clause) -> task`, the outcomes a dossier customization may name.
    - `fixed_rules`: what the `workflow` agents run.
    """

    domain: Domain
    derive: Callable[..., Any] | None = None
    generate: Callable[..., Any] | None = None
    user_domain: Domain | None = None
    link: Callable[[Any, Any], None] | None = None
    customize: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    fixed_rules: FixedRules | None = None
    # a declarative domain's file with every table's columns written out: a release keeps it (DOMAIN_FILE), so a
    # process that opens the release loads the domain without the spec's sources
    bound_file: str | None = None

    @property
    def name(self) -> str:
        return self.domain.name

    def __repr__(self) -> str:
        return f"DomainPackage({self.name!r}, version {self.domain.version!r})"
