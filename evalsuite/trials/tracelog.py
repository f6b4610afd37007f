"""Trial records on disk: one JSON line per trial in traces.jsonl, a Parquet summary beside it.

traces.jsonl is the source of truth: appended and flushed as each trial
finishes, so a killed run loses at most the line being written. That line has
no terminating newline (we write whole lines, newline last), which is how a
truncated tail is told apart from corruption: an unterminated final line that
does not parse is dropped explicitly; any other unparseable line is an error
naming the file and line, because silently skipping it would drop a trial from
a score.

Only one process writes a run folder at a time (folder_lock): two writers would
each see a trial unrecorded, both run it and both append it. The folder's
other files and its model are evalsuite.scoring.runlog's; the names of the
files the trial loop writes stand here, below it.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from filelock import FileLock, Timeout
from pydantic import ConfigDict, Field, ValidationError

from evalsuite.core.identity import AgentConfig, SuiteVersion
from evalsuite.core.io import atomic_write, write_with
from evalsuite.core.records import Simulator
from evalsuite.grading.reward_bases import bases_summary
from evalsuite.trials.trial import TrialResult

if TYPE_CHECKING:
    import pandas as pd

TRACES = "traces.jsonl"
SUMMARY = "summary.parquet"
LOCK = "run.lock"  # held by the one process writing the folder


class TraceLogError(ValueError):
    """A traces file that cannot be trusted; the message names the file and line."""


class FolderBusyError(TraceLogError):
    """Another process is writing the run folder; one line naming it."""


@contextmanager
def folder_lock(folder: Path, wait: float = 0.0) -> Iterator[None]:
    """Hold the run folder's lock (the folder must exist) while writing it; a second writer stops at once (or
    after `wait` seconds) with a one-line error.

    Stopping rather than waiting: a run can take hours, and a writer that waits would then rerun nothing
    anyway; a short bounded wait is for a writer whose own write is short (a person's attempt from
    `evalsuite play`). Taking it again in the same thread (a run's trials inside the run) is reentrant; the
    kernel drops it when its holder dies, so a killed run never blocks the next one.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise TraceLogError(f"{folder}: not a run folder (no such folder)")
    lock = FileLock(folder.resolve() / LOCK, is_singleton=True)  # one instance per folder, however it is named
    try:
        lock.acquire(timeout=wait, blocking=wait > 0)
    except Timeout:
        raise FolderBusyError(f"{folder}: another process is writing this run folder (it holds {folder / LOCK}); "
                              "wait for it to finish, or use another --out") from None
    try:
        yield
    finally:
        lock.release()


class TrialRecord(TrialResult, SuiteVersion):
    """A TrialResult stamped with its identity (see evalsuite.core.identity) and its seeds."""

    model_config = ConfigDict(extra="forbid")

    simulator: Simulator | None
    agent_config: AgentConfig
    run_seed: int
    trial_seed: int
    identity_sha256: str
    # the run let model responses come from the response cache (RunIdentity.response_cache): not a fresh measurement
    response_cache: bool = Field(False, exclude_if=lambda v: not v)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.agent, self.trial)


IDENTITY_COLUMNS = ["suite", "suite_version", "task_set_sha256", "seed_sha256", "environment_image",
                    "tool_schemas_sha256", "simulator", "agent_config", "run_seed", "trial_seed", "identity_sha256"]
# usage: JSON {model: [tokens in, tokens out]} of the trial's model calls, or None when the agent reports none
USAGE_COLUMNS = ["model_calls", "tokens_in", "tokens_out", "usage"]
# attack_succeeded: under attack (TaskRecord.attack), whether the attack's effect appeared; None without attack
# bases: JSON of an imported benchmark's reward bases (TrialResult.bases, bases_summary), None without them
# the trial's separate measures (evalsuite.grading.measures), missing on a trial recorded without them;
# obligations_met is the measures' outcome, named apart from the trial's pass/fail outcome
MEASURE_COLUMNS = ["obligations_met", "grounded", "authority_violations", "handed_off", "handoff_admissible",
                   "tool_calls"]
