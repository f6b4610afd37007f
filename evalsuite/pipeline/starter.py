"""A starter project from a folder of exports (`evalsuite new`): the suite spec, rights, de-identification and
quality files, a declarative domain with one read tool per table, a policy skeleton and a README of what is left.

What can be read off the exports is filled in: each table's key (the first column whose values are all present
and distinct, `id`-like names first), the personal columns the personal-data scan finds (listed in the rights
manifest and given a surrogate rule). What only the team knows is left open, and the build stops at the first
gap with one line: the licence grants no use until someone writes down which; the domain has no write tool and no
derivation until the process is described.
"""
from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pandas as pd
import yaml

from evalsuite.sourcing.pii_scan import scan_tables
from evalsuite.sourcing.snapshot import read_csv
from evalsuite.sourcing.spec import SpecError

SURROGATES = {"email": "email", "phone": "phone", "iban": "iban", "card": "bank_account", "person_name": "name",
              "postal_address": "street_address"}


class StarterError(ValueError):
    """A starter project that cannot be made; the message is one line naming the folder or file."""


def _tables(exports: Path) -> dict[str, tuple[Path, pd.DataFrame]]:
    files = sorted(p for p in exports.iterdir() if p.suffix in (".csv", ".parquet")) if exports.is_dir() else []
    if not files:
        raise StarterError(f"{exports}: no .csv or .parquet exports in this folder")
    out = {}
    for path in files:
        name = re.sub(r"\W+", "_", path.stem.lower()).strip("_")
        if not name or name[0].isdigit():
            raise StarterError(f"{path}: the file name does not make a table name (letters, digits, _)")
        try:
            out[name] = (path, read_csv(path, str(path)) if path.suffix == ".csv" else pd.read_parquet(path))
        except (SpecError, OSError, ValueError) as exc:
            raise StarterError(str(exc).splitlines()[0]) from exc
    return out


def _key(df: pd.DataFrame) -> list[str]:
    """The first column that can be the key, id-like names first; every column when none can."""
    ranked = sorted(df.columns, key=lambda c: (not (c == "id" or str(c).endswith("_id")), list(df.columns).index(c)))
    for column in ranked:
        values = df[column]
        if values.notna().all() and values.is_unique:
            return [str(column)]
    return [str(c) for c in df.columns]


def _read_tool(table: str, key: list[str]) -> dict:
    where = " AND ".join(f"{k} = :{k}" for k in key)
    return {"kind": "read", "description": f"Read one {table} row by {', '.join(key)}.",
            "args": {k: {"type": "string"} for k in key},
            "steps": [{"sql": f"SELECT * FROM {table} WHERE {where}",
                       "error_if_empty": f"no {table} row with " + ", ".join(f"{k} {{{k}}}" for k in key)}]}


def new_project(exports: str | Path, out: str | Path, name: str) -> list[str]:
    """Write the starter project into `out` (new or empty); returns the personal columns the scan found."""
    exports, out = Path(exports).resolve(), Path(out)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise StarterError(f"--name {name!r}: a suite name is lower-case letters, digits and _")
    if out.exists() and any(out.iterdir()):
        raise StarterError(f"{out}: not empty; a starter project is written into a new or empty folder")
    tables = _tables(exports)
    keys = {t: _key(df) for t, (_, df) in tables.items()}
    personal = sorted({(f.table, f.column, f.detector) for f in scan_tables({t: df for t, (_, df) in tables.items()})})
    files = _files(exports, out, name, tables, keys, personal)
    (out / "policies").mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (out / rel).write_text(text)
    return [f"{t}.{c}" for t, c, _ in personal]


