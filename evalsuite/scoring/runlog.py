"""The run folder: its file names, a versioned model of one run (Run), and every read and write of it.

A run folder (`evalsuite run --out DIR`; the pipeline's runs/<suite>/<version>/agents/<agent>) holds
run.json (RunMeta: the release, the identity with every agent's config, the run seed, bootstrap settings,
acceptance, the plan of agents and trials), tasks.jsonl (a verbatim copy of the release's tasks, or the
tasks as another trial mode runs them), traces.jsonl (one trial record a line, appended as trials finish:
evalsuite.trials.tracelog), summary.parquet, the scorecard files and run.lock, held by the one process
writing the folder. Rescoring needs nothing outside it, so a scorecard can be checked after the release
has moved or gone. A scorecard folder (the pipeline's runs/<suite>/<version>) holds the scorecard files
and compare.json above one run folder per agent under agents/; read_run reads either kind as one Run.
An imported run (`evalsuite import-run`) also holds recording.json (evalsuite.scoring.recorded.RecordingFile);
under a scorecard folder's agents/ it is a run of its own (its own task set, the recorded tasks), never pooled.

run.json carries schema_version; one written before the field existed reads as version 1, whose layout
is the same. The names of the files the trial loop writes (traces, summary, lock) are defined in
evalsuite.trials.tracelog, which sits below scoring, and stand here beside the others.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, field_validator

from evalsuite.core.io import atomic_write, model_from, parse_json, read_text, write_json, write_with
from evalsuite.core.records import TaskRecord
from evalsuite.scoring.recorded import RecordingFile
from evalsuite.scoring.render import plot_passk, to_markdown
from evalsuite.scoring.scorecard import Scorecard
from evalsuite.tasks.taskfile import read_tasks, write_tasks
from evalsuite.trials.spend import CapReached
from evalsuite.trials.tracelog import (
    LOCK,
    SUMMARY,
    TRACES,
    FolderBusyError,
    TraceLogError,
    TraceRepair,
    TrialRecord,
    dedupe_traces,
    folder_lock,
    read_traces,
    write_summary,
    write_traces,
)

SCHEMA_VERSION = 1
M = TypeVar("M", bound=BaseModel)
RUN_JSON = "run.json"
TASKS = "tasks.jsonl"
SCORECARD_JSON, SCORECARD_MD, PASSK_PNG = "scorecard.json", "scorecard.md", "passk.png"
RECORDING = "recording.json"  # an imported run's provenance and what regrading each recorded trial found
COMPARE_JSON = "compare.json"  # every pair of a release's agents, beside a scorecard folder's scorecard.json
AGENTS = "agents"  # a scorecard folder's run folder per agent
FILES = (RUN_JSON, TASKS, TRACES, SUMMARY, SCORECARD_JSON, SCORECARD_MD, PASSK_PNG, LOCK)
__all__ = ["AGENTS", "COMPARE_JSON", "FILES", "LOCK", "PASSK_PNG", "RECORDING", "RUN_JSON", "SCHEMA_VERSION",
           "SCORECARD_JSON", "SCORECARD_MD", "SUMMARY", "TASKS", "TRACES", "FolderBusyError", "Run",
           "RunFolderError", "RunMeta", "TraceRepair", "folder_lock", "imported_runs", "is_imported",
           "is_run_folder", "is_scorecard_folder", "read_meta", "read_recording", "read_records", "read_run",
           "read_run_tasks", "read_scorecard", "repair_run", "write_meta", "write_recording", "write_run",
           "write_run_tasks", "write_scorecard"]


class RunFolderError(RuntimeError):
    """A run folder that does not match the run asked for, cannot be read, or cannot be scored yet; one line."""


class RunMeta(BaseModel):
    """run.json: what a run needs to resume or be rescored."""

    schema_version: int = 1  # absent in the files written before it was versioned, which are version 1
    release: str
    identity: dict[str, Any]
    run_seed: int
    resamples: int = Field(ge=1)
    bootstrap_seed: int
    acceptance: dict[str, Any]
    plan: dict[str, Annotated[int, Field(ge=1)] | None]
    capped: CapReached | None = None  # the run cap stopped the last run: its trials not run are still to run

    @field_validator("schema_version")
    @classmethod
    def _readable(cls, version: int) -> int:
        if version > SCHEMA_VERSION:
            raise ValueError(f"written by a newer evalsuite (version {version}); this one reads up to {SCHEMA_VERSION}")
        if version < 1:
            raise ValueError(f"expected a version from 1, got {version}")
        return version


class Run(BaseModel):
    """One run as its folder holds it: what was run, the tasks, every trial record and the scorecard."""

    folder: Path
    meta: RunMeta
    tasks: list[TaskRecord]
    records: list[TrialRecord]
    scorecard: Scorecard | None = None  # None until the run is scored (`evalsuite score DIR`, rescore)
    compare: list[dict[str, Any]] = []  # a scorecard folder's comparison of every pair of agents
    recording: RecordingFile | None = None  # an imported run's recording.json

    @property
    def schema_version(self) -> int:
        return self.meta.schema_version

    @property
    def agents(self) -> list[str]:
        return sorted({r.agent for r in self.records})

    def pass_hat(self) -> dict[str, dict[int, float]]:
        """Each scored agent's pass^k by k, from the scorecard; empty before the run is scored."""
        agents = self.scorecard.agents if self.scorecard else []
        return {a.agent: {p.k: p.pass_hat for p in a.curve} for a in agents}


