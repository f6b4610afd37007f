"""One build of a suite in a home at a time, and the sweep of what a killed build left behind."""
from __future__ import annotations

import logging
import math
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from evalsuite.pipeline.paths import Paths

log = logging.getLogger(__name__)

TIMEOUT_ENV = "EVALSUITE_LOCK_TIMEOUT"
DEFAULT_TIMEOUT = 600.0  # seconds a second build waits for the first before it stops
LOCK_NAME = "build.lock"
# The temporaries of evalsuite.core.io (`.{name}-{16 hex}.tmp`, and `.old` for a folder being replaced), with the
# side files SQLite keeps beside a database written under such a name.
TEMPORARY = re.compile(r"\..+-[0-9a-f]{16}\.(tmp|old)(-journal|-wal|-shm)?")
SQLITE_SIDE = ("", "-journal", "-wal", "-shm")


class LockError(RuntimeError):
    """The suite's lock could not be taken (another build holds it) or its timeout setting is wrong; one line."""


def lock_timeout() -> float:
    """Seconds to wait for another build of the suite: EVALSUITE_LOCK_TIMEOUT, 0 = stop at once."""
    raw = os.environ.get(TIMEOUT_ENV)
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isnan(value) or value < 0:
        raise LockError(f"{TIMEOUT_ENV}: expected seconds to wait (a number, 0 or more), got {raw!r}")
    return value


def lock_path(paths: Paths) -> Path:
    return paths.root / LOCK_NAME


@contextmanager
def suite_lock(paths: Paths) -> Iterator[list[Path]]:
    """Hold the suite's build lock; on first taking it, remove what a killed build left and yield those paths.

    The kernel drops the lock when its holder dies, so a killed build never blocks the next one. Taking it again
    in the same thread (a build inside a build) is reentrant and sweeps nothing.
    """
    timeout = lock_timeout()
    path = lock_path(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, is_singleton=True)
    _acquire(lock, paths, timeout)
    try:
        yield sweep(paths) if lock.lock_counter == 1 else []
    finally:
        lock.release()


def _acquire(lock: FileLock, paths: Paths, timeout: float) -> None:
    try:
        lock.acquire(blocking=False)
        return
    except Timeout:
        if timeout == 0:
            raise LockError(_busy(paths, timeout)) from None
    log.warning("suite %s is being built by another process; waiting up to %g s for %s",
                paths.root.name, timeout, lock.lock_file)
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise LockError(_busy(paths, timeout)) from None


def _busy(paths: Paths, timeout: float) -> str:
    return (f"suite {paths.root.name} is being built by another process: {lock_path(paths)} still held after "
            f"{timeout:g} s (set {TIMEOUT_ENV} to wait longer)")


def is_temporary(path: Path, paths: Paths) -> bool:
    """A name only a writer of the build gives its unfinished output (or a World.build of old, `world.tmp`)."""
    legacy = {paths.world.with_suffix(".tmp").name + side for side in SQLITE_SIDE}
    return bool(TEMPORARY.fullmatch(path.name)) or (path.parent == paths.root and path.name in legacy)


def sweep(paths: Paths) -> list[Path]:
    """Remove every temporary a killed build left in the suite's folder and its releases folder; returns them.

    Call it only while holding the suite's lock: every writer of these folders holds it, so no temporary there
    belongs to a live build.
    """
    removed = []
    for top in (paths.root, paths.releases / paths.root.name):
        for folder, dirs, files in os.walk(top):
            for name in [*dirs, *files]:
                found = Path(folder) / name
                if is_temporary(found, paths):
                    _remove(found)
                    removed.append(found)
            dirs[:] = [d for d in dirs if not is_temporary(Path(folder) / d, paths)]
    if removed:  # raw copies among them: say so once, and name each at INFO
        log.warning("removed %d temporary file(s) or folder(s) an interrupted build of suite %s left in %s",
                    len(removed), paths.root.name, paths.home)
    for found in removed:
        log.info("removed %s", found)
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
