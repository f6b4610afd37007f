"""The suite spec: one declarative YAML per suite, what a data-ops team writes.

Paths in a spec are relative to the spec file. Unknown keys (a key given twice
too), missing files, malformed YAML, a database URL that cannot be opened, a
quality file or policy that cannot be read, a use no licence can grant, a cron
string that is none and numbers out of range are errors whose one-line message
names the file and the key or path, raised when the spec is read, before any
stage runs; so nothing is half-built from a spec nobody meant. Tables and
columns the domain does not have are refused by pipeline.preflight, also before
any stage runs (a check that looks the domain up, kept out of every stage's code).
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, field_validator, model_validator
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from evalsuite.core.domain_refs import Location, UnknownDomainError, is_file_ref, locate
from evalsuite.core.identity import BASELINE_AGENTS, AgentConfig
from evalsuite.core.io import atomic_write, model_from, read_yaml
from evalsuite.core.records import MAX_TRIALS, Simulator, TrialProtocol
from evalsuite.sourcing.cron import cron_problem
from evalsuite.sourcing.rights import USES

# A table name: it becomes a file name, a SQL table and a key in every record that cites it.
TableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]

# What every build does with the records, whatever the spec says it needs: a spec may add uses, never drop these.
BUILD_USES = ("build_environments", "derive_tasks")


SUITE_NAME = r"^[a-z][a-z0-9_]*$"  # a suite's name: part of folder names, typed on command lines


class SpecError(ValueError):
    """A suite spec that cannot be used; the message is one line naming file and key."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TableSource(Strict):
    """One source table: a CSV or Parquet file, or a SQLAlchemy URL plus a query."""

    path: str | None = None
    url: str | None = None
    query: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> TableSource:
        if bool(self.path) == bool(self.url):
            raise ValueError("give either path, or url with query")
        if self.url and not self.query:
            raise ValueError("query is required with url")
        if self.url:
            database_url(self.url)
        return self


def database_url(url: str) -> URL:
    """A SQLAlchemy URL whose dialect and driver are installed; otherwise a ValueError saying which is missing.
    Checked when the spec is read, so a build never gets as far as opening the source to find out."""
    try:
        parsed = make_url(url)
        dialect = parsed.get_dialect()
    except NoSuchModuleError as exc:  # before ArgumentError, which it extends
        raise ValueError(f"url: unknown database dialect {parsed.drivername!r}") from exc
    except ArgumentError as exc:
        raise ValueError(f"url: not a database URL: {exc}") from exc
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        raise ValueError(f"url: the {parsed.drivername} driver is not installed ({exc})") from exc
    return parsed


class Sources(Strict):
    name: str = Field(min_length=1)  # the supplier delivery; its rights manifest carries the same name
    drop_folder: str | None = None  # watched for new supplier drops
    tables: dict[TableName, TableSource] = Field(min_length=1)


SplitName = Literal["train", "dev", "test", "held_out"]  # the splits a task record can be in


class Derivation(Strict):
    seed: int = 7
    # each a fraction in [0, 1], together 1 (tasks.splits.assign_split hashes a case into them)
    splits: dict[SplitName, Annotated[float, Field(ge=0, le=1)]] = {"train": 0.4, "test": 0.4, "held_out": 0.2}
    tasks: str | None = None  # a prebuilt tasks.jsonl (imported suites) instead of deriving from cases

    @field_validator("splits")
    @classmethod
    def _sum_to_one(cls, splits: dict[str, float]) -> dict[str, float]:
        if abs(sum(splits.values()) - 1.0) > 1e-9:
            raise ValueError(f"the split fractions must sum to 1, not {sum(splits.values()):g}")
        return splits


class Generation(Strict):
    """Tasks composed from the domain's subtasks instead of derived from cases (evalsuite.tasks.composition):
    every composite verified, then a balanced seeded sample of about `sample` tasks."""

    sample: int = Field(default=100, ge=1, le=1_000_000)
    seed: int = 7
    intents: list[str] | None = None  # all of the domain's intents when unset
    max_subtasks: int | None = Field(default=None, ge=1)


