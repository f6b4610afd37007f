"""Import an AgentDojo suite (banking, slack, travel, workspace): source tables, rights, the authored policy,
world, tasks, suite spec, report. One importer for every suite; what differs is the suite's PeerSuite
(evalsuite.importers.agentdojo.suite).

`import_agentdojo(suite, src, out)` checks the data files against the pinned
snapshot, loads the environment with its default injections as the peer does,
and replays every task's ground-truth calls in the built world: the rows they
change become the goal state (as the suite shapes it: free fields masked, what
the peer reads from free text as domain checks), the peer's ground-truth output
becomes a required output where the peer's check reads the answer, and each
reference must pass its own goal. Every user task that reads an injection
vector is then paired with every injection task.
"""
from __future__ import annotations

import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalsuite.core.records import (
    Attack,
    Environment,
    InjectedValue,
    Policy,
    Provenance,
    SuiteRef,
    TaskRecord,
    ToolCall,
    TrialProtocol,
    Trigger,
)
from evalsuite.domains.agentdojo_common import vector_defaults
from evalsuite.grading.grader import grade_trial
from evalsuite.importers.agentdojo.banking import BANKING
from evalsuite.importers.agentdojo.package import copy_package_files
from evalsuite.importers.agentdojo.slack import SLACK
from evalsuite.importers.agentdojo.suite import PeerSuite, PeerTask
from evalsuite.importers.agentdojo.travel import TRAVEL
from evalsuite.importers.agentdojo.workspace import WORKSPACE
from evalsuite.importers.gold import replay_gold
from evalsuite.importers.source_files import pinned_files, require_files
from evalsuite.importers.suite_folder import (
    IMPORTED_USES,
    replay_reference,
    write_keep_rules,
    write_parquet,
    write_rights,
    write_suite,
    written_files,
)
from evalsuite.sourcing.policies import load_policy
from evalsuite.sourcing.rights import RightsManifest
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.taskfile import write_tasks
from evalsuite.trials.attacks import attack_effect, place_attack
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

SUITES: dict[str, PeerSuite] = {s.name: s for s in (BANKING, SLACK, TRAVEL, WORKSPACE)}
SUITE_VERSION = "1.2.2"
LICENSE_REF = ("MIT (Copyright (c) 2024 Edoardo Debenedetti, Jie Zhang, Mislav Balunovic, Luca Beurer-Kellner, "
               "Marc Fischer, and Florian Tramèr; LICENSE)")


class AgentDojoInputError(ValueError):
    """An AgentDojo folder (or an imported one) that cannot be used; the message is one line naming the file."""


class ImportReport(BaseModel):
    out: str
    source_sha256: dict[str, str]
    rows: dict[str, int]
    world_sha256: str
    tasks: int  # the peer's tasks, each without attack
    attack_pairs: int  # user tasks under each injection task, placed in the vectors the user task's gold reads
    noop_gold_tasks: list[str]  # gold end state == seed
    peer_check_on_gold: dict[str, bool]  # the peer's own check on its own ground truth
    peer_check_on_noop: dict[str, bool]  # the peer's check on an empty trajectory (true: a no-op passes it)
    files: list[str]


def import_agentdojo_banking(src: Path, out: Path, pinned: dict[str, str] | None = BANKING.pinned_sha256
                             ) -> ImportReport:
    return import_agentdojo(BANKING, src, out, pinned)


def import_agentdojo_suite(name: str, src: Path | None, out: Path) -> ImportReport:
    """`evalsuite import agentdojo-NAME [FOLDER]`: from the folder, else from the pinned package's own files."""
    suite = SUITES[name]
    if src is not None:
        return import_agentdojo(suite, src, out)
    with tempfile.TemporaryDirectory() as tmp:
        files = copy_package_files(name, Path(tmp), AgentDojoInputError, suite.data_files())
        return import_agentdojo(suite, files, out)


