"""The definitions of a team's own Dagster project, with no Python of its own: a workspace entry
`python_module: evalsuite_dagster.project` with `working_directory:` the project's folder loads the component
instances of its defs folder (a SuiteComponent per suite spec, one SharedResources), as `dg` lays projects out:
a pyproject.toml naming `[tool.dg.project] root_module`, and `<root_module>/defs/<name>/defs.yaml`."""
from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg


@dg.definitions
def defs() -> dg.Definitions:
    root = Path.cwd()
    if str(root) not in sys.path:  # the project's folder holds YAML only: nothing to install, so import it from here
        sys.path.insert(0, str(root))
    return dg.load_from_defs_folder(path_within_project=root)
