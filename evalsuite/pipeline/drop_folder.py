"""The supplier drop folder: its files' content hashes, so a new or changed delivery (not a touched file) triggers
a build."""
from __future__ import annotations

from evalsuite.core.hashing import file_sha256, json_sha256
from evalsuite.sourcing.spec import SuiteSpec


def drop_folder_state(spec: SuiteSpec, previous: dict[str, list] | None = None) -> dict[str, list]:
    """{relative path: [size, mtime_ns, sha256]} of every file in the drop folder.

    A file whose size and mtime are unchanged keeps its recorded hash; any other
    file is hashed again, so a touched but unchanged file keeps its hash.
    """
    if not spec.sources.drop_folder:
        return {}
    root = spec.resolve(spec.sources.drop_folder)
    state: dict[str, list] = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")) if root.is_dir() else []:
        rel, st = str(f.relative_to(root)), f.stat()
        old = (previous or {}).get(rel)
        same = old is not None and old[0] == st.st_size and old[1] == st.st_mtime_ns
        state[rel] = [st.st_size, st.st_mtime_ns, old[2] if same else file_sha256(f)]
    return state


def drop_folder_changes(previous: dict[str, list], current: dict[str, list]) -> list[str]:
    """Files added, removed or changed in content (not merely touched), by relative path."""
    names = sorted(set(previous) | set(current))
    return [n for n in names if (previous.get(n) or [None] * 3)[2] != (current.get(n) or [None] * 3)[2]]


def drop_folder_digest(state: dict[str, list]) -> str:
    return json_sha256({k: v[2] for k, v in state.items()})