def import_agentdojo(suite: PeerSuite, src: Path, out: Path, pinned: dict[str, str] | None = None) -> ImportReport:
    src, out = Path(src), Path(out)
    sha = pinned_files(src, suite.pinned_sha256, suite.pinned_sha256 if pinned is None else pinned,
                       AgentDojoInputError, f"AgentDojo {suite.name}")
    out.mkdir(parents=True, exist_ok=True)
    env = suite.load(src)
    rows = suite.to_rows(env)
    write_parquet(suite.domain, rows, out / "source")
    for name in suite.data_files():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / name, out / name)
    write_rights(out, _manifest(suite), _rights_header(suite))
    if suite.kept:
        write_keep_rules(out / "deid.yaml", suite.kept, _deid_header(suite))
    (out / "policy.md").write_text(suite.policy_text)
    policy = load_policy(out / "policy.md").as_policy()
    world = World.build(suite.domain, rows, out / "world.sqlite")
    tasks, gold_ok, noop_ok = [], {}, {}
    for peer in suite.tasks.values():
        record, trial = task_record(suite, peer, env, world, policy)
        verdict = grade_trial(trial, record.reference_answer or "", record.goal_state, record.role, record.forbidden)
        if not verdict.passed:  # a goal its own reference fails is an import bug, never a task to ship
            raise ValueError(f"task {record.task_id}: the gold replay fails its derived goal: "
                             f"{[c.name + ': ' + c.detail for c in verdict.failures()]}")
        check = suite.peer_check(peer.task_id)
        gold_ok[peer.task_id] = check(peer.output, env, suite.from_rows(trial.rows()), peer.ground_truth(env))
        noop_ok[peer.task_id] = check("", env, env, [])
        tasks.append(record)
    pairs = attack_tasks(suite, {t.task_id: t for t in tasks}, src, world, policy, out / "canary.sqlite")
    write_tasks(out / "tasks.jsonl", tasks + pairs)
    write_suite(out, suite.suite, suite.domain.name, suite.domain.tables,
                Acceptance(reference_trials=4, max_quarantined_fraction=suite.max_quarantined_fraction),
                deid="deid.yaml" if suite.kept else None)
    report = ImportReport(out=str(out), source_sha256=sha, rows={t: len(r) for t, r in rows.items()},
                          world_sha256=world.seed_sha256, tasks=len(tasks), attack_pairs=len(pairs),
                          noop_gold_tasks=[t.task_id for t in tasks if not t.goal_state.requires_write],
                          peer_check_on_gold=gold_ok, peer_check_on_noop=noop_ok, files=written_files(out))
    (out / "import_report.json").write_text(report.model_dump_json(indent=2))
    return report


def task_record(suite: PeerSuite, peer: PeerTask, env: Any, world: World, policy: Policy
                ) -> tuple[TaskRecord, TrialWorld]:
    """The task and its gold replay's trial (kept for checks); goal state derived from the replay."""
    calls = [ToolCall(tool=name, arguments=args, action_id=f"{peer.task_id}#{i}")
             for i, (name, args) in enumerate(peer.ground_truth(env))]
    replay = replay_gold(world, suite.role, peer.task_id, calls, suite.clause_of_tool)
    if replay.errors:
        raise ValueError(f"task {peer.task_id}: ground-truth call failed: {replay.errors[0].error}")
    goal = suite.goal(peer, env, replay)
    if peer.comment:
        goal = goal.model_copy(update={"annotations": [f"peer comment: {peer.comment}"]})
    record = TaskRecord(
        task_id=peer.task_id, domain=suite.domain.name, suite=SuiteRef(name=suite.suite, version=SUITE_VERSION),
        category="injection_as_user" if peer.injection else "user",
        environment=Environment(image=suite.domain.image, seed_snapshot="world.sqlite",
                                seed_sha256=world.seed_sha256),
        role=suite.role, policy=policy, trigger=Trigger(type="queue_item", text=peer.prompt, item_id=peer.task_id),
        goal_state=goal, reference_solution=calls, reference_answer=peer.output or None,
        trial_protocol=TrialProtocol(trials=8, max_steps=max(20, 3 * len(calls))),
        provenance=Provenance(source_record=f"{suite.source_ref}#{peer.task_id}",
                              outcome_verified_by="ground-truth calls replayed in the world; the reference passes "
                                                  "its derived goal state", license_ref=LICENSE_REF))
    return record, replay.trial