def _files(exports: Path, out: Path, name: str, tables: dict, keys: dict, personal: list) -> dict[str, str]:
    rel = Path(os.path.relpath(exports, out.resolve()))
    columns = sorted({f"{t}.{c}" for t, c, _ in personal})
    spec = {"name": name, "domain": "domain.yaml",
            "sources": {"name": f"{name}_export", "drop_folder": str(rel),
                        "tables": {t: {"path": str(rel / p.name)} for t, (p, _) in tables.items()}},
            "rights": ["rights.yaml"], "needed_uses": ["build_environments", "derive_tasks"], "deid": "deid.yaml",
            "quality": "quality.yaml", "policies": ["policies/policy_v1.md"],
            "derivation": {"seed": 7, "splits": {"train": 0.4, "test": 0.4, "held_out": 0.2}},
            "acceptance": {"reference_trials": 3, "max_quarantined_fraction": 0.1},
            "trial_protocol": {"trials": 4, "max_steps": 40},
            "agents": [{"name": "reference"}, {"name": "noop"}, {"name": "adversary"}]}
    rights = {"source": f"{name}_export", "license_ref": "(to fill in) the licence or data-use approval these "
              "exports come under", "licensor": "(to fill in) who granted it", "permitted_uses": [], "expires": None,
              "personal_data": bool(columns), "personal_columns": columns,
              "deidentification_required": bool(columns)}
    deid: dict = {"key_env": "EVALSUITE_DEID_KEY", "tables": {}}
    for t, c, detector in personal:
        deid["tables"].setdefault(t, {"columns": {}})["columns"][c] = {"rule": "surrogate",
                                                                       "kind": SURROGATES[detector]}
    quality = {t: {"primary_key": list(keys[t]), "required": list(keys[t])} for t in tables}
    domain = {"name": name, "version": "0.1.0", "now": f"{dt.date.today().isoformat()}T09:00:00",
              "tables": {t: {"key": keys[t]} for t in tables},
              "tools": {f"get_{t}": _read_tool(t, keys[t]) for t in tables},
              "roles": {f"{name}_agent": {"read": [f"get_{t}" for t in tables], "write": [], "forbidden": []}}}
    return {"suite.yaml": _yaml(spec, "The suite spec (docs/build-a-suite.md)."),
            "rights.yaml": _yaml(rights, "To fill in: the rights manifest: who licensed these exports, for which uses, "
                                         "until when. No use is granted until you list it."),
            "deid.yaml": _yaml(deid, "De-identification: the personal columns the scan found, each a surrogate; "
                                     "check them, and pseudonymise ids that name people."),
            "quality.yaml": _yaml(quality, "Data-quality expectations: the keys found in the exports; add required "
                                           "columns, value sets and foreign keys."),
            "domain.yaml": _yaml(domain, "To fill in: the declarative domain (docs/domains/declarative.md): one read "
                                         "tool per table so far; add the write tools, the role's forbidden tools, mark "
                                         "the resolved-cases table `cases: true` and add `derivation:`."),
            "policies/policy_v1.md": POLICY.format(name=name, today=dt.date.today().isoformat()),
            "README.md": README.format(name=name, exports=rel, personal=", ".join(columns) or "none",
                                       keys="\n".join(f"| `{t}` | {', '.join(keys[t])} |" for t in tables))}


def _yaml(data: dict, header: str) -> str:
    return f"# {header}\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


POLICY = """---
doc: {name}_policy
version: v1
effective_from: {today}
params: {{}}
---
# The {name} policy, version 1 (to fill in)

The policy staff applied, one numbered clause per rule. Every goal assertion cites a clause; a policy that changed
is a second file with its own effective date.

## P-1 The first rule
What the first rule requires, in the words staff applied it.
"""

README = """# {name}: a starter project

Made by `evalsuite new` from the exports in `{exports}`. It loads as it stands (`evalsuite domain check
suite.yaml`); `evalsuite build suite.yaml` stops at the first gap below with one line naming it.

What is left to fill in:

1. `rights.yaml`: the licence reference, the licensor, the permitted uses (none yet: the build stops at the rights
   review) and the expiry date.
2. `deid.yaml`: check the personal columns the scan found ({personal}); add any it could not see (ids that name a
   person, free text), and set `EVALSUITE_DEID_KEY` to your own secret.
3. `domain.yaml`: the write tools (SQL steps with their preconditions), the role's forbidden tools, the
   resolved-cases table marked `cases: true`, and `derivation:` (which column says a case was verified, its date,
   its recorded actions, the clause each write tool enforces, the volatile fields).
4. `policies/policy_v1.md`: the policy's clauses and parameters.
5. `quality.yaml`: required columns, value sets and foreign keys beyond the keys found:

| table | key found |
| --- | --- |
{keys}

Then: `evalsuite build suite.yaml`, `evalsuite run RELEASE --agent reference --agent noop --out runs/first`.
"""
