"""`evalsuite import-run`: a recording's trials made a run folder of a release, regraded and scored.

The folder is an ordinary run folder (evalsuite.scoring.runlog) of the recorded tasks (its own task set, so its
own identity, as a trial mode's run has), under an agent config of kind `recorded` that names the file's sha256;
recording.json beside the traces holds the provenance and what each trial's replay found. It is written whole or
not at all, so `evalsuite score DIR` recomputes the same scorecard from it alone.
"""
from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from evalsuite.core.hashing import file_sha256, json_sha256
from evalsuite.core.home import home_dir
from evalsuite.core.identity import AgentConfig, identity_sha256, trial_seed
from evalsuite.core.io import staged_dir, sweep_staged
from evalsuite.core.records import TaskRecord
from evalsuite.importers.peers import peer_grader
from evalsuite.importers.recorded.formats import MODEL_NAME, RecordedTrial, Recording, RecordingError, read_recording
from evalsuite.importers.recorded.regrade import regrade
from evalsuite.importers.recorded.tasks import match_tasks
from evalsuite.releases.release import Release
from evalsuite.releases.runs import rescore
from evalsuite.scoring.modes import mode_identity
from evalsuite.scoring.recorded import Provenance, RecordingFile, Skipped
from evalsuite.scoring.runlog import (
    AGENTS,
    SUMMARY,
    TASKS,
    TRACES,
    RunMeta,
    is_imported,
    write_meta,
    write_recording,
    write_run_tasks,
)
from evalsuite.scoring.scorecard import Scorecard
from evalsuite.tasks.taskfile import read_tasks, task_set_sha256
from evalsuite.trials.jobs import Stamp, stamp_result
from evalsuite.trials.tracelog import LOCK, TrialRecord, folder_lock, write_summary, write_traces

SAFE_NAME = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}"


class Origin(BaseModel):
    """What the user says of a recording the file does not: where it was published, its licence, its model."""

    source: str | None = None
    license: str | None = None
    model: str | None = None


def import_run(path: Path, release: Release, out: Path | None = None, origin: Origin | None = None,
               agent: str | None = None, resamples: int = 2000, bootstrap_seed: int = 0) -> tuple[Scorecard, Path]:
    """Read, replay, regrade and score the recording at `path` into the run folder `out` (replaced if it holds
    an earlier import, refused if it holds another run); by default runs/<suite>/<version>/agents/<agent> in the
    home the release was built in, where the Dagster graph finds a release's runs. The agent is named
    recorded:<model> unless named."""
    path, origin = Path(path), origin or Origin()
    recording = read_recording(path)
    if recording.domain is not None and recording.domain != release.manifest.domain:
        raise RecordingError(f"{path}: the recording is of domain {recording.domain}; release "
                             f"{release.manifest.version} is of {release.manifest.domain}")
    provenance = _provenance(path, recording, origin)
    config = AgentConfig(name=_agent_name(agent, provenance.model), kind="recorded", model=provenance.model,
                         recording=provenance.sha256)
    m = release.manifest
    out = Path(out) if out else _home_of(release) / "runs" / m.suite / m.version / AGENTS / config.name
    _refuse_other_runs(out)
    sweep_staged(out)  # a killed import's staging folders: never finished, so never to be read as a run
    quarantined = {q.task_id: q.reasons for q in release.manifest.quarantined}
    held_back = quarantined_tasks(release)  # graded too, and said to be, when the build's records are at hand
    tasks = release.tasks() + held_back
    found, kept, skipped = _kept(recording, tasks, quarantined)
    if not kept:
        raise RecordingError(f"{path}: no trial is on a task of release {release.manifest.version}: "
                             f"{skipped[0].reason if skipped else 'the file holds none'}")
    by_id = {t.task_id: t for t in tasks}
    ran = [by_id[i] for i in sorted({found[t.task_ref] for t in kept}, key=list(by_id).index)]
    identity = mode_identity(release.run_identity({config.name: config}), ran)  # the recorded tasks: their own set
    fields = identity.fields(config.name)
    stamp = Stamp(fields=fields, run_seed=0, identity_sha256=identity_sha256(fields, 0))
    world, records, notes = release.open_world(), [], []
    peer = peer_grader(world)
    for rec in kept:
        done = regrade(world, by_id[found[rec.task_ref]], rec, config.name, peer)
        records.append(stamp_result(done.result, stamp, trial_seed(0, done.result.task_id, config.name, rec.trial)))
        notes.append(done.note)
    counts = Counter(r.task_id for r in records)
    meta = RunMeta(release=str(release.path.resolve()), identity=identity.model_dump(mode="json"), run_seed=0,
                   resamples=resamples, bootstrap_seed=bootstrap_seed, acceptance=release.manifest.acceptance,
                   plan={config.name: min(counts.values())})
    recorded = RecordingFile(provenance=provenance, task_map={t.task_ref: found[t.task_ref] for t in kept},
                             notes=notes, skipped=skipped,
                             quarantined={t.task_id: quarantined[t.task_id] for t in ran if t.task_id in quarantined})
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        # the run folder's lock, as `evalsuite run` holds it: another writer of the folder stops this one (or it
        # them); what the folder holds is judged again under the lock, where no other writer can change it
        with folder_lock(out), staged_dir(out) as tmp:  # the folder appears whole, scorecard included, or not at all
            _refuse_other_runs(out)
            _write(tmp, meta, ran, records, recorded)
            card = rescore(tmp)
    except BaseException:
        if made and [p.name for p in out.iterdir()] == [LOCK]:  # a refused import leaves no folder it made
            shutil.rmtree(out, ignore_errors=True)
        raise
    return card, out