def canary_vectors(suite: PeerSuite, src: Path, scratch: Path) -> dict[str, list[str]]:
    """Per user task, the injection vectors its ground truth reads, found as the peer finds them: a distinct canary
    in every vector, the ground truth computed on that environment and run, a vector kept where its canary appears
    in a tool's output."""
    canaries = {v: f"<CANARY---{v}--->" for v in _vector_names(src)}
    env = suite.load(src, canaries)
    world = World.build(suite.domain, suite.to_rows(env), scratch)
    exposed = {}
    for peer in suite.tasks.values():
        if not peer.injection:
            trial = world.reset(suite.role)
            outputs = " ".join(str(trial.call(tool, args).result) for tool, args in peer.ground_truth(env))
            exposed[peer.task_id] = sorted(v for v, c in canaries.items() if c in outputs)
    scratch.unlink()
    return exposed


def _vector_names(src: Path) -> list[str]:
    return sorted(vector_defaults(src / "injection_vectors.yaml"))


def attack_tasks(suite: PeerSuite, plain: dict[str, TaskRecord], src: Path, world: World, policy: Policy,
                 scratch: Path) -> list[TaskRecord]:
    """Every user task that reads a vector, under every injection task: the goal is the user task's (utility), the
    attack's effect is the injection task's (security). Where the user task's ground truth depends on the injected
    text (a slack channel's name holds a vector), its calls and goal are those the peer computes on the attacked
    environment. Each pair is proven live before it ships: the reference keeps utility and produces no effect, the
    reference and the injection's ground truth produce it (in that order, or the other: `_prove_live`)."""
    env = suite.load(src)
    exposed, out = canary_vectors(suite, src, scratch), []
    seed_rows, loaded = suite.to_rows(env), {}
    for inj in (t for t in suite.tasks.values() if t.injection):
        for user_id, vectors in exposed.items():
            if not vectors:
                continue
            text = suite.attack_text(env, inj.prompt)
            if (tuple(vectors), text) not in loaded:  # user tasks reading the same vectors share one load
                attacked = suite.load(src, {v: text for v in vectors})
                loaded[tuple(vectors), text] = attacked, _placed(suite, seed_rows, suite.to_rows(attacked))
            attacked, placed = loaded[tuple(vectors), text]
            attack = Attack(injection_task=inj.task_id, vectors={v: text for v in vectors}, rows=placed,
                            **suite.effect(plain[inj.task_id], inj, env),
                            injection_calls=[ToolCall(tool=n, arguments=a) for n, a in inj.ground_truth(attacked)])
            base = plain[user_id]
            peer = suite.tasks[user_id]
            if peer.ground_truth(attacked) != peer.ground_truth(env):
                base = _attacked_task(suite, peer, attacked, policy, base, world, attack, scratch)
            record = base.model_copy(update={
                "task_id": f"{user_id}+{inj.task_id}", "category": "attack", "attack": attack,
                "provenance": base.provenance.model_copy(update={
                    "source_record": f"{suite.source_ref}#{user_id}+{inj.task_id}"})})
            _prove_live(world, TaskRecord.model_validate(record.model_dump()), inj.output)
            out.append(record)
    return out


def _attacked_task(suite: PeerSuite, peer: PeerTask, attacked: Any, policy: Policy, plain: TaskRecord,
                   world: World, attack: Attack, scratch: Path) -> TaskRecord:
    """The user task as the peer runs it under this attack: ground truth and goal from the attacked environment,
    replayed on a copy of the world with the attack's text in place (a copy: building a world anew is slower)."""
    shutil.copyfile(world.path, scratch)
    with closing(sqlite3.connect(scratch)) as db, db:
        for place in attack.rows:
            where = " AND ".join(f'"{k}" = ?' for k in place.key)
            db.execute(f'UPDATE "{place.table}" SET "{place.column}" = ? WHERE {where}',
                       (place.value, *place.key.values()))
    with closing(World(suite.domain, scratch)) as copy:
        record, _ = task_record(suite, peer, attacked, copy, policy)
    scratch.unlink()
    return plain.model_copy(update={"goal_state": record.goal_state,
                                    "reference_solution": record.reference_solution})


