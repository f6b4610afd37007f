"""The process dossier: what was learned about a business process before a successful run was defined.

One YAML file per suite (suites/<suite>/dossier.yaml), after the environment-design guide's "Gather requirements
before defining a successful run": the intended result, the current work and its simpler alternative, actors,
systems and permissions, routine cases and exceptions, who has authority over each source, open questions and
contradictions (each consequential one naming who resolves it), and the requirements. Each requirement keeps its
decision stages (ambiguity, question, answer, who answered and with what authority, what was recorded) and its
links: the policy clauses that state it, the tools and role permissions that enforce it, the checks that verify
it and the tasks that exercise it. A customization (the company removes manager discretion) is declared once
here; the build derives the changed policy version, tool authority and expected outcomes from it
(evalsuite.tasks.customization), and the traceability gate (evalsuite.tasks.traceability) refuses a release in
which one of them moved without the others.

Every name a section uses must be declared in the dossier (an actor, a source, a requirement); a file that
breaks this, or any field, is refused with one line naming the file and the field.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import YamlModelError, load_yaml_model

Id = Annotated[str, StringConstraints(pattern=r"^\S+$")]  # a name: something, and no space in it


class DossierError(YamlModelError):
    """A dossier that cannot be used; the message is one line naming the file and field."""


# Text a person wrote down: something, not an empty or blank string (a blank answer answers nothing)
Text = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
AUTHORITIES = ("person", "team", "organisation", "system")  # who may answer, resolve or own: never the agent


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Actor(Strict):
    id: Id
    kind: Literal["agent", "person", "team", "system", "organisation"]
    description: Text


class System(Strict):
    id: Id
    description: Text
    tables: list[str] = []
    tools: list[str] = []


class ActorPermissions(Strict):
    """What one actor may and may not do, in the process as it is (the role's tools enforce the agent's part)."""

    actor: Id
    may: list[Text] = Field(min_length=1)
    may_not: list[Text] = []


class Source(Strict):
    """A source of facts or rules and who has authority over it (who may change it, whose word it is)."""

    id: Id
    kind: Literal["policy", "table", "document", "person", "tool"]
    ref: Text  # the policy doc, table, document or tool it is
    authority: Id  # an actor
    note: str = ""


class Case(Strict):
    """A routine case or an exception of the process, with the requirements it rests on."""

    id: Id
    description: Text
    requirements: list[Id] = Field(min_length=1)


class OpenQuestion(Strict):
    id: Id
    question: Text
    consequential: bool  # an answer could change what a successful run is
    owner: Id  # the actor who must answer it
    status: Literal["open", "answered"]
    answer: Text | None = None

    @model_validator(mode="after")
    def _answered_has_answer(self) -> OpenQuestion:
        if self.status == "answered" and not self.answer:
            raise ValueError("answer: required when status is answered")
        return self


class Contradiction(Strict):
    id: Id
    between: list[Id] = Field(min_length=2)  # sources
    description: Text
    consequential: bool
    resolver: Id  # the actor who must resolve it
    resolution: Text | None = None  # None: unresolved


class Answerer(Strict):
    actor: Id
    authority: Text  # with what authority they answered


class Stages(Strict):
    """How the requirement was reached: the ambiguity, the question asked, the answer and who gave it, the record."""

    ambiguity: Text
    question: Text
    answer: Text
    answered_by: Answerer
    recorded: Text


class PermissionLink(Strict):
    """A role permission that enforces a requirement: the role may (or may not) call the tool."""

    role: str
    tool: str
    may: bool


class Links(Strict):
    clauses: list[str] = []  # policy clause ids that state it
    tools: list[str] = []  # tools whose own rules enforce it (a refund refused without authority)
    permissions: list[PermissionLink] = []
    # domain check names, table:<name> for a goal-state assertion on that table, unchanged:<name> for a table the
    # goal state requires unchanged
    checks: list[str] = []
    tasks: list[str] = []  # tasks that exercise it


class Requirement(Strict):
    id: Id
    statement: Text
    restricts_action: bool  # then a tool rule or a role permission must enforce it
    stages: Stages
    links: Links


class PolicyMove(Strict):
    doc: str
    version: str


class ToolAuthority(Strict):
    role: str
    forbid: list[str] = Field(min_length=1)  # tools the role loses


class WorldChange(Strict):
    """Rows of a world table the customization changes: `set` on every row matching `where`."""

    table: str
    where: dict[str, Any] = {}
    set: dict[str, Any] = Field(min_length=1)


class OutcomeMove(Strict):
    """What a customized task's admissible result becomes: for tasks of these categories, `result` (a kind the
    domain knows how to derive), verified by `check` under `clause`, with no rows expected in `no_rows_in`."""

    categories: list[str] = Field(min_length=1)
    result: str
    clause: str
    check: str
    no_rows_in: list[str] = []


class Customization(Strict):
    """A business change declared once: the build moves policy, tool authority and outcomes together."""

    id: Id
    statement: Text
    requirement: Id  # the requirement it changes
    recorded: Text  # the requirement as recorded after the change
    policy: PolicyMove
    tool_authority: ToolAuthority
    world: list[WorldChange] = []
    outcomes: list[OutcomeMove] = Field(min_length=1)


class Dossier(Strict):
    suite: str
    disclosure: Text  # what kind of evidence this is (an authored exercise, an interview…)
    intended_result: Text
    current_work: Text
    simpler_alternative: Text
    actors: list[Actor] = Field(min_length=1)
    systems: list[System] = []
    permissions: list[ActorPermissions] = []
    sources: list[Source] = Field(min_length=1)
    routine_cases: list[Case] = Field(min_length=1)  # a process with no routine case was not looked at
    exceptions: list[Case] = []
    open_questions: list[OpenQuestion] = []
    contradictions: list[Contradiction] = []
    requirements: list[Requirement] = Field(min_length=1)
    customizations: list[Customization] = []

    @model_validator(mode="after")
    def _names_declared(self) -> Dossier:
        for section in ("actors", "systems", "sources", "routine_cases", "exceptions", "open_questions",
                        "contradictions", "requirements", "customizations"):
            ids = [x.id for x in getattr(self, section)]
            dup = next((i for i in ids if ids.count(i) > 1), None)
            if dup:
                raise ValueError(f"{section}: id {dup!r} given twice")
        actors, sources, reqs = ({x.id for x in getattr(self, s)} for s in ("actors", "sources", "requirements"))
        named = [(f"permissions.{i}.actor", p.actor, actors) for i, p in enumerate(self.permissions)]
        named += [(f"sources.{i}.authority", s.authority, actors) for i, s in enumerate(self.sources)]
        named += [(f"open_questions.{i}.owner", q.owner, actors) for i, q in enumerate(self.open_questions)]
        named += [(f"contradictions.{i}.resolver", c.resolver, actors) for i, c in enumerate(self.contradictions)]
        named += [(f"contradictions.{i}.between", s, sources) for i, c in enumerate(self.contradictions)
                  for s in c.between]
        named += [(f"requirements.{i}.stages.answered_by.actor", r.stages.answered_by.actor, actors)
                  for i, r in enumerate(self.requirements)]
        named += [(f"{section}.{i}.requirements", r, reqs) for section in ("routine_cases", "exceptions")
                  for i, c in enumerate(getattr(self, section)) for r in c.requirements]
        named += [(f"customizations.{i}.requirement", c.requirement, reqs) for i, c in enumerate(self.customizations)]
        for where, name, declared in named:
            if name not in declared:
                raise ValueError(f"{where}: {name!r} is not declared")
        self._authorities_are_not_the_agent()
        self._authorities_hold_the_power()
        stated = {p.actor for p in self.permissions}
        agent = next((a.id for a in self.actors if a.kind == "agent" and a.id not in stated), None)
        if agent:
            raise ValueError(f"permissions: none for {agent!r}, the agent under test: say what it may and may not do")
        return self

    def _authorities_are_not_the_agent(self) -> None:
        """Whoever owns a question, resolves a contradiction, answers a requirement or has authority over a source
        is someone with that power: never the agent under test (it would answer its own exam)."""
        kinds = {a.id: a.kind for a in self.actors}
        named = [(f"sources.{i}.authority", s.authority) for i, s in enumerate(self.sources)]
        named += [(f"open_questions.{i}.owner", q.owner) for i, q in enumerate(self.open_questions)]
        named += [(f"contradictions.{i}.resolver", c.resolver) for i, c in enumerate(self.contradictions)]
        named += [(f"requirements.{i}.stages.answered_by.actor", r.stages.answered_by.actor)
                  for i, r in enumerate(self.requirements)]
        for where, actor in named:
            if kinds[actor] not in AUTHORITIES:
                raise ValueError(f"{where}: {actor!r} is the {kinds[actor]} under test, not an authority "
                                 f"(a {', '.join(AUTHORITIES)})")

    def _authorities_hold_the_power(self) -> None:
        """Whoever answers, owns or resolves is given that power by the dossier: they have authority over a source
        (sources.*.authority), and a contradiction between sources is resolved by whoever has authority over one
        of them (the customer does not settle what the policy says)."""
        over = {s.id: s.authority for s in self.sources}
        for i, c in enumerate(self.contradictions):
            theirs = sorted({over[s] for s in c.between})
            if c.resolver not in theirs:
                raise ValueError(f"contradictions.{i}.resolver: {c.resolver!r} has authority over none of "
                                 f"{', '.join(c.between)} (whose authorities are {', '.join(theirs)})")
        named = [(f"open_questions.{i}.owner", q.owner) for i, q in enumerate(self.open_questions)]
        named += [(f"requirements.{i}.stages.answered_by.actor", r.stages.answered_by.actor)
                  for i, r in enumerate(self.requirements)]
        for where, actor in named:
            if actor not in over.values():
                raise ValueError(f"{where}: {actor!r} has authority over no source of the dossier, so answers for "
                                 f"nothing (authorities: {', '.join(sorted(set(over.values())))})")

    @property
    def sha256(self) -> str:
        """The content hash a release's provenance carries: of the validated content, not the file's bytes (a
        comment or the key order changes nothing)."""
        return json_sha256(self.model_dump(mode="json"))

    def actor(self, actor_id: str) -> Actor:
        return next(a for a in self.actors if a.id == actor_id)

    def customization(self, cid: str) -> Customization:
        found = [c for c in self.customizations if c.id == cid]
        if not found:
            raise KeyError(f"no customization {cid!r}; declared: {', '.join(c.id for c in self.customizations)}")
        return found[0]

    def applied(self, names: list[str]) -> Dossier:
        """The dossier as it stands after the named customizations: the changed requirement recorded anew, and
        every permission link on a tool the role loses turned to may-not (the changed requirement gains one for
        each such tool it did not link)."""
        reqs = {r.id: r for r in self.requirements}
        for c in map(self.customization, names):
            role, lost = c.tool_authority.role, set(c.tool_authority.forbid)
            for r in list(reqs.values()):
                perms = [p.model_copy(update={"may": False}) if p.tool in lost and p.role == role else p
                         for p in r.links.permissions]
                if r.id == c.requirement:
                    linked = {p.tool for p in perms if p.role == role}
                    perms += [PermissionLink(role=role, tool=t, may=False) for t in sorted(lost - linked)]
                update = {"links": r.links.model_copy(update={"permissions": perms})}
                reqs[r.id] = r.model_copy(update=update | ({"statement": c.recorded} if r.id == c.requirement
                                                           else {}))
        return self.model_copy(update={"requirements": [reqs[r.id] for r in self.requirements]})


def load_dossier(path: str | Path) -> Dossier:
    """A dossier file, validated; every problem raises a one-line DossierError naming the file and field."""
    return load_yaml_model(path, Dossier, DossierError)
