"""Run folders: score a release into DIR, and rescore DIR later from what it stores.

What DIR holds, and every read and write of it, is evalsuite.scoring.runlog's; this module runs agents into it.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalsuite.core.identity import AgentConfig, RunIdentity, agent_configs
from evalsuite.core.records import TaskRecord
from evalsuite.releases.release import Release
from evalsuite.scoring.modes import mode_identity, with_mode
from evalsuite.scoring.recorded import recorded_score
from evalsuite.scoring.runlog import (
    RUN_JSON,
    TASKS,
    RunFolderError,
    RunMeta,
    folder_lock,
    is_imported,
    is_run_folder,
    read_meta,
    read_recording,
    read_records,
    read_run_tasks,
    write_meta,
    write_run_tasks,
    write_scorecard,
)
from evalsuite.scoring.scorecard import Scorecard, build_scorecard, sample_plan
from evalsuite.trials.agents.base import Agent
from evalsuite.trials.agents.endpoint import pinned
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.settings import EngineSettings
from evalsuite.trials.spend import RunCapped
from evalsuite.trials.tracelog import TrialRecord

if TYPE_CHECKING:
    from evalsuite.trials.agents.human import Desk

def run_release(release: Release, agents: Sequence[str | AgentConfig | Agent], out_dir: Path, *,
                trials: int | None = None, workers: int | None = None, seed: int = 0, progress: bool = False,
                resamples: int = 2000, bootstrap_seed: int = 0, mode: str | None = None,
                engine: EngineSettings | None = None, agent_factory: str | None = None) -> Scorecard:
    """Run (or resume) agents on a release into out_dir and write its scorecard.

    mode runs the release's tasks in another trial mode (evalsuite.scoring.modes): another task set, so another
    identity, stored in out_dir as the tasks it ran.

    agents are names (AgentConfig.parse: reference, openai:MODEL, mcp:COMMAND, ...) or AgentConfig objects,
    e.g. a suite spec's agents; each name must stand for one config, in this call and in out_dir. An agent object
    (anything with a name and run(task, env) or arun) runs in this process, and then so does the whole run;
    agent_factory ("module:callable", called with an AgentConfig) builds named agents of a team's own in every
    worker instead.

    engine sets how model and external agents run (trials in flight, a run cap, the response cache, a progress
    report); a capped run's scorecard covers the tasks whose trials all ran and says what was capped.
    """
    out_dir, engine = Path(out_dir), engine or EngineSettings()
    release.domain()  # an unknown domain is one line here, before any folder is made or worker started
    objects = [a for a in agents if not isinstance(a, (str, AgentConfig))]
    configs = agent_configs([*(a for a in agents if isinstance(a, (str, AgentConfig))),
                             *(AgentConfig(name=a.name, kind="python") for a in objects)])
    configs = {name: pinned(c) for name, c in configs.items()}  # which endpoint answers is part of the identity
    if len(configs) != len(agents):
        named = [AgentConfig.parse(a).name if isinstance(a, (str, AgentConfig)) else a.name for a in agents]
        raise ValueError(f"agent names repeat: {named}")
    identity, tasks = release.run_identity(configs), release.tasks()
    if mode is not None:
        tasks = with_mode(tasks, mode)
        identity = mode_identity(identity, tasks)
    identity = identity.model_copy(update={"response_cache": engine.cache})
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = TrialSettings(identity, seed=seed, out_dir=out_dir, workers=1 if objects else workers,
                             progress=progress, max_in_flight=engine.max_in_flight, cap=engine.cap,
                             report=engine.report, agent_factory=agent_factory)
    with folder_lock(out_dir), engine.endpoint():  # from run.json to the scorecard: a second writer would rerun
        _prepare(release, identity, out_dir, trials, seed, resamples, bootstrap_seed,
                 tasks if mode is not None else None)
        try:
            by_name = {a.name: a for a in objects}
            run_trials(release.world_ref(), tasks, [by_name.get(n, c) for n, c in configs.items()], trials, settings)
            reached = None
        except RunCapped as stop:
            reached = stop.reached
        write_meta(out_dir, read_meta(out_dir).model_copy(update={"capped": reached}))
        return rescore(out_dir)


def play_desk(release: Release, out_dir: Path, sample: int | None = None) -> Desk:
    """What `evalsuite play` offers people, with out_dir made (or checked against the release) as a run folder.

    An existing run folder keeps its run seed, so people's trials score beside its agents'. The tasks are the
    release's playable ones (never held out), or a sample of them spread over the scorecard's slices.
    """
    from evalsuite.trials.agents.human import PURPOSE, Desk, playable  # here: loaded only for `play`

    out_dir = Path(out_dir)
    old = read_meta(out_dir) if is_run_folder(out_dir) else None
    seed = old.run_seed if old else 0
    identity = release.run_identity()
    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):
        _prepare(release, identity, out_dir, None, seed, old.resamples if old else 2000,
                 old.bootstrap_seed if old else 0)
    tasks = playable(release.tasks(purpose=PURPOSE))
    m = release.manifest
    return Desk(label=f"{m.suite} {m.version}", tasks=sample_plan(tasks, sample, seed) if sample else tasks,
                world_ref=release.world_ref(), identity=identity, run_seed=seed, sample=sample)


def rescore(out_dir: Path) -> Scorecard:
    """Recompute the scorecard from DIR alone; refuses a run whose plan is not complete, unless its cap stopped
    it: then the scorecard covers the tasks whose every planned trial ran, for every agent, and says so. An
    imported run's scorecard puts the recorded rewards beside the regrade."""
    out_dir = Path(out_dir)
    with folder_lock(out_dir):
        meta = read_meta(out_dir)
        tasks = read_run_tasks(out_dir)
        records = read_records(out_dir)
        scored = tasks
        if meta.capped is None:
            _check_complete(records, tasks, meta.plan, out_dir)
        else:
            scored = _complete_tasks(records, tasks, meta.plan)
            if not scored:
                raise RunFolderError(f"{out_dir}: the run cap ({meta.capped.limit}) stopped the run before any task's "
                                     "trials all ran; nothing to score yet: resume with a higher cap")
            kept = {t.task_id for t in scored}
            records = [r for r in records if r.task_id in kept]
        card = build_scorecard(records, scored, meta.acceptance, resamples=meta.resamples, seed=meta.bootstrap_seed)
        if meta.capped is not None:
            card = card.model_copy(update={"capped": meta.capped, "tasks_planned": len(tasks)})
        if is_imported(out_dir):  # a recording's rewards beside the regrade (evalsuite.scoring.recorded)
            card = card.model_copy(update={"recording": recorded_score(
                read_recording(out_dir), records, resamples=meta.resamples, seed=meta.bootstrap_seed)})
        write_scorecard(card, out_dir)
    return card


