"""A τ²-bench policy.md (retail, airline) as a versioned evalsuite policy document (see evalsuite.sourcing.policies).

The text is kept word for word; only headings change. Every section becomes a
numbered clause `## R-n <title>`: the untitled preamble is "General", and a
`###` subsection is titled "<parent> / <sub>" so its context survives the
flattening. Clause ids therefore follow the policy's own sections, in order.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

import yaml

PREFIX = "R"
PREAMBLE = "General"
_HEADING = re.compile(r"^(#{1,3})\s+(.*\S)\s*$")


def clause_titles(policy_md: str) -> list[str]:
    """Clause titles in order, R-1 first."""
    return [title for title, _ in _sections(policy_md)[1]]


def _sections(policy_md: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(lines before the first section, [(clause title, body lines)])."""
    head: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    parent = ""
    for line in policy_md.splitlines():
        m = _HEADING.match(line)
        level = len(m.group(1)) if m else 0
        if level == 1:
            if sections or head:
                raise ValueError(f"policy: a second top-level heading {line!r}")
            head.append(line)
            sections.append((PREAMBLE, []))
        elif level == 2:
            parent = m.group(2)
            sections.append((parent, []))
        elif level == 3:
            if not parent:
                raise ValueError(f"policy: subsection {line!r} outside a section")
            sections.append((f"{parent} / {m.group(2)}", []))
        elif sections:
            sections[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"policy: text before the title: {line!r}")
    return head, sections


def versioned_policy(policy_md: str, doc: str, version: str, effective_from: dt.date, params: dict[str, Any]) -> str:
    """The policy with YAML front matter and `## R-n` clause headings, readable by `load_policy`."""
    head, sections = _sections(policy_md)
    front = yaml.safe_dump({"doc": doc, "version": version, "effective_from": effective_from, "params": params},
                           sort_keys=False)
    out = ["---", front.rstrip("\n"), "---", *head]
    for n, (title, body) in enumerate(sections, 1):
        if out[-1].strip():
            out.append("")
        out.append(f"## {PREFIX}-{n} {title}")
        out.extend(body)
    return "\n".join(out).rstrip("\n") + "\n"


def combined(main_md: str, tech_md: str, tech_title: str) -> str:
    """τ²-bench telecom's agent policy (its main policy, then its technical-support document) as one policy.md:
    the main policy as it is; each top-level heading of the second becomes a section "<tech_title>: <heading>", its
    sections subsections, and a deeper one a subsection titled "<section> / <sub>", so every heading survives."""
    out, section = [main_md.rstrip("\n"), ""], ""
    for line in tech_md.splitlines():
        m = _HEADING.match(line)
        level = len(m.group(1)) if m else 0
        if level == 1:
            out.append(f"## {tech_title}: {m.group(2)}")
        elif level == 2:
            section = m.group(2)
            out.append(f"### {section}")
        elif level == 3:
            out.append(f"### {section} / {m.group(2)}")
        else:
            out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


def clause_ids(policy_md: str) -> dict[str, str]:
    """Clause title -> clause id."""
    return {title: f"{PREFIX}-{n}" for n, title in enumerate(clause_titles(policy_md), 1)}
