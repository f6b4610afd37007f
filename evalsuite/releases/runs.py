"""Run folders: score a release into DIR, and rescore DIR later from what it stores.

DIR holds run.json (release path, identity with the config of every agent
run into it, run seed, bootstrap settings, acceptance, the plan of agents and
trials), a verbatim copy of the release's
tasks.jsonl, traces.jsonl, summary.parquet and the scorecard files. Rescoring
needs nothing outside DIR, so a scorecard can be checked after the release
has moved or gone.
"""
from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field

from evalsuite.core.identity import AgentConfig, RunIdentity, agent_configs
from evalsuite.core.io import model_from, parse_json, read_text, write_json
from evalsuite.core.records import TaskRecord
from evalsuite.releases.release import Release
from evalsuite.scoring.modes import mode_identity, with_mode
from evalsuite.scoring.render import write_scorecard
from evalsuite.scoring.scorecard import Scorecard, build_scorecard, load_records, sample_plan
from evalsuite.tasks.taskfile import read_tasks, write_tasks
from evalsuite.trials.harness import run_trials
from evalsuite.trials.tracelog import TrialRecord

if TYPE_CHECKING:
    from evalsuite.trials.play import Desk

RUN_JSON = "run.json"
TASKS = "tasks.jsonl"


class RunFolderError(RuntimeError):
    """A run folder that does not match the run asked for, or cannot be scored yet."""


class _RunMeta(BaseModel):
    """What run.json must hold for a run to resume or be rescored (checked, then used as the plain mapping)."""

    release: str
    identity: dict
    run_seed: int
    resamples: int = Field(ge=1)
    bootstrap_seed: int
    acceptance: dict
    plan: dict[str, Annotated[int, Field(ge=1)] | None]


def run_release(release: Release, agents: Sequence[str | AgentConfig], out_dir: Path, *, trials: int | None = None,
                workers: int | None = None, seed: int = 0, progress: bool = False, resamples: int = 2000,
                bootstrap_seed: int = 0, mode: str | None = None) -> Scorecard:
    """Run (or resume) agents on a release into out_dir and write its scorecard.

    mode runs the release's tasks in another trial mode (evalsuite.scoring.modes): another task set, so another
    identity, stored in out_dir as the tasks it ran.

    agents are names (AgentConfig.parse: reference, openai:MODEL, mcp:COMMAND, ...) or AgentConfig objects,
    e.g. a suite spec's agents; each name must stand for one config, in this call and in out_dir.
    """
    out_dir = Path(out_dir)
    configs = agent_configs(agents)
    if len(configs) != len(agents):
        raise ValueError(f"agent names repeat: {[AgentConfig.parse(a).name for a in agents]}")
    identity, tasks = release.run_identity(configs), release.tasks()
    if mode is not None:
        tasks = with_mode(tasks, mode)
        identity = mode_identity(identity, tasks)
    _prepare(release, identity, out_dir, trials, seed, resamples, bootstrap_seed, tasks if mode is not None else None)
    run_trials(release.world_ref(), tasks, list(configs.values()), trials, out_dir=out_dir,
               workers=workers, progress=progress, identity=identity, seed=seed)
    return rescore(out_dir)


def play_desk(release: Release, out_dir: Path, sample: int | None = None) -> Desk:
    """What `evalsuite play` offers people, with out_dir made (or checked against the release) as a run folder.

    An existing run folder keeps its run seed, so people's trials score beside its agents'. The tasks are the
    release's playable ones (never held out), or a sample of them spread over the scorecard's slices.
    """
    from evalsuite.trials.play import PURPOSE, Desk, playable  # here: the web stack loads only for `play`

    out_dir = Path(out_dir)
    old = _read_meta(out_dir) if (out_dir / RUN_JSON).is_file() else {}
    seed = old.get("run_seed", 0)
    identity = release.run_identity()
    _prepare(release, identity, out_dir, None, seed, old.get("resamples", 2000), old.get("bootstrap_seed", 0))
    tasks = playable(release.tasks(purpose=PURPOSE))
    m = release.manifest
    return Desk(label=f"{m.suite} {m.version}", tasks=sample_plan(tasks, sample, seed) if sample else tasks,
                world_ref=release.world_ref(), identity=identity, run_seed=seed, sample=sample)


def rescore(out_dir: Path) -> Scorecard:
    """Recompute the scorecard from DIR alone; refuses a run whose plan is not complete."""
    out_dir = Path(out_dir)
    meta = _read_meta(out_dir)
    tasks = read_tasks(out_dir / TASKS)
    records = load_records(out_dir)
    _check_complete(records, tasks, meta["plan"], out_dir)
    card = build_scorecard(records, tasks, meta["acceptance"], resamples=meta["resamples"], seed=meta["bootstrap_seed"])
    write_scorecard(card, out_dir)
    return card


def _prepare(release: Release, identity: RunIdentity, out_dir: Path, trials: int | None, seed: int,
             resamples: int, bootstrap_seed: int, moded: list[TaskRecord] | None = None) -> None:
    """Check an existing run.json agrees, copy the tasks (or write `moded`, the tasks as they run in another
    trial mode), and write the updated run.json.

    Agents may be added to a run folder later; an agent already in it must come back with the same config.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {"release": str(release.path.resolve()), "identity": identity.model_dump(mode="json"), "run_seed": seed,
            "resamples": resamples, "bootstrap_seed": bootstrap_seed, "acceptance": release.manifest.acceptance,
            "plan": {}}
    if (out_dir / RUN_JSON).is_file():
        old = _read_meta(out_dir)
        old_configs = old["identity"].pop("agent_configs", {})
        new_configs = meta["identity"].pop("agent_configs")
        diff = [k for k in ("identity", "run_seed", "resamples", "bootstrap_seed") if old[k] != meta[k]]
        diff += [f"agent_config of {a}" for a in new_configs if a in old_configs and old_configs[a] != new_configs[a]]
        if diff:
            raise RunFolderError(f"{out_dir / RUN_JSON}: this folder holds another run ({', '.join(diff)} differ); "
                                 "use a new --out")
        meta["identity"]["agent_configs"] = {**old_configs, **new_configs}
        meta["plan"] = old["plan"]
    meta["plan"].update({a: trials for a in identity.agent_configs})
    if moded is None:
        shutil.copyfile(release.path / TASKS, out_dir / TASKS)
    else:
        write_tasks(out_dir / TASKS, moded)
    # run.json is written before any trial so an interrupted folder still says what it was running;
    # replaced in one step so a kill never leaves half of it
    write_json(out_dir / RUN_JSON, meta)


def _read_meta(out_dir: Path) -> dict:
    path = out_dir / RUN_JSON
    if not path.is_file():
        raise RunFolderError(f"{path}: not a run folder (no {RUN_JSON})")
    meta = parse_json(read_text(path, RunFolderError), str(path), RunFolderError)
    model_from(path, meta, _RunMeta, RunFolderError)
    return meta


def _check_complete(records: list[TrialRecord], tasks: list[TaskRecord], plan: dict[str, int | None],
                    out_dir: Path) -> None:
    have = {r.key for r in records}
    for agent, trials in plan.items():
        gaps = [(t.task_id, agent, i) for t in tasks for i in range(trials or t.trial_protocol.trials)
                if (t.task_id, agent, i) not in have]
        if gaps:
            raise RunFolderError(f"{out_dir}: {len(gaps)} planned trial(s) of {agent} not recorded, first {gaps[0]}; "
                                 "rerun `evalsuite run` with the same arguments to finish")
