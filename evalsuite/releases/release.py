"""Releases: immutable, versioned suites that scores are tied to.

A release folder holds `manifest.json`, `tasks.jsonl` (accepted tasks only),
`world.sqlite` and, for a declarative domain, `domain.yaml` (its file, bound to
its columns). It is written to a temporary folder and renamed into place in
one step, so a failed or killed build never leaves a partial release. The
version is derived from the content, so identical inputs give the same version
and no duplicate.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evalsuite.core.hashing import json_sha256
from evalsuite.core.identity import AgentConfig, RunIdentity
from evalsuite.core.io import model_from, parse_json, read_text, staged_dir, write_json
from evalsuite.core.records import Simulator, TaskRecord
from evalsuite.domains.package import DomainPackage
from evalsuite.domains.ref import WorldRef
from evalsuite.domains.registry import lookup
from evalsuite.sourcing.spec import SiteSettings
from evalsuite.tasks.heldout import EXCLUDING_HELD_OUT, export_tasks, log_read
from evalsuite.tasks.taskfile import read_tasks, task_set_sha256, write_tasks
from evalsuite.worlds.world import World


class ReleaseError(RuntimeError):
    """A release that cannot be made or read; the message names the gate or file."""


class Quarantined(BaseModel):
    task_id: str
    reasons: list[str]


DOMAIN_FILE = "domain.yaml"


class ReleaseManifest(BaseModel):
    suite: str
    version: str
    domain: str  # the domain's name
    # where the domain is found when its name is not an installed entry point (evalsuite.domains.registry): DOMAIN_FILE
    # (a declarative domain, kept in the release) or a dotted module path; left out of the file otherwise, so
    # releases of the installed domains read as before
    domain_source: str | None = Field(None, exclude_if=lambda v: v is None)
    task_set_sha256: str
    seed_sha256: str
    environment_image: str
    tool_schemas_sha256: str
    policy_versions: list[str]
    rights_decision: dict[str, Any]
    acceptance: dict[str, Any]
    quarantined: list[Quarantined]
    simulator: Simulator | None = None
    n_tasks: int
    # the spec's `site:` settings when not the default (what the evidence site may publish); None: the default,
    # left out of the file so a release built before the setting existed reads the same
    site: SiteSettings | None = Field(None, exclude_if=lambda v: v is None)
    # the process dossier the tasks trace to (evalsuite.sourcing.dossier): its content hash and the customizations
    # this suite applies; left out of the file for a suite without one, so such releases read the same
    dossier_sha256: str | None = Field(None, exclude_if=lambda v: v is None)
    customizations: list[str] = Field([], exclude_if=lambda v: not v)


def release_version(prefix: str, identity: dict[str, Any]) -> str:
    return f"{prefix}{json_sha256(identity)[:12]}"


class Release:
    def __init__(self, path: Path):
        self.path = Path(path)
        manifest = self.path / "manifest.json"
        if not manifest.is_file():
            raise ReleaseError(f"{self.path}: not a release (no manifest.json)")
        self.manifest = model_from(manifest, parse_json(read_text(manifest, ReleaseError), str(manifest), ReleaseError),
                                   ReleaseManifest, ReleaseError)
        if self.manifest.domain_source is not None:  # so lookups by the tasks' domain name find it in this process
            self.domain()

    def tasks(self, purpose: str = "evaluation") -> list[TaskRecord]:
        """The released tasks; reading held-out ones is logged with who, when and why."""
        path = self.path / "tasks.jsonl"
        tasks = read_tasks(path)
        # A task file edited or cut short after release must not be scored under the release's version.
        if task_set_sha256(tasks) != self.manifest.task_set_sha256:
            raise ReleaseError(f"{path}: {len(tasks)} task(s) do not hash to the manifest's task set "
                               f"{self.manifest.task_set_sha256[:12]}… ({self.manifest.n_tasks} tasks); "
                               f"the file was changed after release")
        log_read(tasks, purpose, f"{self.manifest.suite}/{self.manifest.version}")
        return tasks

    def open_world(self) -> World:
        return self.world_ref().open()

    def world_ref(self) -> WorldRef:
        m = self.manifest
        return WorldRef(domain=m.domain, path=str((self.path / "world.sqlite").resolve()), seed_sha256=m.seed_sha256,
                        source=self.domain_source())

    def domain_source(self) -> str | None:
        """Where another process finds the release's domain (registry.lookup), when its name alone does not."""
        source = self.manifest.domain_source
        return str((self.path / source).resolve()) if source == DOMAIN_FILE else source

    def domain(self) -> DomainPackage:
        """The release's domain, loaded (an unknown one raises UnknownDomainError naming what is installed)."""
        return lookup(self.manifest.domain, self.domain_source())

    def run_identity(self, agent_configs: dict[str, AgentConfig] | None = None) -> RunIdentity:
        """What every trial on this release is tied to."""
        m = self.manifest
        return RunIdentity(suite=m.suite, suite_version=m.version, task_set_sha256=m.task_set_sha256,
                           seed_sha256=m.seed_sha256, environment_image=m.environment_image,
                           tool_schemas_sha256=m.tool_schemas_sha256, simulator=m.simulator,
                           agent_configs=agent_configs or {})


def write_release(root: str | Path, manifest: ReleaseManifest, tasks: list[TaskRecord], world_file: Path,
                  extra: dict[str, str] | None = None) -> Path:
    """Write atomically to root/<suite>/<version>/; an existing identical release is reused."""
    dest = Path(root) / manifest.suite / manifest.version
    if (dest / "manifest.json").is_file():
        return dest
    stamp = {"version": manifest.version, "task_set_sha256": manifest.task_set_sha256}
    stamped = [t.model_copy(update={"suite": t.suite.model_copy(update=stamp)}) for t in tasks]
    with staged_dir(dest) as tmp:  # one step: the release appears whole or not at all
        write_tasks(tmp / "tasks.jsonl", stamped)
        shutil.copyfile(world_file, tmp / "world.sqlite")
        for name, body in (extra or {}).items():
            (tmp / name).write_text(body)
        write_json(tmp / "manifest.json", manifest.model_dump(mode="json"))
    return dest


def latest_release(root: str | Path, suite: str) -> Release:
    folder = Path(root) / suite
    # a hidden folder is a release still being written (see staged_dir), never one to read
    found = sorted((p for p in folder.glob("*/manifest.json") if not p.parent.name.startswith(".")),
                   key=lambda p: p.stat().st_mtime) if folder.is_dir() else []
    if not found:
        raise ReleaseError(f"{folder}: no release of suite {suite}")
    return Release(found[-1].parent)


def export_release(release_dir: str | Path, purpose: str, out: str | Path) -> list[TaskRecord]:
    """`evalsuite export`: the release's tasks a purpose may receive written to `out` as JSONL (training and prompt
    tuning never receive held-out tasks); an unknown purpose raises ReleaseError before the release is read."""
    if purpose not in EXCLUDING_HELD_OUT | {"evaluation", "review"}:
        raise ReleaseError(f"--purpose: unknown purpose {purpose!r}")
    tasks = export_tasks(Release(release_dir).tasks(purpose=purpose), purpose)  # type: ignore[arg-type]
    write_tasks(out, tasks)
    return tasks