def is_run_folder(path: str | Path) -> bool:
    return (Path(path) / RUN_JSON).is_file()


def is_scorecard_folder(path: str | Path) -> bool:
    return (Path(path) / AGENTS).is_dir()


def is_imported(path: str | Path) -> bool:
    """A run folder of recorded trials (`evalsuite import-run`)."""
    return (Path(path) / RECORDING).is_file() and is_run_folder(path)


def imported_runs(folder: str | Path) -> list[Path]:
    """The imported run folders under a scorecard folder's agents/ (each a run of its own), by name."""
    agents = Path(folder) / AGENTS
    # a hidden folder is an import still being written, or one a killed import left (core.io.staged_dir)
    if not agents.is_dir():
        return []
    return sorted(p for p in agents.iterdir() if not p.name.startswith(".") and is_imported(p))


def read_recording(folder: str | Path) -> RecordingFile:
    return _read_model(Path(folder) / RECORDING, RecordingFile, f"not an imported run (no {RECORDING})")


def write_recording(folder: str | Path, recording: RecordingFile) -> Path:
    return write_json(Path(folder) / RECORDING, recording.model_dump(mode="json"))


def read_meta(folder: str | Path) -> RunMeta:
    return _read_model(Path(folder) / RUN_JSON, RunMeta, f"not a run folder (no {RUN_JSON})")


def _read_model(path: Path, model: type[M], missing: str) -> M:
    if not path.is_file():
        raise RunFolderError(f"{path}: {missing}")
    return model_from(path, _json(path), model, RunFolderError)


def write_meta(folder: str | Path, meta: RunMeta) -> Path:
    """run.json, replaced in one step so a kill never leaves half of it."""
    return write_json(Path(folder) / RUN_JSON, {**meta.model_dump(mode="json"), "schema_version": SCHEMA_VERSION})


def read_run_tasks(folder: str | Path) -> list[TaskRecord]:
    return read_tasks(Path(folder) / TASKS)


def write_run_tasks(folder: str | Path, tasks: list[TaskRecord] | Path) -> Path:
    """The tasks a run runs: a release's task file copied byte for byte, or task records written out."""
    dest = Path(folder) / TASKS
    return atomic_write(dest, tasks.read_bytes()) if isinstance(tasks, Path) else write_tasks(dest, tasks)


def read_records(folder: str | Path) -> list[TrialRecord]:
    """The trial records of a run folder; a truncated tail means the run is unfinished, an error here."""
    path = Path(folder) / TRACES
    if not path.is_file():
        raise TraceLogError(f"{path}: no traces (not a run folder)")
    read = read_traces(path)
    if read.truncated_tail:
        raise TraceLogError(f"{path}: final line is truncated (the run was interrupted); "
                            "rerun `evalsuite run` with the same arguments to resume it")
    return read.records


