"""Import τ²-bench telecom, the dual-control domain: both worlds, its composed task set, the sample it releases.

`import_telecom(src, out)` checks the folder against the pinned snapshot, writes the carrier's and the phone's
tables (one world file holds both), the rights record, the policies (the main policy with the technical-support
manual, and the workflow variant; each with its solo form for the no-user mode), then composes the task set as
the original did (evalsuite.domains.tau2_telecom.composition): the full set must equal tasks.json, every task is
verified on a workbench, and the seeded per-stratum sample must be the original's `base` split. Each task becomes
a task record: its initialization (hashes after it recorded), its gold actions replayed live on both worlds (the
rows they change, on each side, its goal), its env assertions as domain checks, the scripted user. The sample is
suite.yaml (and suite_workflow.yaml under the workflow policy); the whole set is suite_full.yaml. Acceptance,
run at import on every task, sets each spec's quarantine allowance (the sample's from its part of the audit).
"""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalsuite.core.records import (
    Assertion,
    DomainCheck,
    EnvAssertion,
    Environment,
    GoalState,
    Initialization,
    NegativeControl,
    Policy,
    Provenance,
    Simulator,
    SuiteRef,
    TaskRecord,
    ToolCall,
    TrialProtocol,
    Trigger,
    UserScenario,
)
from evalsuite.domains import tau2_telecom as tel
from evalsuite.domains.tau2_telecom import composition as comp
from evalsuite.domains.tau2_telecom.task_run import setup_calls
from evalsuite.domains.tau2_telecom.user_script import script
from evalsuite.domains.tau2_telecom.workbench import TelecomWorkbench
from evalsuite.importers.gold import GoldReplayError, replay_gold_dual
from evalsuite.importers.source_files import pinned_files
from evalsuite.importers.suite_folder import (
    IMPORTED_USES,
    ImportAudit,
    audit_import,
    write_keep_rules,
    write_parquet,
    write_rights,
    write_suite,
    written_files,
)
from evalsuite.importers.tau2.criteria import evaluation_criteria
from evalsuite.importers.tau2.importer import Tau2InputError
from evalsuite.importers.tau2.policy import clause_ids, combined, versioned_policy
from evalsuite.importers.tau2.sources import LICENSE_REF, SOURCE_COMMIT, arrow_type
from evalsuite.importers.tau2.tasks import scenario_text
from evalsuite.sourcing.policies import load_policy
from evalsuite.sourcing.rights import RightsManifest
from evalsuite.sourcing.spec import Acceptance
from evalsuite.tasks.taskfile import write_tasks
from evalsuite.trials.users.dual import user_role
from evalsuite.worlds.link import apply_calls, connect
from evalsuite.worlds.world import World

SUITE = "tau2_telecom"
PINNED = {
    "db.toml": "562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0",
    "user_db.toml": "4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c",
    "tasks.json": "37e562e1ae3242577407e1303b1548bc64e7ea68e37d36173e6747990ceaf8a4",
    "split_tasks.json": "605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec",
    "main_policy.md": "95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7",
    "main_policy_solo.md": "781296ae5419169cb64aac0c4fa2aa6129c78f3c1592f64abd80df6fbabb7042",
    "tech_support_manual.md": "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba",
    "tech_support_workflow.md": "64f3ccd13875d14f358b21b9af221dab09e0e7bf5690d0e4322fb91855a43a4d",
    "tech_support_workflow_solo.md": "b174d1f9705b5d7df49468daf99560a5633f86d23e10499a1166a7753706a412",
    "LICENSE": "e67c5aa0074dfcaefd3c3a1aedb94cb539234aecd15d5a972574e3200e6252fe",
}
# policy file -> (main policy, technical-support document); a variant's tasks run under the first, their no-user
# mode under the second (TaskRecord.mode_policies)
VARIANTS = {"manual": (("policy.md", "main_policy.md", "tech_support_manual.md"),
                       ("policy_solo.md", "main_policy_solo.md", "tech_support_manual.md")),
            "workflow": (("policy_workflow.md", "main_policy.md", "tech_support_workflow.md"),
                         ("policy_workflow_solo.md", "main_policy_solo.md", "tech_support_workflow_solo.md"))}
