"""The project home folder: seeds, tasks, releases, runs and logs live below it, private to its owner."""
from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE = 0o700  # answers live below the home (goal states, reference solutions): no one else may enter it


def home_dir(home: str | Path | None = None) -> Path:
    """The home folder, resolved and not created: `home` when given (a --home option, a resource setting),
    else EVALSUITE_HOME, else ./.evalsuite. The one place that rule is written."""
    return Path(home or os.environ.get("EVALSUITE_HOME", ".evalsuite")).resolve()


def private_home(home: str | Path | None = None) -> Path:
    """The home (home_dir() unless given), created if missing and made 0700: what is written below it is
    then out of reach of every other user, an agent's sandbox user included, whatever mode each file gets.

    An existing home that others may enter is tightened to 0700; one we may not chmod raises.
    """
    path = home_dir(home)
    path.mkdir(mode=PRIVATE, parents=True, exist_ok=True)  # the mode applies to the home itself, not its parents
    if stat.S_IMODE(path.stat().st_mode) != PRIVATE:
        path.chmod(PRIVATE)
    return path