def repair_run(folder: str | Path) -> TraceRepair:
    """`evalsuite runs repair`: under the folder's lock, traces.jsonl keeps the first record of each trial and drops
    repeated ones (exact or conflicting: tracelog.dedupe_traces says why the first) and a torn tail, and the summary
    is rewritten from what is kept; a folder that needs nothing is left as it is. Score it again afterwards."""
    folder = Path(folder)
    path = folder / TRACES
    if not path.is_file():
        raise TraceLogError(f"{path}: no traces (not a run folder)")
    with folder_lock(folder):
        repair = dedupe_traces(path)
        if repair.changed:
            write_summary(repair.records, folder / SUMMARY)
    return repair


def read_scorecard(folder: str | Path) -> Scorecard:
    path = Path(folder) / SCORECARD_JSON
    if not path.is_file():
        raise RunFolderError(f"{path}: no scorecard yet; score the run first (`evalsuite score {folder}`)")
    return model_from(path, _json(path), Scorecard, RunFolderError)


def write_scorecard(scorecard: Scorecard, folder: str | Path) -> dict[str, Path]:
    """scorecard.json (the numbers), scorecard.md (for people), passk.png (pass^k against k), each written whole."""
    out = Path(folder)
    paths = {"json": out / SCORECARD_JSON, "md": out / SCORECARD_MD, "png": out / PASSK_PNG}
    write_json(paths["json"], scorecard.model_dump(mode="json"))
    atomic_write(paths["md"], to_markdown(scorecard))
    write_with(paths["png"], lambda tmp: plot_passk(scorecard, tmp))
    return paths


def read_run(folder: str | Path) -> Run:
    """A run folder, or a scorecard folder read as one run: its agents' records, the first agent's tasks,
    and run.json with every agent's config and plan."""
    folder = Path(folder)
    parts = _parts(folder)
    metas = [read_meta(p) for p in parts]
    configs = {k: v for m in metas for k, v in m.identity.get("agent_configs", {}).items()}
    meta = metas[0].model_copy(update={"identity": {**metas[0].identity, "agent_configs": configs},
                                       "plan": {k: v for m in metas for k, v in m.plan.items()}})
    card = read_scorecard(folder) if (folder / SCORECARD_JSON).is_file() else None
    compare = _json(folder / COMPARE_JSON) if (folder / COMPARE_JSON).is_file() else []
    return Run(folder=folder, meta=meta, tasks=read_run_tasks(parts[0]), scorecard=card, compare=compare,
               records=[r for p in parts for r in read_records(p)],
               recording=read_recording(folder) if is_imported(folder) else None)


def write_run(run: Run, folder: str | Path | None = None) -> Path:
    """Write a whole run into one run folder (run.folder unless given), under its lock, each file replaced
    in one step: run.json, the tasks, the traces and their summary, and the scorecard once scored."""
    folder = Path(folder or run.folder)
    folder.mkdir(parents=True, exist_ok=True)
    with folder_lock(folder):
        write_meta(folder, run.meta)
        write_run_tasks(folder, run.tasks)
        write_traces(folder / TRACES, run.records)
        write_summary(run.records, folder / SUMMARY)
        if run.recording is not None:
            write_recording(folder, run.recording)
        if run.scorecard is not None:
            write_scorecard(run.scorecard, folder)
    return folder


def _parts(folder: Path) -> list[Path]:
    if is_run_folder(folder) or not is_scorecard_folder(folder):
        return [folder]  # a folder of neither kind: read_meta names the missing run.json
    parts = sorted(p for p in (folder / AGENTS).iterdir() if is_run_folder(p) and not is_imported(p))
    if not parts:
        raise RunFolderError(f"{folder / AGENTS}: no agent run folder ({RUN_JSON}) under it")
    return parts


def _json(path: Path) -> Any:
    return parse_json(read_text(path, RunFolderError), str(path), RunFolderError)
