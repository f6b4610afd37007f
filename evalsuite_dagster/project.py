"""The definitions of a team's own Dagster project, with no Python of its own: a workspace entry
`python_module: evalsuite_dagster.project` with `working_directory:` the project's folder loads the component
instances of its defs folder (a SuiteComponent per suite spec, one SharedResources), as `dg` lays projects out:
a pyproject.toml naming `[tool.dg.project] root_module`, and `<root_module>/defs/<name>/defs.yaml`. The bundled
suites' project (assets/) loads the same way."""
from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg


def _project_root() -> Path:
    """The working directory Dagster imports this module from: it stands first on sys.path only while the import
    runs (dagster's load_python_module), and the definitions are built later; else the current folder."""
    first = Path(sys.path[0]).resolve() if sys.path and sys.path[0] else Path.cwd()
    return first if any((first / name).is_file() for name in ("pyproject.toml", "dg.toml")) else Path.cwd()


ROOT = _project_root()


@dg.definitions
def defs() -> dg.Definitions:
    if str(ROOT) not in sys.path:  # the project's folder holds YAML only: nothing to install, so import it from here
        sys.path.insert(0, str(ROOT))
    return dg.load_from_defs_folder(path_within_project=ROOT)