SUMMARY_COLUMNS = ["task_id", "agent", "trial", "outcome", "passed", "attack_succeeded", "seconds", *USAGE_COLUMNS,
                   *IDENTITY_COLUMNS, "response_cache", "bases", *MEASURE_COLUMNS]


@dataclass
class TraceRead:
    records: list[TrialRecord]
    truncated_tail: bytes | None  # an unterminated final line that does not parse: a write cut short by a kill


def read_traces(path: Path) -> TraceRead:
    """Parse every line strictly; tolerate only a truncated, unterminated final line. A trial recorded twice is an
    error naming `evalsuite runs repair`, which keeps the first record of each trial (see dedupe_traces)."""
    lines, truncated = _read_lines(Path(path))
    records = [r for _, r in lines]
    _check_unique(records, Path(path))
    return TraceRead(records, truncated)


def repair_traces(path: Path) -> TraceRead:
    """Read for a resume: drop a truncated tail and end the file with a newline, rewritten atomically."""
    path = Path(path)
    read = read_traces(path)
    data = path.read_bytes() if path.exists() else b""
    if data and not data.endswith(b"\n"):
        keep = data[: len(data) - len(read.truncated_tail)] if read.truncated_tail else data + b"\n"
        atomic_write(path, keep)
    return read


@dataclass
class TraceRepair:
    """What dedupe_traces did to a traces file."""

    path: Path
    records: list[TrialRecord]  # the records kept, one per trial, in the order first recorded
    exact: int  # lines dropped that repeat a kept record exactly
    conflicting: int  # lines dropped that record a kept trial again with another outcome or trace
    truncated: bool  # a torn, unterminated final line was dropped
    unterminated: bool = False  # the final line parsed but had no newline; one was added

    @property
    def changed(self) -> bool:
        return bool(self.exact or self.conflicting or self.truncated or self.unterminated)

    def describe(self) -> str:
        """One line for a person: what was dropped, or that nothing needed repair."""
        if not self.changed:
            return f"{self.path}: nothing to repair ({len(self.records)} trials, each recorded once)"
        dropped = [f"{self.exact} exact duplicate line(s)", f"{self.conflicting} conflicting duplicate(s) (the "
                   "first record of each trial kept)"] + (["a truncated final line"] if self.truncated else [])
        return f"{self.path}: repaired: kept {len(self.records)} trials; dropped {', '.join(dropped)}"


def dedupe_traces(path: Path) -> TraceRepair:
    """Rewrite a traces file (atomically, only if it needs it) with the FIRST record of each trial key, as an
    older evalsuite left it when runs wrote one folder at once; a torn tail is dropped as repair_traces does.

    The first record is kept, never a later one, for the reason a resume never reruns a recorded trial: the first
    line is the outcome the folder recorded (and a resume then counted as done); keeping a later one, or the
    better one, would let a second try replace a recorded outcome, and choosing among outcomes after seeing them
    biases pass^k upwards. Kept lines are kept byte for byte. The caller holds the folder's lock.
    """
    path = Path(path)
    lines, truncated = _read_lines(path)
    kept: dict[tuple, tuple[bytes, TrialRecord]] = {}
    exact = conflicting = 0
    for line, record in lines:
        first = kept.setdefault(record.key, (line, record))
        if first[1] is not record:
            exact, conflicting = (exact + 1, conflicting) if first[1] == record else (exact, conflicting + 1)
    data = path.read_bytes() if path.exists() else b""
    repair = TraceRepair(path, [r for _, r in kept.values()], exact, conflicting, truncated is not None,
                         unterminated=truncated is None and bool(data) and not data.endswith(b"\n"))
    if repair.changed:
        atomic_write(path, b"".join(line + b"\n" for line, _ in kept.values()))
    return repair


