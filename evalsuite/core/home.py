"""The project home folder: seeds, tasks, releases, runs and logs live below it."""
from __future__ import annotations

import os
from pathlib import Path


def home_dir() -> Path:
    """EVALSUITE_HOME, or ./.evalsuite when it is unset."""
    return Path(os.environ.get("EVALSUITE_HOME", ".evalsuite")).resolve()
