"""A declarative domain's world: its tables as SQLAlchemy metadata, its tools as functions that run their SQL steps
with bound parameters in the call's one transaction, and its roles."""
from __future__ import annotations

import sqlite3
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from sqlalchemy import Boolean, Column, Float, Integer, MetaData, String, Table
from sqlglot import exp

from evalsuite.core.records import Role
from evalsuite.domains.declarative.model import ArgDef, DomainFile, TableDef, ToolDef
from evalsuite.domains.declarative.sql import parsed
from evalsuite.worlds.domain import Domain, Tool, ToolContext, ToolError, dict_rows
from evalsuite.worlds.types import Money

TYPES = {"text": String, "integer": Integer, "number": Float, "boolean": Boolean}
ARG_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool}


def build_domain(df: DomainFile, columns: dict[str, dict[str, str]]) -> Domain:
    """The Domain of a checked file whose every table's columns are known (`columns`: table -> column -> type)."""
    metadata = MetaData()
    for name, table in df.world_tables().items():
        Table(name, metadata, *(_column(c, t, table) for c, t in columns[name].items()))
    tools = {name: _tool(name, tool, df) for name, tool in df.tools.items()}
    roles = {name: Role(name=name, read_tools=r.read, write_tools=r.write, forbidden_tools=r.forbidden)
             for name, r in df.roles.items()}
    return Domain(name=df.name, version=df.version, metadata=metadata, clock=df.now.replace(tzinfo=None),
                  tools=tools, roles=roles, case_tables=df.case_tables())


def _column(name: str, kind: str, table: TableDef) -> Column:
    kind = "money" if name in table.money else kind
    return Column(name, Money() if kind == "money" else TYPES[kind](), primary_key=name in table.key)


def _args_model(name: str, args: dict[str, ArgDef]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for arg, d in args.items():
        kind: Any = Literal[tuple(d.enum)] if d.enum else ARG_TYPES[d.type]
        fields[arg] = (kind, Field(description=d.description)) if d.required else \
            (kind | None, Field(None, description=d.description))
    return create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)


def _tool(name: str, tool: ToolDef, df: DomainFile) -> Tool:
    """The tool: its steps in order, then its returns; a step that finds or changes no row fails the call with its
    message, and the world rolls the whole call back."""
    new_table = _new_id_table(tool)
    key_column = df.tables[new_table].key[0] if new_table else None

    def run(ctx: ToolContext, args: BaseModel) -> Any:
        values = args.model_dump()
        params = {**values, "now": ctx.now.isoformat()}
        if new_table:
            params["new_id"] = _new_id(ctx, new_table, key_column)
        rows: list[dict[str, Any]] = []
        for step in tool.steps:
            try:
                cursor = ctx.run(step.sql, params)
                rows = dict_rows(cursor) if cursor.description else []
            except sqlite3.Error as exc:
                raise ToolError(f"{name}: {exc}") from exc
            if step.error_if_empty is not None and not (rows or cursor.rowcount > 0):
                raise ToolError(step.error_if_empty.format(**values))
        if tool.returns is not None:
            return ctx.rows(tool.returns, params)
        return rows if tool.kind == "read" else {"rows_written": ctx.rows_written}

    run.__name__ = name
    return Tool(name, tool.kind, run, _args_model(name, tool.args), tool.description)


def _new_id_table(tool: ToolDef) -> str | None:
    """The table whose INSERT takes :new_id (sql.py refuses :new_id anywhere else)."""
    for step in tool.steps:
        tree = parsed(step.sql)
        if isinstance(tree, exp.Insert) and any(p.name == "new_id" for p in tree.find_all(exp.Placeholder)):
            return tree.find(exp.Table).name
    return None


def _new_id(ctx: ToolContext, table: str, key: str) -> str:
    """A fresh key for `table`, the same for the same world and call order: the table's name and the first count
    past its rows that no row holds."""
    n = ctx.db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] + 1
    while ctx.db.execute(f'SELECT 1 FROM "{table}" WHERE "{key}" = ?', (f"{table}-{n}",)).fetchone():
        n += 1
    return f"{table}-{n}"