def _read_lines(path: Path) -> tuple[list[tuple[bytes, TrialRecord]], bytes | None]:
    """Every line with its record, strictly, and the truncated tail (an unterminated final line that does not
    parse), if any."""
    if not path.exists():
        return [], None
    lines = path.read_bytes().split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline, as a complete file does
    out = [(line, _parse(line, path, i + 1)) for i, line in enumerate(lines)]
    if tail:
        try:
            out.append((tail, _parse(tail, path, len(lines) + 1)))
        except TraceLogError:
            return out, tail
    return out, None


def _parse(line: bytes, path: Path, lineno: int) -> TrialRecord:
    try:
        return TrialRecord.model_validate_json(line)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(line)"
        raise TraceLogError(f"{path}:{lineno}: corrupt trial record: {where}: {err['msg']}") from exc


def _check_unique(records: list[TrialRecord], path: Path) -> None:
    first: dict[tuple, int] = {}
    for lineno, r in enumerate(records, start=1):
        if r.key in first:
            raise TraceLogError(f"{path}:{lineno}: trial {r.key} recorded twice (first at line {first[r.key]}); "
                                f"`evalsuite runs repair {path.parent}` keeps the first record of each trial")
        first[r.key] = lineno


class TraceWriter:
    """Appends one line per trial and flushes it, so a killed run keeps every finished trial.

    No fsync: a killed process loses nothing already handed to the OS, and an
    fsync per trial would cost more than the trial.
    """

    def __init__(self, path: Path):
        self._fh: IO[str] = open(path, "a", encoding="utf-8")

    def write(self, record: TrialRecord) -> None:
        self._fh.write(_line(record))
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def write_traces(path: Path, records: list[TrialRecord]) -> None:
    """A whole traces file, replaced in one step (a copy of a run; the trial loop appends with TraceWriter)."""
    atomic_write(path, "".join(_line(r) for r in records))


def _line(record: TrialRecord) -> str:
    return record.model_dump_json() + "\n"


def summary_frame(records: list[TrialRecord]) -> pd.DataFrame:
    """One row per trial; nested identity fields as JSON text so the file stays flat."""
    import pandas as pd  # here, not at the top: worker processes import this module and never need pandas

    rows = []
    for r in records:
        row = r.model_dump(mode="json", include=set(SUMMARY_COLUMNS))
        row["simulator"] = json.dumps(row["simulator"], sort_keys=True) if row["simulator"] else None
        row["agent_config"] = json.dumps(row["agent_config"], sort_keys=True)
        row["response_cache"] = r.response_cache
        row["bases"] = json.dumps(bases_summary(r.bases), sort_keys=True) if r.bases else None
        row.update(_usage_columns(r))
        row.update(_measure_columns(r))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    frame = frame.astype({c: "Int64" for c in USAGE_COLUMNS[:3]})  # counts, missing where none reported
    frame = frame.astype({c: "Int64" for c in ("authority_violations", "tool_calls")})
    frame = frame.astype({c: "boolean" for c in ("obligations_met", "grounded", "handed_off", "handoff_admissible")})
    return frame.sort_values(["agent", "task_id", "trial"], kind="stable").reset_index(drop=True)


def _usage_columns(r: TrialRecord) -> dict:
    if r.usage is None:
        return {"model_calls": None, "tokens_in": None, "tokens_out": None, "usage": None}
    return {"model_calls": len(r.usage.model_calls), "tokens_in": r.usage.tokens_in, "tokens_out": r.usage.tokens_out,
            "usage": json.dumps({m: list(t) for m, t in r.usage.by_model().items()}, sort_keys=True)}


def _measure_columns(r: TrialRecord) -> dict:
    m = r.measures
    if m is None:
        return dict.fromkeys(MEASURE_COLUMNS)
    return {"obligations_met": m.outcome, "grounded": m.grounded, "authority_violations": m.authority_violations,
            "handed_off": m.handed_off, "handoff_admissible": m.handoff_admissible, "tool_calls": m.tool_calls}


def write_summary(records: list[TrialRecord], path: Path) -> None:
    """The Parquet summary, replaced in one step so readers never see half of it."""
    frame = summary_frame(records)
    write_with(path, lambda tmp: frame.to_parquet(tmp, index=False))
