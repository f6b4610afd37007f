"""Release history: list a suite's releases and diff two of them task by task and field by field."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalsuite.core.home import home_dir
from evalsuite.releases.release import Release, ReleaseError, ReleaseManifest, latest_release
from evalsuite.sourcing.spec import SUITE_NAME, load_spec

# what a release stamps into each task (see tasks/taskfile.task_set_sha256): not a change of the task
STAMPED = {"suite": {"version", "task_set_sha256"}}
MANIFEST_FIELDS = ("policy_versions", "seed_sha256", "tool_schemas_sha256", "environment_image", "rights_decision")


class ReleaseRow(BaseModel):
    version: str
    created: str
    created_from: str  # where `created` comes from: "folder mtime" (manifests record no time)
    n_tasks: int
    quarantined: int
    policy_versions: list[str]
    seed_sha256: str
    path: str


class TaskChange(BaseModel):
    task_id: str
    fields: list[str]


class QuarantineChange(BaseModel):
    task_id: str
    change: str  # "entered" or "left"
    reasons: list[str]


class FieldChange(BaseModel):
    field: str
    old: Any
    new: Any


class ReleaseDiff(BaseModel):
    old: str
    new: str
    added: list[str]
    removed: list[str]
    changed: list[TaskChange]
    quarantine: list[QuarantineChange]
    manifest: list[FieldChange]

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.quarantine or self.manifest)


def suite_releases(suite: str | Path, home: str | Path | None = None) -> tuple[Path, str]:
    """(the home's releases folder, the suite's name) for a suite named as a user types it, by its name or by
    its spec file (a .yaml path, read to learn the name)."""
    ref = str(suite)
    if Path(ref).suffix in (".yaml", ".yml") or Path(ref).is_file():
        return home_dir(home) / "releases", load_spec(ref).name
    if not re.fullmatch(SUITE_NAME, ref):
        raise ReleaseError(f"{ref}: neither a suite name (lower case letters, digits, _) nor a suite spec (.yaml)")
    return home_dir(home) / "releases", ref


def named_release(ref: str | Path, home: str | Path | None = None) -> Release:
    """A release folder as is; a suite, by its name or its spec, is its newest release in the home."""
    if Path(ref).is_dir():
        return Release(Path(ref))
    return latest_release(*suite_releases(ref, home))


def releases(root: str | Path, suite: str) -> list[ReleaseRow]:
    """The suite's releases under root, newest first (by recorded time, else the folder's mtime)."""
    folder = Path(root) / suite
    if not folder.is_dir():
        raise ReleaseError(f"{folder}: no release of suite {suite}")
    rows = [_row(Release(p.parent)) for p in folder.glob("*/manifest.json") if not p.parent.name.startswith(".")]
    return sorted(rows, key=lambda r: r.created, reverse=True)


def _row(rel: Release) -> ReleaseRow:
    m = rel.manifest
    # the manifest records no creation time, so the folder's mtime stands in (and says so)
    created = datetime.fromtimestamp(rel.path.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
    return ReleaseRow(version=m.version, created=created, created_from="folder mtime",
                      n_tasks=m.n_tasks, quarantined=len(m.quarantined), policy_versions=m.policy_versions,
                      seed_sha256=m.seed_sha256, path=str(rel.path))


def diff_releases(old: Release, new: Release) -> ReleaseDiff:
    """What changed from old to new: tasks, task fields, quarantine and the manifest's identity fields."""
    before = {t.task_id: t.model_dump(mode="json", exclude=STAMPED) for t in old.tasks("release diff")}
    after = {t.task_id: t.model_dump(mode="json", exclude=STAMPED) for t in new.tasks("release diff")}
    changed = [TaskChange(task_id=i, fields=_changed_fields(before[i], after[i]))
               for i in sorted(before.keys() & after.keys()) if before[i] != after[i]]
    return ReleaseDiff(old=old.manifest.version, new=new.manifest.version, added=sorted(after.keys() - before.keys()),
                       removed=sorted(before.keys() - after.keys()), changed=changed,
                       quarantine=_quarantine_changes(old.manifest, new.manifest),
                       manifest=[FieldChange(field=f, old=getattr(old.manifest, f), new=getattr(new.manifest, f))
                                 for f in MANIFEST_FIELDS if getattr(old.manifest, f) != getattr(new.manifest, f)])


def _changed_fields(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the differing fields, descending into nested records."""
    out = []
    for key in sorted(a.keys() | b.keys()):
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            out += _changed_fields(x, y, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}")
    return out


def _quarantine_changes(old: ReleaseManifest, new: ReleaseManifest) -> list[QuarantineChange]:
    before = {q.task_id: q.reasons for q in old.quarantined}
    after = {q.task_id: q.reasons for q in new.quarantined}
    entered = [QuarantineChange(task_id=i, change="entered", reasons=after[i])
               for i in sorted(after.keys() - before.keys())]
    left = [QuarantineChange(task_id=i, change="left", reasons=before[i]) for i in sorted(before.keys() - after.keys())]
    return entered + left


def resolve(ref: str | Path, root: str | Path | None, suite: str | None) -> Release:
    """A release folder, or a version id of `suite` under root."""
    path = Path(ref)
    if path.is_dir():
        return Release(path)
    if root is None or suite is None:
        raise ReleaseError(f"{ref}: not a release folder (give --suite SUITE to name a release by version)")
    if not (Path(root) / suite / str(ref)).is_dir():
        raise ReleaseError(f"{ref}: no release {ref} of suite {suite} in {Path(root) / suite}")
    return Release(Path(root) / suite / str(ref))


def diff_refs(old: str, new: str, suite: str | Path | None = None, home: str | Path | None = None) -> ReleaseDiff:
    """`evalsuite releases diff`: two releases, each a folder or (with `suite`, a name or spec) a version id."""
    root, name = suite_releases(suite, home) if suite else (None, None)
    return diff_releases(resolve(old, root, name), resolve(new, root, name))


def short(v: Any) -> str:
    """A 64-hex hash cut to 12 characters; anything else as is."""
    return v[:12] if isinstance(v, str) and len(v) == 64 else str(v)


def diff_lines(d: ReleaseDiff) -> list[str]:
    """The diff as plain lines for a terminal."""
    if d.empty:
        return [f"{d.old} -> {d.new}: no change"]
    lines = [f"{d.old} -> {d.new}: {len(d.added)} added, {len(d.removed)} removed, {len(d.changed)} changed"]
    lines += [f"+ {i}" for i in d.added] + [f"- {i}" for i in d.removed]
    lines += [f"~ {c.task_id}: {', '.join(c.fields)}" for c in d.changed]
    lines += [f"quarantine {q.change}: {q.task_id} ({'; '.join(q.reasons)})" for q in d.quarantine]
    lines += [f"{f.field}: {short(f.old)} -> {short(f.new)}" for f in d.manifest]
    return lines


def previous_release(root: str | Path, suite: str, version: str) -> Release | None:
    """The newest release of the suite other than `version`, if any."""
    rows = [r for r in releases(root, suite) if r.version != version] if (Path(root) / suite).is_dir() else []
    return Release(Path(rows[0].path)) if rows else None
