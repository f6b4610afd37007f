"""Versioned policy documents: markdown with front matter and numbered clauses.

A task derived from a case resolved on a date ships with the policy in effect
on that date, so its goal state never contradicts the policy the agent reads.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalsuite.core.io import model_from, parse_yaml, read_text
from evalsuite.core.records import Clause, Policy

_CLAUSE = re.compile(r"^##\s+([A-Z][A-Z0-9]*-\d+)\s+(.*)$", re.M)


class PolicyError(ValueError):
    """A policy document that cannot be read; the message names the file."""


class PolicyDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    doc: str = Field(min_length=1)
    version: str = Field(min_length=1)
    effective_from: dt.date
    params: dict[str, Any] = {}
    text: str
    clauses: list[Clause]

    def as_policy(self) -> Policy:
        return Policy(doc=self.doc, version=self.version, effective_from=self.effective_from, clauses=self.clauses)


def load_policy(path: str | Path) -> PolicyDoc:
    """A policy document (UTF-8 Markdown); every problem raises a one-line PolicyError naming the file."""
    path = Path(path)
    if not path.is_file():
        raise PolicyError(f"{path}: policy document not found")
    raw = read_text(path, PolicyError).replace("\r\n", "\n")  # a file saved on Windows has the same front matter
    if not raw.startswith("---\n"):
        raise PolicyError(f"{path}: front matter (doc, version, effective_from) missing")
    head, _, body = raw[4:].partition("\n---\n")
    meta = parse_yaml(head, path, PolicyError, first_line=2, invalid="invalid YAML in front matter") or {}
    clauses = []
    matches = list(_CLAUSE.finditer(body))
    for m, nxt in zip(matches, matches[1:] + [None]):
        text = body[m.end(): nxt.start() if nxt else len(body)].strip()
        clauses.append(Clause(id=m.group(1), text=f"{m.group(2).strip()}. {' '.join(text.split())}".strip()))
    if not clauses:
        raise PolicyError(f"{path}: no numbered clauses ('## ID-1 Title' headings)")
    return model_from(path, meta, PolicyDoc, PolicyError, text=body.strip(), clauses=clauses)


def policy_in_effect(policies: list[PolicyDoc], on: dt.date) -> PolicyDoc:
    """The latest version whose effective date is on or before `on`."""
    live = [p for p in policies if p.effective_from <= on]
    if not live:
        raise PolicyError(f"no policy in effect on {on}; earliest is {min(p.effective_from for p in policies)}")
    return max(live, key=lambda p: p.effective_from)
