"""The 40 recorded gpt-4o trials of τ-bench airline (third_party/tau_bench_airline_trajectories) imported onto the
bundled τ²-airline suite, replayed and regraded, each checked against the original's evaluator as TOOLS_SPEC.md
§8b states it, recomputed here from the spec's data (tasks.json) with a full dump of the DB hash."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from evalsuite.domains.tau2_airline import DOMAIN
from evalsuite.domains.tau2_airline.tau2_hash import TAU2_HASH
from evalsuite.importers.recorded.formats import read_recording
from evalsuite.importers.recorded.run import Origin, import_run
from evalsuite.pipeline import driver
from evalsuite.releases.release import Release
from evalsuite.scoring.runlog import read_recording as read_notes
from evalsuite.scoring.runlog import read_records, read_run_tasks

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "third_party" / "tau_bench_airline_trajectories" / "gpt-4o-airline-tasks-0-9.json"
SPEC_TASKS = ROOT / "third_party" / "tau2_airline" / "tasks.json"


@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    """The bundled airline suite built with one reference trial per task (the audit's verdicts do not depend on
    how many), and the recording imported onto its release."""
    tmp = tmp_path_factory.mktemp("airline")
    shutil.copytree(ROOT / "suites" / "tau2_airline", tmp / "tau2_airline")
    spec = yaml.safe_load((ROOT / "suites" / "tau2_airline.yaml").read_text())
    spec["acceptance"]["reference_trials"] = 1
    (tmp / "tau2_airline.yaml").write_text(yaml.safe_dump(spec))
    release = Release(Path(driver.build(tmp / "tau2_airline.yaml", tmp / "home").release))
    card, out = import_run(RECORDING, release, None, Origin(model="gpt-4o"))
    return release, card, out


def _spec_tasks() -> dict[str, dict]:
    return {t["id"]: t for t in json.loads(SPEC_TASKS.read_text())}


def _original(world, task: dict, calls: list, said: list[str], stopped: bool) -> tuple[bool, bool]:
    """(DB, reward) as §8b decides them: the trial's write calls replayed on a fresh DB against every gold action
    replayed on another, compared by the full-dump hash; COMMUNICATE over every assistant message; no stop, 0."""
    writes = world.reset(None)
    for c in calls:
        if c.tool in DOMAIN.tools and DOMAIN.tools[c.tool].kind == "write":
            writes.call(c.tool, c.arguments)
    predicted = TAU2_HASH.world_hash(writes)
    gold = world.reset(None)
    for a in task["evaluation_criteria"]["actions"]:
        gold.call(a["name"], a["arguments"])
    db = predicted == TAU2_HASH.world_hash(gold)
    told = all(any(s.lower() in m.lower().replace(",", "") for m in said)
               for s in task["evaluation_criteria"]["communicate_info"])
    return db, stopped and db and told


def test_the_40_trials_import_onto_ten_tasks_of_their_users(regraded):
    release, card, out = regraded
    recording = read_notes(out)
    assert (card.recording.trials, card.recording.tasks, card.recording.skipped) == (40, 10, [])
    assert len(set(recording.task_map.values())) == 10  # one τ² task per τ-bench task
    by_id = {t.task_id: t for t in read_run_tasks(out)}
    users = {t.task_ref: t.user_id for t in read_recording(RECORDING).trials}
    assert all(users[ref] in by_id[task].user_scenario.instructions for ref, task in recording.task_map.items())
    assert set(card.recording.quarantined) <= {q.task_id for q in release.manifest.quarantined}


def test_each_db_basis_is_the_originals_and_evalsuite_passes_nothing_the_original_fails(regraded):
    release, card, out = regraded
    spec = _spec_tasks()
    notes = {(n.task_id, n.trial): n for n in read_notes(out).notes}
    records = {(r.task_id, r.trial): r for r in read_records(out)}
    recorded = {(t.task_ref, t.trial): t for t in read_recording(RECORDING).trials}
    task_map = read_notes(out).task_map
    world = release.open_world()
    db_passes = 0
    for (ref, trial), rec in recorded.items():
        key = (task_map[ref], trial)
        calls = [c for c in rec.turns if c.is_call]
        said = [t.text for t in rec.turns if not t.is_call and t.actor == "agent" and t.text]
        db, reward = _original(world, spec[key[0]], calls, said, rec.unfinished is None)
        assert notes[key].state_passed == notes[key].original_db == db, key
        if records[key].passed:
            assert reward and rec.reward == 1.0, key
        db_passes += db
    assert db_passes > 0  # the comparison covers passing DB states, not only failing ones


def test_every_trial_evalsuite_fails_that_the_recording_passed_is_listed_with_its_reason(regraded):
    _, card, out = regraded
    records = {(r.task_id, r.trial): r for r in read_records(out)}
    notes = {(n.task_id, n.trial): n for n in read_notes(out).notes}
    failed_here = {k for k, n in notes.items() if n.recorded_passed and not records[k].passed}
    listed = {(d.task_id, d.trial): d.reason for d in card.recording.disagreements}
    assert failed_here == {k for k, d in listed.items() if not records[k].passed}
    assert all(listed[k] for k in failed_here)
    assert sum(r.passed for r in records.values()) <= sum(bool(n.recorded_passed) for n in notes.values())