def _kept(recording: Recording, tasks: list[TaskRecord], quarantined: dict[str, list[str]]
          ) -> tuple[dict[str, str], list[RecordedTrial], list[Skipped]]:
    """The recorded trials to regrade (on a task of the release, nothing on the user's device), what each recorded
    task is here, and why the others are skipped."""
    found, missing = match_tasks(recording, tasks)
    skipped = [Skipped(recorded_task=t.task_ref, trial=t.trial, reason=_unmatched(missing[t.task_ref], t.task_ref,
                                                                                   quarantined))
               for t in recording.trials if t.task_ref in missing]
    skipped += [Skipped(recorded_task=t.task_ref, trial=t.trial, reason=f"{t.user_calls} tool call(s) on the user's "
                        "device (dual control): not replayed") for t in recording.trials if t.user_calls]
    return found, [t for t in recording.trials if t.task_ref in found and not t.user_calls], skipped


def _refuse_other_runs(out: Path) -> None:
    """An import replaces only an earlier import (or an empty folder, its lock file aside)."""
    if out.is_dir() and any(p.name != LOCK for p in out.iterdir()) and not is_imported(out):
        raise RecordingError(f"{out}: holds something other than an imported run; use a new --out")


def _agent_name(given: str | None, model: str) -> str:
    """The agent's name, which names its run folder: given (a plain name), or `recorded:` and the model's name made
    safe for a path (letters, digits, `.`, `_`, `-`; bounded), with a hash of the model's own name when anything
    was changed, so two models never share one folder."""
    if given is not None:
        if not re.fullmatch(SAFE_NAME, given) or given.strip(".") == "":
            raise RecordingError(f"--agent {given!r}: an agent's name is letters, digits, '.', '_', ':' and '-' "
                                 "(at most 64), as it names a folder")
        return given
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[:48] or "model"
    return f"recorded:{slug}" if slug == model else f"recorded:{slug}-{json_sha256(model)[:8]}"


def quarantined_tasks(release: Release) -> list[TaskRecord]:
    """The tasks the release quarantined, from the task file of the build that made it (`<home>/suites/<suite>/
    tasks.jsonl`), when that file is the one the release was made from: its accepted tasks hash to the release's
    task set. A quarantined task is still a task the recording ran; its trials are graded and marked so."""
    m = release.manifest
    path = release.path.resolve().parents[2] / "suites" / m.suite / TASKS
    if not m.quarantined or not path.is_file():
        return []
    held = {q.task_id for q in m.quarantined}
    built = read_tasks(path)
    if task_set_sha256([t for t in built if t.task_id not in held]) != m.task_set_sha256:
        return []  # the suite was rebuilt since: its tasks are not this release's
    stamp = {"version": m.version, "task_set_sha256": m.task_set_sha256}
    return [t.model_copy(update={"suite": t.suite.model_copy(update=stamp)}) for t in built if t.task_id in held]


def _home_of(release: Release) -> Path:
    """The home a release was built in (<home>/releases/<suite>/<version>), else EVALSUITE_HOME's."""
    return release.path.parents[2] if release.path.parent.parent.name == "releases" else home_dir()


def _write(folder: Path, meta: RunMeta, tasks: list[TaskRecord], records: list[TrialRecord],
           recording: RecordingFile) -> None:
    write_meta(folder, meta)
    write_run_tasks(folder, tasks)
    write_traces(folder / TRACES, records)
    write_summary(records, folder / SUMMARY)
    write_recording(folder, recording)


def _provenance(path: Path, recording: Recording, origin: Origin) -> Provenance:
    model = origin.model or recording.model
    if model is not None and not re.fullmatch(MODEL_NAME, model):
        raise RecordingError(f"{path}: model {model[:60]!r}: a model's name is at most 200 letters, digits, spaces "
                             "and . : / @ + = , - (it is shown on scorecards)")
    if not model:
        raise RecordingError(f"{path}: the file does not say which model produced it ({recording.format}); "
                             "name it with --model")
    license_ = origin.license or licence_beside(path)
    if not license_:
        raise RecordingError(f"{path}: no LICENSE beside the file; name the recording's licence with --license")
    return Provenance(source=origin.source or str(path), license=license_, model=model, format=recording.format,
                      file=path.name, sha256=file_sha256(path), trials=len(recording.trials))


def licence_beside(path: Path) -> str | None:
    """The licence of a LICENSE file in the recording's folder, named by its title and copyright lines."""
    found = path.parent / "LICENSE"
    if not found.is_file():
        return None
    lines = [line.strip() for line in found.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    title = lines[0] if lines else "LICENSE"
    owner = next((line for line in lines if re.match(r"copyright", line, re.I)), None)
    return f"{title}{f', {owner}' if owner else ''} (LICENSE beside the recording)"


def _unmatched(reason: str, ref: str, quarantined: dict[str, list[str]]) -> str:
    if ref in quarantined:
        return f"task {ref} is quarantined in this release: {'; '.join(quarantined[ref])}"
    return reason

