"""The SQL of a declarative domain, checked when the domain loads (sqlglot parses it as SQLite does): one statement
per step, SELECT/INSERT/UPDATE/DELETE only, on the world's tables and never a case table, named parameters that
are declared, and nothing that writes in a read tool or a query. A problem is one line naming the key."""
from __future__ import annotations

import string
from collections.abc import Iterator

import sqlglot
from sqlglot import exp

from evalsuite.domains.declarative.model import DomainFile

STATEMENTS = (exp.Select, exp.Union, exp.Insert, exp.Update, exp.Delete)
WRITES = (exp.Insert, exp.Update, exp.Delete)
WORLD_PARAMS = {"now", "new_id"}  # the world's clock, a fresh key the world assigns


class SqlProblem(ValueError):
    """A statement a declarative domain may not hold; the message says why (the caller names the key)."""


def parsed(sql: str) -> exp.Expression:
    """One statement, parsed; SqlProblem for none, several, or text SQLite would not take."""
    try:
        found = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise SqlProblem(f"not SQL SQLite takes: {str(exc).splitlines()[0]}") from exc
    if len(found) != 1:
        raise SqlProblem(f"{len(found)} statements; a step holds exactly one")
    return found[0]


def check_statement(sql: str, *, tables: set[str], cases: set[str], params: set[str],
                    read_only: bool) -> exp.Expression:
    """The statement, checked against what the step may touch and name."""
    tree = parsed(sql)
    if not isinstance(tree, STATEMENTS):
        raise SqlProblem(f"a {tree.key.upper()} statement; only SELECT, INSERT, UPDATE and DELETE are allowed")
    if read_only and (isinstance(tree, WRITES) or tree.find(*WRITES)):
        raise SqlProblem("writes, but a read tool or a query may only SELECT")
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if table.db and table.db != "main":
            raise SqlProblem(f"names the database {table.db!r}; a step reads and writes the world only")
        if table.name in cases:
            raise SqlProblem(f"reaches the case table {table.name}, which no tool may")
        if table.name not in tables | ctes:
            raise SqlProblem(f"unknown table {table.name} (the world's tables: {', '.join(sorted(tables))})")
    for p in tree.find_all(exp.Placeholder):
        if p.name == "?" or not p.name:
            raise SqlProblem("a positional parameter (?); name every parameter (:name)")
        if p.name == "new_id" and not isinstance(tree, exp.Insert):
            raise SqlProblem(":new_id is a fresh key for a row an INSERT adds; use it in an INSERT only")
        if p.name not in params:
            raise SqlProblem(f"the parameter :{p.name} is not declared (declared: "
                             f"{', '.join(':' + n for n in sorted(params))})")
    return tree


def template_fields(text: str) -> set[str]:
    """The {names} a message template fills in; SqlProblem for a template str.format would not take."""
    try:
        return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    except ValueError as exc:
        raise SqlProblem(f"not a message template: {exc}") from exc


def tool_sql(df: DomainFile) -> Iterator[tuple[str, str, bool, set[str]]]:
    """(key, SQL, read only, parameters it may name) for every statement of every tool."""
    for name, tool in df.tools.items():
        params = set(tool.args) | WORLD_PARAMS
        for i, step in enumerate(tool.steps):
            yield f"tools.{name}.steps.{i}.sql", step.sql, tool.kind == "read", params
        if tool.returns is not None:
            yield f"tools.{name}.returns", tool.returns, True, params


def problems(df: DomainFile) -> Iterator[str]:
    """`key: what is wrong` for every statement and message template the file may not hold."""
    tables, cases = set(df.world_tables()), set(df.case_tables())
    for key, sql, read_only, params in tool_sql(df):
        try:
            tree = check_statement(sql, tables=tables, cases=cases, params=params, read_only=read_only)
            if key.endswith(".returns") and not isinstance(tree, (exp.Select, exp.Union)):
                raise SqlProblem("returns must be a SELECT")
        except SqlProblem as exc:
            yield f"{key}: {exc}"
    for name, tool in df.tools.items():
        for i, step in enumerate(tool.steps):
            if step.error_if_empty is not None:
                try:
                    if unknown := template_fields(step.error_if_empty) - set(tool.args):
                        raise SqlProblem(f"names {', '.join(sorted(unknown))}, which are not arguments of the tool")
                except SqlProblem as exc:
                    yield f"tools.{name}.steps.{i}.error_if_empty: {exc}"
