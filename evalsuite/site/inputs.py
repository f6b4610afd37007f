"""What a site is built from: release folders, run folders (`evalsuite run`) and a release's scorecard folder
(the Dagster graph's `runs/<suite>/<version>` with one run folder per agent under `agents/`)."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from evalsuite.core.io import model_from, parse_json, read_text
from evalsuite.core.records import TaskRecord
from evalsuite.releases.release import Release
from evalsuite.scoring.scorecard import Scorecard, load_records
from evalsuite.site.sanitize import SiteError
from evalsuite.tasks.heldout import log_read
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.trials.tracelog import TrialRecord

PURPOSE = "publication"  # the access log's word for a site build reading held-out tasks (to leave them out)


@dataclass
class RunSource:
    """One scored run: its scorecard as stored, every trial record, the task set it ran on and its identity."""

    folder: Path
    card: Scorecard
    records: list[TrialRecord]
    tasks: list[TaskRecord]
    identity: dict
    release_path: Path
    compare: list[dict] = field(default_factory=list)
    slug: str = ""  # its pages' file name stem, unique in the site (set by collect)


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
        elif (path / "run.json").is_file() or (path / "agents").is_dir():
            run = read_run(path)
            if any(r.folder.resolve() == run.folder.resolve() for r in out.runs):
                continue  # named twice
            stem = slug(f"{run.card.suite}-{run.card.suite_version}-{run.folder.name}")
            taken = {r.slug for r in out.runs}
            run.slug = next(f"{stem}{n or ''}" for n in range(len(taken) + 1) if f"{stem}{n or ''}" not in taken)
            out.runs.append(run)
            if (run.release_path / "manifest.json").is_file():
                _add_release(out, Release(run.release_path))
        else:
            raise SiteError(f"{path}: neither a release folder (manifest.json), a run folder (run.json) "
                            "nor a scorecard folder (scorecard.json and agents/)")
    if not out.releases and not out.runs:
        raise SiteError("nothing to publish: name at least one release or run folder")
    return out


def slug(text: str) -> str:
    """A file name for any agent, task or folder name (`openai:gpt-4o`, `mcp:python agent.py`): safe characters,
    and a short hash when characters had to be replaced, so two names never share a file."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", text)
    return safe if safe == text else f"{safe}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def _add_release(out: Sources, release: Release) -> None:
    out.releases.setdefault((release.manifest.suite, release.manifest.version), release)


def read_run(folder: Path) -> RunSource:
    """A run folder, or a scorecard folder whose agents each have a run folder under agents/."""
    folder = Path(folder)
    card_file = folder / "scorecard.json"
    if not card_file.is_file():
        raise SiteError(f"{card_file}: no scorecard yet; score the run first (`evalsuite score {folder}`)")
    card = model_from(card_file, _json(card_file), Scorecard, SiteError)
    parts = [folder] if (folder / "run.json").is_file() else sorted(p for p in (folder / "agents").iterdir()
                                                                     if (p / "run.json").is_file())
    if not parts:
        raise SiteError(f"{folder / 'agents'}: no agent run folder (run.json) under it")
    metas = [_json(p / "run.json") for p in parts]
    records = [r for p in parts for r in load_records(p)]
    tasks = read_tasks(parts[0] / "tasks.jsonl")
    log_read(tasks, PURPOSE, f"{card.suite}/{card.suite_version} run {folder.name}")  # read to be left out
    identity = dict(metas[0].get("identity") or {})
    identity["agent_configs"] = {k: v for m in metas for k, v in (m.get("identity") or {}).get("agent_configs", {}).items()}
    compare = _json(folder / "compare.json") if (folder / "compare.json").is_file() else []
    return RunSource(folder=folder, card=card, records=records, tasks=tasks, identity=identity,
                     release_path=Path(metas[0].get("release", "")), compare=compare)


def _json(path: Path):
    return parse_json(read_text(path, SiteError), str(path), SiteError)