SUITES = {"manual": (SUITE, "suite.yaml", "tasks.jsonl"),
          "workflow": (f"{SUITE}_workflow", "suite_workflow.yaml", "tasks_workflow.jsonl")}
# the whole composed set (the original's `--task-set full`) under the main policy, beside the sample
FULL_SUITE, FULL_SPEC, FULL_TASKS = f"{SUITE}_full", "suite_full.yaml", "tasks_full.jsonl"
WORKFLOW_NOTE = "# The audit ran under the manual policy: the workflow suite has the same tasks, checks and worlds.\n"
SIMULATOR = Simulator(model="scripted-user", version=f"tau2_telecom-user/{tel.DOMAIN.version}", temperature=0.0,
                      kind="scripted")
# the policy section a gold write (or an env assertion) answers to; the phone's tools all to technical support
SECTION = {"send_payment_request": "Overdue Bill Payment", "make_payment": "Overdue Bill Payment",
           "resume_line": "Line Suspension", "suspend_line": "Line Suspension", "refuel_data": "Data Refueling",
           "enable_roaming": "Data Roaming", "disable_roaming": "Data Roaming",
           "assert_no_overdue_bill": "Overdue Bill Payment", "assert_data_refueling_amount": "Data Refueling",
           "handed_off": "Technical Support"}
TECH = "Technical Support"
ANSWER = {True: "Your phone should work as expected now.",
          False: "I have transferred you to a human agent, who will help you further."}
RIGHTS_HEADER = ("# tau2-bench telecom data, MIT license: the full text is in LICENSE beside this file.\n"
                 "# The customers are the benchmark's published invented people; deid.yaml keeps them as published.\n")
# Personal-looking columns: a name proves nothing about being invented (evalsuite.sourcing.synthetic), and the
# tasks name these people and numbers (initialization, instructions, assertions), so they are declared personal
# and kept by an explicit, reviewed rule (deid.yaml) rather than called synthetic.
KEPT = ("customers.full_name", "customers.date_of_birth", "customers.email", "customers.phone_number",
        "customers.street", "customers.city", "customers.state", "customers.zip_code", "lines.phone_number",
        "devices.imei", "line_items.description", "surroundings.name", "surroundings.phone_number")
DEID_HEADER = ("# τ²-bench telecom's customers are the benchmark's published invented people (MIT, db.toml): its\n"
               "# tasks, their initialization and the user's instructions name them and their numbers, so every\n"
               "# personal-looking column stays as published: a reviewed keep, and no key is needed.\n")


class TaskHashes(BaseModel):
    """τ²-bench's two DB hashes (agent, user) of a task after its initialization and after its gold actions."""

    initialized: tuple[str, str]
    end: tuple[str, str]


class TelecomReport(BaseModel):
    out: str
    source_sha256: dict[str, str]
    rows: dict[str, int]
    initial_tau2_hashes: tuple[str, str]
    world_sha256: str
    composed: int  # before the deletion of the issue the data leaves out
    full: int
    full_equals_source: bool
    differing_tasks: list[str]  # ids whose composed record differs from tasks.json (or is missing from either)
    verification_failures: dict[str, str]  # task id -> why it is not a sound task
    holding_at_start: dict[str, int]  # assertion -> tasks of the full set in which it holds right after set-up
    sampled: int
    sample_equals_base: bool
    splits: dict[str, int]
    categories: dict[str, int]
    strata: list[dict[str, Any]]
    gold_replay_errors: list[GoldReplayError]  # of every task written: the sample, or with `whole` the whole set
    tau2_hashes: dict[str, TaskHashes]  # of the sample's tasks
    acceptance: ImportAudit  # the sample's audit, where suite.yaml's (and suite_workflow.yaml's) allowance comes from
    full_acceptance: ImportAudit | None  # with `whole`: the whole set's, for suite_full.yaml
    files: list[str]