class Acceptance(Strict):
    reference_trials: int = Field(default=8, ge=1, le=MAX_TRIALS)
    max_quarantined_fraction: float = Field(default=0.1, ge=0, le=1)
    require_adjudication: bool = False


class SiteSettings(Strict):
    """What the public evidence site publishes beyond its default (evalsuite.site.answers): train tasks' reference
    solutions, answers, goal values and full reference traces only when show_train_answers is true."""

    show_train_answers: StrictBool = False


class DossierRef(Strict):
    """The suite's process dossier (evalsuite.sourcing.dossier) and the customizations of it this suite applies."""

    file: str
    apply: list[str] = []  # customization ids declared in the dossier; the build derives their changes


class SuiteSpec(Strict):
    name: str = Field(pattern=SUITE_NAME)
    version_prefix: str = Field(default="r", pattern=r"^[a-z][a-z0-9_-]{0,15}$")  # part of a folder name
    domain: str
    sources: Sources
    rights: list[str] = Field(min_length=1)
    needed_uses: list[str] = list(BUILD_USES)  # uses beyond what every build does; BUILD_USES always apply
    deid: str | None = None
    quality: str | None = None
    policies: list[str] = Field(min_length=1)
    derivation: Derivation = Derivation()
    generation: Generation | None = None  # composed tasks (a domain with GENERATE), upstream of derived_tasks
    acceptance: Acceptance = Acceptance()
    trial_protocol: TrialProtocol = TrialProtocol()
    simulator: Simulator | None = None
    agents: list[AgentConfig] = [AgentConfig(name="reference"), AgentConfig(name="noop"), AgentConfig(name="adversary")]
    schedule: str | None = None  # a cron string, as Dagster's schedules take it (sourcing.cron)
    site: SiteSettings = SiteSettings()
    dossier: DossierRef | None = None  # the process dossier, upstream of derivation (pipeline.stages.process_dossier)
    base_dir: Path = Field(default=Path("."), exclude=True)
    spec_file: Path | None = Field(default=None, exclude=True)  # where it was read from, for error lines

    @field_validator("needed_uses")
    @classmethod
    def _known_uses(cls, uses: list[str]) -> list[str]:
        # refused, not normalised: a use is what a licence grants, and a record should carry the one spelling
        for use in uses:
            if use not in USES:
                raise ValueError(f"{use!r} is not a use; the uses are {', '.join(sorted(USES))}")
        return uses

    @field_validator("agents")
    @classmethod
    def _known_agents(cls, agents: list[AgentConfig]) -> list[AgentConfig]:
        for agent in agents:
            if agent.kind == "baseline" and agent.name not in BASELINE_AGENTS:
                raise ValueError(f"{agent.name!r} is not an agent: name a built-in one "
                                 f"({', '.join(sorted(BASELINE_AGENTS))}) or give a kind (openai, model_workflow, "
                                 "mcp) with its model or command")
        return agents

    @field_validator("schedule")
    @classmethod
    def _cron(cls, schedule: str | None) -> str | None:
        if schedule is not None and (problem := cron_problem(schedule)):
            raise ValueError(problem)
        return schedule

    def resolve(self, rel: str) -> Path:
        return (self.base_dir / rel).resolve()

    def domain_location(self) -> Location:
        """Where the spec's `domain:` is (an installed entry point, a domain file relative to the spec, a dotted
        module path), found without importing it; UnknownDomainError otherwise."""
        return locate(self.domain, self.base_dir)

    def files(self) -> dict[str, Path]:
        """Every file the spec names, keyed by its key path, for existence checks and hashing."""
        out = {f"sources.tables.{t}.path": self.resolve(s.path) for t, s in self.sources.tables.items() if s.path}
        out |= {f"rights.{i}": self.resolve(p) for i, p in enumerate(self.rights)}
        out |= {f"policies.{i}": self.resolve(p) for i, p in enumerate(self.policies)}
        for key in ("deid", "quality"):
            if getattr(self, key):
                out[key] = self.resolve(getattr(self, key))
        if self.derivation.tasks:
            out["derivation.tasks"] = self.resolve(self.derivation.tasks)
        if self.dossier:
            out["dossier.file"] = self.resolve(self.dossier.file)
        if is_file_ref(self.domain):
            out["domain"] = self.resolve(self.domain)
        return out

    def sqlite_files(self) -> dict[str, Path]:
        """The database file of every SQLite source, keyed by its key path (SQLAlchemy would create a missing one)."""
        out = {}
        for t, s in self.sources.tables.items():
            url = make_url(s.url) if s.url else None
            if url is not None and url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
                out[f"sources.tables.{t}.url"] = Path(url.database)
        return out