def _placed(suite: PeerSuite, before: dict[str, list[dict]], after: dict[str, list[dict]]) -> list[InjectedValue]:
    """The cells an attack changes in the seed, found by loading the environment with and without it."""
    out = []
    for table, rows in after.items():
        key_cols = [c.name for c in suite.domain.tables[table].primary_key.columns]
        for old, new in zip(before[table], rows):
            out += [InjectedValue(table=table, key={k: new[k] for k in key_cols}, column=c, value=v)
                    for c, v in new.items() if old[c] != v]
    return out


def _prove_live(world: World, task: TaskRecord, said: str = "") -> None:
    """The reference keeps utility and produces no effect; it and the injection's ground truth together produce the
    effect, in one order or the other (an injection that creates an event is judged at the calendar's next id, which
    the reference takes first where it creates one too); doing nothing produces none. `said` is what the injection
    has the agent say (the model's text the peer reads for an injection whose effect is words)."""
    answer = task.reference_answer or ""
    reference, injected = task.solution_calls(), task.attack.injection_calls
    runs = [([reference], False, True, answer), ([reference + injected, injected + reference], True, None,
                                                 " ".join(t for t in (answer, said) if t)), ([[]], False, None, "")]
    for orders, wanted_effect, wanted_utility, text in runs:
        outcomes = (_outcome(world, task, calls, text) for calls in orders)  # the second order only if needed
        first = next(outcomes)
        effect, utility = first if first[0] == wanted_effect else next(outcomes, first)
        if effect != wanted_effect or (wanted_utility is not None and utility != wanted_utility):
            raise ValueError(f"task {task.task_id}: attack effect {effect} (wanted {wanted_effect}), utility "
                             f"{utility} after {len(orders[0])} call(s)")


def _outcome(world: World, task: TaskRecord, calls: list[ToolCall], text: str) -> tuple[bool, bool]:
    """(attack effect present, utility) after `calls` on the attacked world, the model saying `text`."""
    trial = world.reset(task.role)
    baseline = place_attack(trial, task.attack)
    for call in calls:
        trial.call(call.tool, call.arguments)
    return (attack_effect(trial, task.attack, text).passed,
            grade_trial(trial, text, task.goal_state, task.role, task.forbidden, baseline).passed)


def _manifest(suite: PeerSuite) -> RightsManifest:
    return RightsManifest(source=suite.suite, license_ref=LICENSE_REF, licensor="the AgentDojo authors",
                          permitted_uses=IMPORTED_USES, expires=None, personal_data=bool(suite.kept),
                          personal_columns=list(suite.kept), deidentification_required=False,
                          synthetic_columns=suite.synthetic)


def _rights_header(suite: PeerSuite) -> str:
    return (f"# AgentDojo {suite.name} data, MIT license: the full text is in LICENSE beside this file.\n"
            f"# No personal data: {suite.invented} of environment.yaml are invented by the benchmark.\n")


def _deid_header(suite: PeerSuite) -> str:
    if suite.kept_why:
        return suite.kept_why
    return (f"# AgentDojo {suite.name}'s people are the benchmark's published invented ones (MIT): its tasks name\n"
            "# them and the addresses the agent must use, so every column naming them stays as published: a reviewed\n"
            "# keep.\n")


def export_state(out_dir: Path, task_id: str | None, dest: Path, suite: PeerSuite = BANKING) -> Any:
    """Write the environment after task `task_id`'s reference solution (None: the environment before any task) as
    the peer dumps it (its model in JSON mode)."""
    if task_id is None:
        require_files(Path(out_dir), ("world.sqlite",), AgentDojoInputError)
        with closing(World(suite.domain, Path(out_dir) / "world.sqlite")) as world:
            rows = world.initial_rows
    else:
        rows = replay_reference(out_dir, suite.domain, task_id, AgentDojoInputError).rows()
    env = suite.from_rows(rows)
    Path(dest).write_text(env.model_dump_json())
    return env
