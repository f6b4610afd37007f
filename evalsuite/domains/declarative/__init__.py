"""Declarative domains: a team's own process as one YAML file with SQL, no Python (docs/domains/declarative.md).

`load_domain_file(path, columns)` reads the file (model.py), refuses SQL it may not hold (sql.py), binds each table to
its columns (declared in the file, or the sources' own), and returns the DomainPackage: the world and its tools
(world.py) and the derivation that replays each verified case's actions for its goal (derive.py). A problem is one
line naming the file and the key, raised before anything is built.
"""
from __future__ import annotations

from pathlib import Path

import yaml
from sqlglot import exp

from evalsuite.core.io import model_from, read_yaml
from evalsuite.domains.declarative.derive import deriver
from evalsuite.domains.declarative.model import DomainFile, json_schema
from evalsuite.domains.declarative.sql import SqlProblem, check_statement, parsed, problems, template_fields
from evalsuite.domains.declarative.world import build_domain
from evalsuite.domains.package import DomainPackage

__all__ = ["DomainFile", "DomainFileError", "json_schema", "load_domain_file"]


class DomainFileError(ValueError):
    """A declarative domain file that cannot be loaded; the message is one line naming the file and the key."""


def load_domain_file(path: str | Path, columns: dict[str, list[str]] | None = None) -> DomainPackage:
    """The domain the file declares, its tables bound to `columns` (a source table's columns, by table) where the
    file does not list them."""
    df = model_from(path, read_yaml(path, DomainFileError), DomainFile, DomainFileError)
    for problem in [*problems(df), *_reference_problems(df)]:
        raise DomainFileError(f"{path}: {problem}")
    typed = _columns(df, columns or {}, path)
    if df.derivation:
        for problem in _derivation_problems(df, typed):
            raise DomainFileError(f"{path}: {problem}")
    domain = build_domain(df, typed)
    bound = df.model_copy(update={"tables": {
        n: t.model_copy(update={"columns": typed[n]}) for n, t in df.tables.items()}})
    return DomainPackage(domain=domain, derive=deriver(df, domain) if df.derivation else None,
                         bound_file=yaml.safe_dump(bound.model_dump(mode="json", exclude_none=True), sort_keys=False))


def _columns(df: DomainFile, sources: dict[str, list[str]], path) -> dict[str, dict[str, str]]:
    """Every table's columns and types: the file's, else its source's (text; money columns stay exact)."""
    out = {}
    for name, table in df.tables.items():
        if table.columns is not None:
            out[name] = dict(table.columns)
        elif name in sources:
            out[name] = dict.fromkeys(sources[name], "text")
        else:
            raise DomainFileError(f"{path}: tables.{name}: no columns: no source holds this table; list its columns "
                                  "(columns: {name: text|integer|number|boolean|money})")
        for key in ("key", "money"):
            if missing := [c for c in getattr(table, key) if c not in out[name]]:
                raise DomainFileError(f"{path}: tables.{name}.{key}: {', '.join(missing)} not among its columns "
                                      f"({', '.join(out[name])})")
    return out


def _reference_problems(df: DomainFile):
    """Roles naming tools that are not there or of the other kind; a derivation naming what is not declared."""
    for name, role in df.roles.items():
        for kind, listed in (("read", role.read), ("write", role.write), ("forbidden", role.forbidden)):
            for tool in listed:
                if tool not in df.tools:
                    yield f"roles.{name}.{kind}: {tool} is not a tool of this domain (tools: {', '.join(df.tools)})"
                elif kind != "forbidden" and df.tools[tool].kind != kind:
                    yield f"roles.{name}.{kind}: {tool} is a {df.tools[tool].kind} tool"
    d = df.derivation
    if d is None:
        return
    if d.cases not in df.case_tables():
        yield f"derivation.cases: {d.cases} is not a case table (mark it cases: true under tables)"
    if d.role is None and len(df.roles) != 1:
        yield "derivation.role: the file has several roles; name the one the tasks run under"
    elif d.role is not None and d.role not in df.roles:
        yield f"derivation.role: {d.role} is not a role of this domain"
    writes = [n for n, t in df.tools.items() if t.kind == "write"]
    for tool in d.clauses:
        if tool not in writes:
            yield f"derivation.clauses.{tool}: not a write tool of this domain (writes: {', '.join(writes)})"
    if missing := [w for w in writes if w not in d.clauses]:
        yield f"derivation.clauses: no clause for {', '.join(missing)}; every goal assertion cites one"


def _derivation_problems(df: DomainFile, columns: dict[str, dict[str, str]]):
    """What the derivation names, against the bound columns."""
    d, world = df.derivation, set(df.world_tables())
    case_columns = set(columns[d.cases])
    for key in ("verified", "policy_date", "actions", "answer", "category"):
        if (col := getattr(d, key)) is not None and col not in case_columns:
            yield f"derivation.{key}: {col} is not a column of {d.cases} ({', '.join(sorted(case_columns))})"
    for key in ("text", "item_id"):
        text = getattr(d.trigger, key)
        try:
            if text and (unknown := template_fields(text) - case_columns):
                yield f"derivation.trigger.{key}: {', '.join(sorted(unknown))} not columns of {d.cases}"
        except SqlProblem as exc:
            yield f"derivation.trigger.{key}: {exc}"
    for field in d.masked:
        table, _, column = field.rpartition(".")
        if table not in world or column not in columns[table]:
            yield f"derivation.masked.{field}: not a column of a world table (table.column)"
    if d.consistent_when:
        try:
            check_statement(d.consistent_when, tables=world, cases=df.case_tables(),
                            params=case_columns | _policy_params(d.consistent_when), read_only=True)
        except SqlProblem as exc:
            yield f"derivation.consistent_when: {exc}"


def _policy_params(sql: str) -> set[str]:
    """The :policy_<param> names a query uses (the policy's parameters are known only per case)."""
    try:
        return {p.name for p in parsed(sql).find_all(exp.Placeholder) if p.name.startswith("policy_")}
    except SqlProblem:
        return set()
