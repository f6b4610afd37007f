"""A JSON Schema (as pydantic writes it) as a Markdown reference page: one table of keys per object, in the order
they are reached from the top. The reference pages of the declarative domain format and of task records are made
by it (`evalsuite schema ... --markdown`), so they cannot drift from the models."""
from __future__ import annotations

from typing import Any

FORMATS = {"date-time": "date and time (ISO 8601)", "date": "date (YYYY-MM-DD)"}


def _type(prop: dict[str, Any]) -> str:
    """A property's type in a few words: a scalar, a list of them, a mapping, or a link to another object."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "enum" in prop:
        return " | ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    if "anyOf" in prop:
        return " or ".join(_type(p) for p in prop["anyOf"] if p.get("type") != "null")
    if prop.get("format") in FORMATS:
        return FORMATS[prop["format"]]
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}))}"
    if kind == "object" and "additionalProperties" in prop and isinstance(prop["additionalProperties"], dict):
        return f"mapping of name to {_type(prop['additionalProperties'])}"
    return {"string": "text", "integer": "integer", "number": "number", "boolean": "true/false",
            "object": "mapping"}.get(kind, kind)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| key | type | required | default | meaning |", "| --- | --- | --- | --- | --- |"]
    for name, prop in schema.get("properties", {}).items():
        default = f"`{prop['default']}`" if "default" in prop and prop["default"] not in (None, [], {}) else ""
        rows.append(f"| `{name}` | {_cell(_type(prop))} | {'yes' if name in required else ''} | {_cell(default)} | "
                    f"{_cell(prop.get('description', ''))} |")
    return rows


def _reached(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    """The names of the objects the schema uses, in the order a reader meets them (depth first)."""
    order: list[str] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref and (name := ref.rsplit("/", 1)[-1]) not in order and name in defs:
                order.append(name)
                visit(defs[name])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit({k: v for k, v in schema.items() if k != "$defs"})
    return order


def schema_markdown(schema: dict[str, Any], title: str, intro: str) -> str:
    """The reference page of a schema: the top object's keys, then every object it reaches."""
    defs = schema.get("$defs", {})
    lines = [f"# {title}", "", intro, "", f"## {schema.get('title', 'Top level')}", ""]
    if schema.get("description"):
        lines += [_cell(schema["description"]), ""]
    lines += _table(schema)
    for name in _reached(schema, defs):
        lines += ["", f"## {name}", ""]
        if defs[name].get("description"):
            lines += [_cell(defs[name]["description"]), ""]
        if "properties" in defs[name]:
            lines += _table(defs[name])
        elif "enum" in defs[name]:
            lines += [f"One of {_type(defs[name])}."]
    return "\n".join(lines) + "\n"