def import_telecom(src: Path, out: Path, whole: bool = False) -> TelecomReport:
    """Write source/, rights.yaml, LICENSE, the policies, world.sqlite, both task files and suite specs, and
    import_report.json; with `whole` also the whole composed set (tasks_full.jsonl, suite_full.yaml), its goals
    replayed and every task audited (minutes, and a 156 MB task file, so only when asked)."""
    src, out = Path(src), Path(out)
    sha = pinned_files(src, PINNED, PINNED, Tau2InputError, "tau2 telecom")
    out.mkdir(parents=True, exist_ok=True)
    nested = {**tel.from_nested(tel.from_toml(src / "db.toml")),
              **tel.user_from_nested(tel.from_toml(src / "user_db.toml"))}
    # booleans as the 0/1 their INTEGER columns hold, in Parquet as in SQLite
    rows = {t: [{k: int(v) if isinstance(v, bool) else v for k, v in r.items()} for r in rs]
            for t, rs in nested.items()}
    write_parquet(tel.DOMAIN, rows, out / "source", arrow_type)
    write_rights(out, _manifest(), RIGHTS_HEADER)
    write_keep_rules(out / "deid.yaml", KEPT, DEID_HEADER)
    shutil.copyfile(src / "LICENSE", out / "LICENSE")
    policies = _policies(src, out, sha)
    agent = World.build(tel.DOMAIN, rows, out / "world.sqlite")
    phone = World(tel.USER_DOMAIN, agent.path)
    initial = tel.TAU2_HASH.both(agent, phone)
    if initial != (tel.TAU2_HASH.initial, tel.TAU2_HASH.initial_user):
        raise ValueError(f"tau2 hashes of the built worlds {initial} != the original's initial hashes")
    raw = json.loads((src / "tasks.json").read_text())
    composed = comp.composed()
    full = comp.kept(composed)
    sample = sorted(comp.kept(comp.sampled(composed)), key=lambda t: t.id)
    splits = json.loads((src / "split_tasks.json").read_text())
    box = TelecomWorkbench(agent, phone)
    bits = dict(composed=len(composed), full=len(full), **_compared(full, raw),
                verification_failures=comp.verify_all(full, box),
                holding_at_start=_held(comp.holding_at_start(full, box)), sampled=len(sample),
                sample_equals_base={t.id for t in sample} == set(splits["base"]),
                strata=comp.strata(full, sample))
    by_id = {t["id"]: t for t in raw}
    split_of = {i: "train" for i in splits["train"]} | {i: "test" for i in splits["test"]}
    env = Environment(image=tel.DOMAIN.image, seed_snapshot="world.sqlite", seed_sha256=agent.seed_sha256)
    written = full if whole else sample
    made = {t.id: _task(t, by_id[t.id], split_of.get(t.id, "test"), agent, phone, env, policies["manual"])
            for t in written}
    tasks = [made[t.id][0] for t in sample]
    # one audit of every task written; the sample's suites are judged on their part of it
    audits = {a.task_id: a for a in audit_import(agent, [made[t.id][0] for t in written])}
    audit = ImportAudit.of([audits[t.task_id] for t in tasks])
    full_audit = ImportAudit.of(list(audits.values())) if whole else None
    _write_suites(out, sorted(rows), policies, tasks, audit)
    if full_audit is not None:
        _write_whole(out, sorted(rows), [made[t.id][0] for t in full], full_audit)
    report = TelecomReport(
        out=str(out), source_sha256=sha, rows={t: len(r) for t, r in rows.items()}, initial_tau2_hashes=initial,
        world_sha256=agent.seed_sha256, splits=_count(t.split for t in tasks),
        categories=_count(t.category for t in tasks),
        gold_replay_errors=[e for _, errors, _ in made.values() for e in errors],
        tau2_hashes={t.task_id: made[t.task_id][2] for t in tasks}, acceptance=audit, full_acceptance=full_audit,
        files=written_files(out), **bits)
    (out / "import_report.json").write_text(report.model_dump_json(indent=2))
    return report


SETTINGS = Acceptance(reference_trials=4)


def _write_suites(out: Path, tables: list[str], policies: dict[str, Policies], tasks: list[TaskRecord],
                  audit: ImportAudit) -> None:
    """The sample's task files and specs, one per policy variant, with the allowance its audit needs."""
    for variant, (name, spec_file, tasks_file) in SUITES.items():
        write_tasks(out / tasks_file, [_under(t, name, policies[variant]) for t in tasks])
        _write_spec(out, tables, name, spec_file, tasks_file, VARIANTS[variant][0][0], audit.acceptance(SETTINGS),
                    audit.comment(SETTINGS) + (WORKFLOW_NOTE if variant == "workflow" else ""))


