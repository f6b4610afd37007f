"""What every importer checks of a peer's folder before it writes anything: the files are there and are the pinned
snapshot's, each refusal one line naming the file."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from evalsuite.core.hashing import file_sha256


def require_files(folder: Path, names: Iterable[str], error: type[Exception]) -> None:
    if not folder.is_dir():
        raise error(f"{folder}: not a folder")
    missing = sorted(n for n in names if not (folder / n).is_file())
    if missing:
        also = f" (also missing: {', '.join(missing[1:])})" if missing[1:] else ""
        raise error(f"{folder / missing[0]}: file not found{also}")


def pinned_files(folder: Path, expected: Mapping[str, str], pinned: Mapping[str, str] | None,
                 error: type[Exception], snapshot: str) -> dict[str, str]:
    """The sha256 of each expected file; a file that differs from `pinned` (None: no pin) is refused, so a wrong
    folder leaves no half import behind."""
    require_files(folder, expected, error)
    sha = {name: file_sha256(folder / name) for name in expected}
    wrong = sorted(n for n, h in sha.items() if pinned and pinned.get(n) not in (None, h))
    if wrong:
        raise error(f"{folder}: files differ from the pinned {snapshot} snapshot: {wrong}")
    return sha
