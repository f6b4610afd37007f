"""The declarative domain file as pydantic models: the keys docs/domains/declarative.md documents (and the JSON
Schema `evalsuite domain-schema` publishes), each checked where a model can check it; SQL is checked by sql.py."""
from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
ColumnType = Literal["text", "integer", "number", "boolean", "money"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TableDef(Strict):
    """A seed table, by the name the suite's sources give it."""

    key: list[str] = Field(min_length=1, description="the primary key's columns")
    money: list[str] = Field(default_factory=list, description="columns that stay exact decimals")
    columns: dict[str, ColumnType] | None = Field(
        None, description="the table's columns and types; needed for a table no source holds (it starts empty); "
                          "a table with a source takes the source's columns, as text unless typed here")
    cases: bool = Field(False, description="a case table: tasks are derived from its rows; no tool can reach it")


class ArgDef(Strict):
    """One argument of a tool: it reaches SQL only as the bound parameter :name."""

    type: Literal["string", "integer", "number", "boolean"]
    enum: list[Any] | None = Field(None, description="the only values allowed")
    required: bool = Field(True, description="false: the agent may leave it out (it binds as NULL)")
    description: str | None = Field(None, description="what the agent sees")


class StepDef(Strict):
    """One SQL statement of a tool, run in order with the others in the call's one transaction."""

    sql: str = Field(min_length=1, description="one SELECT, INSERT, UPDATE or DELETE with :named parameters only")
    error_if_empty: str | None = Field(
        None, description="the call fails with this message (arguments as {name}) when the step finds or changes "
                          "no row")


class ToolDef(Strict):
    """A tool the agent can call: parameterised SQL steps, then the rows it returns."""

    kind: Literal["read", "write"] = Field(description="read: its steps may only SELECT; write: it changes rows")
    description: str = Field(min_length=1, description="what the agent sees")
    args: dict[str, ArgDef] = Field(default_factory=dict, description="its arguments, by name")
    steps: list[StepDef] = Field(min_length=1, description="run in order, in one transaction")
    returns: str | None = Field(None, description="a SELECT: the rows the agent receives")


class RoleDef(Strict):
    """A role the agent plays: the tools it may call and the defined tools it must never call."""

    read: list[str] = Field(default_factory=list, description="read tools it may call")
    write: list[str] = Field(default_factory=list, description="write tools it may call")
    forbidden: list[str] = Field(default_factory=list, description="defined tools whose call fails the trial")


class TriggerDef(Strict):
    """What starts a task: a queue item (or a conversation's opening), written from the case row."""

    type: Literal["queue_item", "conversation"] = "queue_item"
    text: str = Field(min_length=1, description="the case row's columns as {column}")
    item_id: str | None = Field(None, description="the queue item's id, from the case row's columns as {column}")


class DerivationDef(Strict):
    """Tasks from resolved cases: the goal is what the case's verified actions change when replayed."""

    cases: str = Field(description="the case table")
    verified: str = Field(description="a column (true/false, yes/no, 1/0): cases where it is false are skipped")
    policy_date: str = Field(description="a date column: the policy in effect on it ships with the task")
    trigger: TriggerDef = Field(description="what starts each task")
    actions: str = Field(description='a column holding a JSON list of {"tool": ..., "arguments": {...}}')
    clauses: dict[str, str] = Field(description="the clause each write tool enforces")
    masked: dict[str, str] = Field(default_factory=dict, description="table.column -> why it is volatile")
    consistent_when: str | None = Field(
        None, description="a SELECT on the seed world; a case for which it returns no row contradicts the policy "
                          "in effect and is skipped. Parameters: the case's columns, the policy's as :policy_<name>")
    role: str | None = Field(None, description="the role the tasks run under (default: the only role)")
    answer: str | None = Field(None, description="a column holding the closing note, the task's reference answer")
    category: str | None = Field(None, description="a column naming the task's category (default: case)")


class DomainFile(Strict):
    """A declarative domain: one YAML file with SQL (docs/domains/declarative.md)."""

    name: str = Field(pattern=NAME, description="the domain's name (letters, digits, _)")
    version: str = Field(min_length=1, description="part of every release version and trial identity")
    now: dt.datetime = Field(description="the world's clock: tools read it as :now, never the machine's clock")
    description: str | None = Field(None, description="what the process is, for people")
    tables: dict[str, TableDef] = Field(min_length=1, description="the world's tables and the case tables, by name")
    tools: dict[str, ToolDef] = Field(min_length=1, description="what the agent can call, by name")
    roles: dict[str, RoleDef] = Field(min_length=1, description="who acts, with the tools each may and must not call")
    derivation: DerivationDef | None = Field(None, description="tasks from resolved cases; without it, the spec "
                                                               "gives derivation.tasks")

    @model_validator(mode="after")
    def _names(self) -> DomainFile:
        for kind, names in (("table", self.tables), ("tool", self.tools), ("role", self.roles)):
            for name in names:
                if not name.replace("_", "a").isalnum() or name[0].isdigit():
                    raise ValueError(f"{kind} name {name!r}: letters, digits and _ only")
        return self

    def world_tables(self) -> dict[str, TableDef]:
        return {n: t for n, t in self.tables.items() if not t.cases}

    def case_tables(self) -> frozenset[str]:
        return frozenset(n for n, t in self.tables.items() if t.cases)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the file, as `evalsuite domain-schema` prints it."""
    schema = DomainFile.model_json_schema()
    schema["$id"] = "https://evalsuite.dev/schemas/declarative-domain.json"
    return schema