def load_spec(path: str | Path) -> SuiteSpec:
    """Read and check a suite spec, including that every file it names exists; problems raise a one-line SpecError."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"{path}: suite spec not found")
    raw = read_yaml(path, SpecError, invalid="malformed YAML")
    spec = model_from(path, raw, SuiteSpec, SpecError, base_dir=path.parent.resolve(), spec_file=path)
    try:  # before any stage runs, not after the seed and de-identification
        spec.domain_location()
    except UnknownDomainError as exc:
        raise SpecError(f"{path}: domain: {exc}") from exc
    for key, file in (spec.files() | spec.sqlite_files()).items():
        if not file.is_file():
            raise SpecError(f"{path}: {key}: file not found: {file}")
    _check_named_files(spec, path)
    return spec


def _check_named_files(spec: SuiteSpec, path: Path) -> None:
    """Read the rights manifests, policies and quality file the spec names, so one that cannot be read (or a
    quality file naming a table the spec does not have) stops the build before its first stage; each raises
    its own one-line error naming its file."""
    from evalsuite.sourcing.policies import load_policy
    from evalsuite.sourcing.quality import load_expectations
    from evalsuite.sourcing.rights import load_manifest

    for p in spec.rights:
        load_manifest(spec.resolve(p))
    for p in spec.policies:
        load_policy(spec.resolve(p))
    if spec.dossier:
        _check_dossier(spec, path)
    if spec.quality:
        quality = spec.resolve(spec.quality)
        for table, exp in load_expectations(quality).items():
            named = [(table, table)] + [(f"{table}.foreign_keys.{c}", ref.split(".", 1)[0])
                                        for c, ref in exp.foreign_keys.items()]
            for key, name in named:
                if name not in spec.sources.tables:
                    raise SpecError(f"{quality}: {key}: table {name!r} is not among the tables of {path} "
                                    f"(sources.tables)")


def _check_dossier(spec: SuiteSpec, path: Path) -> None:
    """The dossier reads, names this suite's base suite, and declares every customization the spec applies; the
    policy version a customization moves to is among the spec's policies."""
    from evalsuite.sourcing.dossier import DossierError, load_dossier
    from evalsuite.sourcing.policies import load_policy

    dossier = load_dossier(spec.resolve(spec.dossier.file))
    docs = {(d.doc, d.version) for d in map(load_policy, map(spec.resolve, spec.policies))}
    for i, name in enumerate(spec.dossier.apply):
        try:
            c = dossier.customization(name)
        except KeyError as exc:
            raise SpecError(f"{path}: dossier.apply.{i}: {exc.args[0]}") from None
        if (c.policy.doc, c.policy.version) not in docs:
            raise DossierError(f"{spec.resolve(spec.dossier.file)}: customizations.{c.id}.policy: "
                               f"{c.policy.doc}@{c.policy.version} is not among the policies of {path}")


def dump_spec(spec: SuiteSpec, path: str | Path, header: str = "") -> None:
    """The spec as YAML, under `header` (comment lines saying why a setting has its value)."""
    atomic_write(path, header + yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=False), sort_keys=False))