def _write_whole(out: Path, tables: list[str], tasks: list[TaskRecord], audit: ImportAudit) -> None:
    """The whole composed set's task file and spec (`--full`)."""
    full_suite = SuiteRef(name=FULL_SUITE, version="1.0.0")
    write_tasks(out / FULL_TASKS, [t.model_copy(update={"suite": full_suite}) for t in tasks])
    _write_spec(out, tables, FULL_SUITE, FULL_SPEC, FULL_TASKS, "policy.md", audit.acceptance(SETTINGS),
                audit.comment(SETTINGS))


def _write_spec(out: Path, tables: list[str], name: str, spec_file: str, tasks_file: str, policy: str,
                acceptance: Acceptance, header: str) -> None:
    """One suite spec over the folder's tables (both worlds'), under the policy file named."""
    write_suite(out, name, tel.DOMAIN.name, tables, acceptance, SIMULATOR, spec_file=spec_file,
                tasks=tasks_file, policies=[policy], trial_protocol=TrialProtocol(trials=4, max_steps=60),
                deid="deid.yaml", source=SUITE, header=header)


def _manifest() -> RightsManifest:
    return RightsManifest(source=SUITE, license_ref=LICENSE_REF, licensor="Sierra Research",
                          permitted_uses=IMPORTED_USES, expires=None, personal_data=True,
                          personal_columns=list(KEPT), deidentification_required=False)


Policies = tuple[Policy, Policy, dict[str, str]]  # a variant's policy, its no-user form, clause id by section title


def _policies(src: Path, out: Path, sha: dict[str, str]) -> dict[str, Policies]:
    """Each variant's policy and its no-user form, written as versioned policy documents and read back, and the
    policy's clause ids by section title (the same main sections, so ids, in both forms)."""
    made = {}
    for variant, docs in VARIANTS.items():
        pair, ids = [], {}
        for file, main, tech in docs:
            text = combined((src / main).read_text(), (src / tech).read_text(), "Technical support")
            params = {"source": f"sierra-research/tau2-bench data/tau2/domains/telecom/{main} + {tech}",
                      "source_commit": SOURCE_COMMIT, "source_sha256": f"{sha[main]} + {sha[tech]}",
                      "effective_from_note": "in effect on the day its main policy names as now (\"The current time "
                                             "is 2025-02-25 12:08:00 EST.\"), the world clock of every trial"}
            (out / file).write_text(versioned_policy(text, doc=f"{SUITE}_{file.removesuffix('.md')}", version="1.0.0",
                                                     effective_from=tel.DOMAIN.clock.date(), params=params))
            pair.append(load_policy(out / file).as_policy())
            ids = ids or clause_ids(text)
        made[variant] = (*pair, ids)
    return made


