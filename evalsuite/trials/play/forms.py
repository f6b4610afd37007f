"""A tool's argument schema as the fields of a web form, and a submitted form back as the call's arguments."""
from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FormField:
    """One argument of a tool as a form field."""

    name: str
    label: str
    kind: str  # choice, text, integer, number, boolean, json (typed list/object) or any (no declared type)
    required: bool
    choices: tuple[str, ...] = ()
    hint: str = ""  # the schema's description

    @property
    def note(self) -> str:
        """What the person is told beside the label: the type the text is read as, and the description."""
        return " ".join(x for x in (_KIND_NOTES.get(self.kind, ""), self.hint) if x)


_KIND_NOTES = {"integer": "(whole number)", "number": "(number)", "boolean": "(true or false)", "json": "(JSON)",
               "any": "(text, or a JSON list or object)"}


def form_fields(schema: Mapping[str, Any]) -> list[FormField]:
    """The fields of a tool's argument schema (JSON Schema, as agents get it), in its order."""
    required = set(schema.get("required", ()))
    return [_field(name, prop, name in required) for name, prop in schema.get("properties", {}).items()]


def _field(name: str, prop: Mapping[str, Any], required: bool) -> FormField:
    options = [p for p in prop.get("anyOf", ()) if p.get("type") != "null"]
    if len(options) == 1:  # an optional value: the one type it takes when given
        prop = {**prop, **options[0]}
    label, hint = prop.get("title", name), prop.get("description", "")
    if "enum" in prop:
        return FormField(name, label, "choice", required, tuple(str(v) for v in prop["enum"]), hint)
    types = {prop.get("type")} if "type" in prop else {p.get("type") for p in options}
    if "string" in types or not types - {None}:  # a string among the choices, or none declared
        return FormField(name, label, "text" if "string" in types else "any", required, (), hint)
    if types <= {"integer", "number", "boolean"} and len(types) == 1:
        return FormField(name, label, types.pop(), required, (), hint)
    return FormField(name, label, "json", required, (), hint)


def form_arguments(fields: list[FormField], form: Mapping[str, str]) -> dict[str, Any]:
    """A tool call's arguments from a submitted form. A blank field is left out, as an agent leaves out an
    argument; a value that does not convert to its field's type is passed as typed, so the tool answers with
    the same error an agent sending it would get."""
    args = {}
    for f in fields:
        text = form.get(f.name, "")
        if text.strip() == "":
            continue
        args[f.name] = _convert(f, text)
    return args


def _convert(f: FormField, text: str) -> Any:
    if f.kind == "choice":
        return text
    if f.kind == "integer" and re.fullmatch(r"\s*[-+]?\d+\s*", text):
        return int(text)
    if f.kind == "number":
        with contextlib.suppress(ValueError):  # not a number: passed as typed, for the tool to refuse
            return float(text)
    if f.kind == "boolean" and text in ("true", "false"):
        return text == "true"
    if f.kind == "json" or (f.kind == "any" and text.lstrip()[:1] in ("[", "{")):
        with contextlib.suppress(ValueError):  # not JSON: passed as typed, for the tool to refuse
            return json.loads(text)
    return text