def _prepare(release: Release, identity: RunIdentity, out_dir: Path, trials: int | None, seed: int,
             resamples: int, bootstrap_seed: int, moded: list[TaskRecord] | None = None) -> None:
    """Check an existing run.json agrees, copy the tasks (or write `moded`, the tasks as they run in another
    trial mode), and write the updated run.json; the caller holds the folder's lock."""
    meta = RunMeta(release=str(release.path.resolve()), identity=identity.model_dump(mode="json"), run_seed=seed,
                   resamples=resamples, bootstrap_seed=bootstrap_seed, acceptance=release.manifest.acceptance,
                   plan={})
    if is_run_folder(out_dir):
        meta = _continued(read_meta(out_dir), meta, out_dir)
    meta.plan.update({a: trials for a in identity.agent_configs})
    write_run_tasks(out_dir, release.path / TASKS if moded is None else moded)
    # run.json is written before any trial so an interrupted folder still says what it was running
    write_meta(out_dir, meta)


def _continued(old: RunMeta, new: RunMeta, out_dir: Path) -> RunMeta:
    """new, run into a folder that holds old: agents may be added later, but an agent already in it must come
    back with the same config, and the run's identity, seeds and bootstrap settings stay."""
    old_configs = old.identity.get("agent_configs", {})
    new_configs = new.identity.get("agent_configs", {})
    bare = [{k: v for k, v in m.identity.items() if k != "agent_configs"} for m in (old, new)]
    diff = ["identity"] if bare[0] != bare[1] else []
    diff += [k for k in ("run_seed", "resamples", "bootstrap_seed") if getattr(old, k) != getattr(new, k)]
    diff += [f"agent_config of {a} ({_changed(old_configs[a], new_configs[a])})" for a in new_configs
             if a in old_configs and old_configs[a] != new_configs[a]]
    if diff:
        raise RunFolderError(f"{out_dir / RUN_JSON}: this folder holds another run ({', '.join(diff)} differ); "
                             "use a new --out")
    return new.model_copy(update={"identity": {**new.identity, "agent_configs": {**old_configs, **new_configs}},
                                  "plan": dict(old.plan)})


def _changed(old: dict, new: dict) -> str:
    """What differs between two dumped agent configs: `base_url 'http://a' then, 'http://b' now`."""
    keys = sorted(k for k in {*old, *new} if old.get(k) != new.get(k))
    return "; ".join(f"{k} {old.get(k)!r} then, {new.get(k)!r} now" for k in keys)


def _planned(tasks: list[TaskRecord], plan: dict[str, int | None]) -> dict[str, list[tuple]]:
    """The planned trial keys of each task."""
    return {t.task_id: [(t.task_id, agent, i) for agent, trials in plan.items()
                        for i in range(trials or t.trial_protocol.trials)] for t in tasks}


def _complete_tasks(records: list[TrialRecord], tasks: list[TaskRecord], plan: dict[str, int | None]
                    ) -> list[TaskRecord]:
    have = {r.key for r in records}
    planned = _planned(tasks, plan)
    return [t for t in tasks if all(k in have for k in planned[t.task_id])]


def _check_complete(records: list[TrialRecord], tasks: list[TaskRecord], plan: dict[str, int | None],
                    out_dir: Path) -> None:
    have = {r.key for r in records}
    gaps = [k for keys in _planned(tasks, plan).values() for k in keys if k not in have]
    if gaps:
        agent = gaps[0][1]
        count = sum(1 for k in gaps if k[1] == agent)
        raise RunFolderError(f"{out_dir}: {count} planned trial(s) of {agent} not recorded, first {gaps[0]}; "
                             "rerun `evalsuite run` with the same arguments to finish")