def _compared(full: list[comp.Composed], raw: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the composed full set is tasks.json, record for record (and which ids differ)."""
    ours = {t.id: comp.record(t) for t in full}
    theirs = {t["id"]: t for t in raw}
    differing = sorted(i for i in ours.keys() | theirs.keys() if ours.get(i) != theirs.get(i))
    return {"full_equals_source": not differing and list(ours) == list(theirs), "differing_tasks": differing}


def _held(found: dict[str, list[str]]) -> dict[str, int]:
    return dict(sorted(Counter(a for held in found.values() for a in held).items()))


def _count(values) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def _under(task: TaskRecord, suite: str, policies: Policies) -> TaskRecord:
    """The task in a variant's suite under its policies (validated again: the goal's clauses must be the policy's)."""
    policy, solo, _ = policies
    return TaskRecord.model_validate({**task.model_dump(), "suite": {"name": suite, "version": task.suite.version},
                                      "policy": policy.model_dump(), "mode_policies": {"no_user": solo.model_dump()}})


def _task(composed: comp.Composed, raw: dict[str, Any], split: str, agent_world: World, phone_world: World,
          env: Environment, policies: Policies) -> tuple[TaskRecord, list[GoldReplayError], TaskHashes]:
    """One task's record (in the world `env` names), the gold actions that failed, and its τ²-bench hashes."""
    policy, solo, ids = policies
    agent, device = agent_world.reset(tel.ROLE), phone_world.reset(user_role(tel.USER_DOMAIN))
    connect(agent, device, tel.LINK)
    init = setup_calls(raw["initial_state"]["initialization_actions"])
    apply_calls(init, agent, device)
    initialized = tel.TAU2_HASH.both(agent, device)
    initialization = Initialization(calls=init, sha256=agent.content_sha256(), user_sha256=device.content_sha256())
    crit = raw["evaluation_criteria"]
    gold = [ToolCall(tool=a["name"], arguments=a["arguments"], action_id=a["action_id"],
                     actor="user" if a["requestor"] == "user" else None) for a in crit["actions"]]
    rows, user_rows, errors = replay_gold_dual(agent, device, raw["id"], gold,
                                               {c.tool: ids[SECTION.get(c.tool, TECH)] for c in gold})
    hashes = TaskHashes(initialized=initialized, end=tel.TAU2_HASH.both(agent, device))
    record = TaskRecord(
        task_id=raw["id"], domain=tel.DOMAIN.name, suite=SuiteRef(name=SUITE, version="1.0.0"),
        split=split, category=composed.composite.intent,
        environment=env,
        role=tel.ROLE, policy=policy, mode_policies={"no_user": solo},
        trigger=Trigger(type="conversation", text=raw["ticket"]),
        user_scenario=UserScenario(persona=raw["user_scenario"]["persona"],
                                   instructions=scenario_text(raw["user_scenario"]["instructions"]),
                                   simulator=SIMULATOR, script=script(raw)),
        goal_state=_goal(composed, crit, rows, user_rows, ids), reference_solution=gold,
        reference_answer=ANSWER[composed.composite.fixable], negative_controls=_controls(gold),
        initialization=initialization, trial_protocol=TrialProtocol(trials=4, max_steps=max(60, 4 * len(gold))),
        evaluation_criteria=evaluation_criteria(crit), provenance=_provenance(composed, raw["id"]))
    return record, errors, hashes


def _goal(composed: comp.Composed, crit: dict[str, Any], rows: list[Assertion], user_rows: list[Assertion],
          ids: dict[str, str]) -> GoalState:
    """The rows the gold changes on each side, the env assertions as each side's checks, and for a task nothing on
    record can fix, the handoff."""
    checks = [EnvAssertion(**a) for a in crit["env_assertions"]]
    as_check = lambda a: DomainCheck(name=a.func_name, params=a.arguments,  # noqa: E731
                                     clause=ids[SECTION.get(a.func_name, TECH)])
    handoff = [] if composed.composite.fixable else [DomainCheck(name="handed_off", clause=ids[TECH])]
    return GoalState(assertions=rows, user_assertions=user_rows,
                     domain_checks=[as_check(a) for a in checks if a.env_type == "assistant"] + handoff,
                     user_checks=[as_check(a) for a in checks if a.env_type == "user"],
                     annotations=[f"tau2 reward_basis: {', '.join(crit['reward_basis'])}"])


def _controls(gold: list[ToolCall]) -> list[NegativeControl]:
    """The carrier's part of the fix without the customer's (where the fix needs both): it must fail."""
    agent_only = [c for c in gold if c.actor != "user"]
    if not agent_only or len(agent_only) == len(gold):
        return []
    return [NegativeControl(name="skips the customer's phone", calls=agent_only, final_message=ANSWER[True])]


def _provenance(composed: comp.Composed, task_id: str) -> Provenance:
    return Provenance(
        source_record=f"sierra-research/tau2-bench@{SOURCE_COMMIT}:data/tau2/domains/telecom/tasks.json#id={task_id}",
        outcome_verified_by="composed from the issue catalogue and verified stepwise "
                            "(evalsuite.tasks.composition.verify); gold replayed live on both worlds",
        license_ref=LICENSE_REF,
        stratum={"intent": composed.composite.intent, "issues": len(composed.issues), "persona": composed.persona})
