"""What a site is built from: release folders, run folders (`evalsuite run`, `evalsuite import-run`) and a release's
scorecard folder (the Dagster graph's `runs/<suite>/<version>` with one run folder per agent under `agents/`; a
recorded run imported there is published as a run of its own)."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from evalsuite.core.records import TaskRecord
from evalsuite.releases.release import Release
from evalsuite.scoring import runlog
from evalsuite.scoring.recorded import RecordingFile
from evalsuite.scoring.runlog import RUN_JSON, SCORECARD_JSON, imported_runs, is_run_folder, is_scorecard_folder
from evalsuite.scoring.scorecard import Scorecard
from evalsuite.site.sanitize import SiteError
from evalsuite.tasks.heldout import log_read
from evalsuite.trials.tracelog import TrialRecord

PURPOSE = "publication"  # the access log's word for a site build reading held-out tasks (to leave them out)


@dataclass
class RunSource:
    """One scored run: its scorecard as stored, every trial record, the task set it ran on and its release."""

    folder: Path
    card: Scorecard
    records: list[TrialRecord]
    tasks: list[TaskRecord]
    release_path: Path
    compare: list[dict] = field(default_factory=list)
    slug: str = ""  # its pages' file name stem, unique in the site (set by collect)
    recording: RecordingFile | None = None  # an imported run's provenance and replay findings


@dataclass
class Sources:
    releases: dict[tuple[str, str], Release] = field(default_factory=dict)  # by (suite, version)
    runs: list[RunSource] = field(default_factory=list)


def collect(paths: list[Path]) -> Sources:
    """Read every named folder; a run's release comes along when its folder still exists."""
    out = Sources()
    for raw in paths:
        path = Path(raw)
        if (path / "manifest.json").is_file():
            _add_release(out, Release(path))
        elif is_run_folder(path) or is_scorecard_folder(path):
            for folder in _runs_in(path):
                _add_run(out, read_source(folder))
        else:
            raise SiteError(f"{path}: neither a release folder (manifest.json), a run folder ({RUN_JSON}) "
                            f"nor a scorecard folder ({SCORECARD_JSON} and {runlog.AGENTS}/)")
    if not out.releases and not out.runs:
        raise SiteError("nothing to publish: name at least one release or run folder")
    return out


def _runs_in(path: Path) -> list[Path]:
    """A run folder; a scorecard folder and the recorded runs imported under it (those alone while the release's
    agents are not scored yet)."""
    if is_run_folder(path):
        return [path]
    imported = imported_runs(path)
    return imported if imported and not (path / SCORECARD_JSON).is_file() else [path, *imported]


def _add_run(out: Sources, run: RunSource) -> None:
    if any(r.folder.resolve() == run.folder.resolve() for r in out.runs):
        return  # named twice
    stem = slug(f"{run.card.suite}-{run.card.suite_version}-{run.folder.name}")
    taken = {r.slug for r in out.runs}
    run.slug = next(f"{stem}{n or ''}" for n in range(len(taken) + 1) if f"{stem}{n or ''}" not in taken)
    out.runs.append(run)
    if (run.release_path / "manifest.json").is_file():
        _add_release(out, Release(run.release_path))


def slug(text: str) -> str:
    """A file name for any agent, task or folder name (`openai:gpt-4o`, `mcp:python agent.py`): safe characters,
    and a short hash when characters had to be replaced, so two names never share a file."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", text)
    return safe if safe == text else f"{safe}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def _add_release(out: Sources, release: Release) -> None:
    out.releases.setdefault((release.manifest.suite, release.manifest.version), release)


def read_source(folder: Path) -> RunSource:
    """A scored run folder, or a scorecard folder whose agents each have a run folder under agents/."""
    folder = Path(folder)
    if not (folder / SCORECARD_JSON).is_file():
        raise SiteError(f"{folder / SCORECARD_JSON}: no scorecard yet; score the run first "
                        f"(`evalsuite score {folder}`)")
    run = runlog.read_run(folder)
    card = run.scorecard
    log_read(run.tasks, PURPOSE, f"{card.suite}/{card.suite_version} run {folder.name}")  # read to be left out
    return RunSource(folder=folder, card=card, records=run.records, tasks=run.tasks,
                     release_path=Path(run.meta.release), compare=run.compare, recording=run.recording)
