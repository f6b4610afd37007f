"""Every gate judged on its own through the registry: it passes on a good build and fails, blocking or
quarantining, on exactly the defect it exists for."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from docs_support import page, section
from suite_support import (
    DEMO_KEY,
    copy_suite,
    declare_contacts_synthetic,
    deny_personal_data,
    expire_license,
    leak_email,
)

from evalsuite.audit.acceptance import in_process_runner
from evalsuite.core.records import Assertion, Role, ToolCall
from evalsuite.domains.registry import domain_of as get_domain
from evalsuite.pipeline import driver, registry
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import GateError
from evalsuite.pipeline.stages import (
    acceptance_results,
    deidentified_snapshot,
    derived_tasks,
    rights_review,
    seed_snapshot,
    suite_release,
)
from evalsuite.sourcing.spec import load_spec
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.agents.baselines import AdversaryAgent, ReferenceAgent
from evalsuite.trials.trial import run_trial
from evalsuite.worlds.world import World


@pytest.fixture
def suite(built, tmp_path, monkeypatch):
    """A private copy of the built suite and home: (spec, paths), to spoil one record at a time."""
    spec_path, home = built
    shutil.copytree(spec_path.parent, tmp_path / "suite")
    shutil.copytree(home, tmp_path / "home")
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    spec = load_spec(tmp_path / "suite" / spec_path.name)
    return spec, Paths(spec, tmp_path / "home")


def judge(name, spec, paths):
    return registry.gate_result(name, spec, paths)


def test_every_gate_is_declared_once_with_its_stage_and_one_sentence():
    stage_of = {g.name: s.name for s in registry.BUILD for g in s.gates}
    assert len(stage_of) == sum(len(s.gates) for s in registry.BUILD)  # no name declared twice
    for g in registry.GATES.values():
        assert stage_of[g.name] == g.stage
        assert g.description.endswith(".") and g.description.count(". ") == 0, g.name


def test_the_cli_and_the_docs_list_exactly_the_registry():
    run = subprocess.run([sys.executable, "-m", "evalsuite.cli", "gates"], capture_output=True, text=True,
                         timeout=60, env={"COLUMNS": "250", "PATH": ""})
    assert run.returncode == 0, run.stderr
    for g in registry.GATES.values():
        assert g.name in run.stdout and g.stage in run.stdout
    table = section(page("pipeline/gates.md"), "# The gates")
    rows = [r.split("|")[1:4] for r in table.splitlines() if r.startswith("| `")]
    assert [[c.strip().strip("`") for c in r] for r in rows] == [[g.name, g.stage, g.description]
                                                                 for g in registry.GATES.values()]


def test_on_a_good_build_every_gate_passes(suite):
    spec, paths = suite
    for name in registry.GATES:
        v = judge(name, spec, paths)
        assert v.passed and not v.blocking, (name, v.reason)


def test_a_gate_without_its_record_blocks_and_says_so(suite):
    spec, paths = suite
    paths.rights.unlink()
    paths.audit.unlink()
    assert judge("rights_cleared", spec, paths).reason == "no rights review on record"
    v = judge("reference_stable", spec, paths)
    assert v.blocking and v.reason == "no acceptance results on record"
    with pytest.raises(KeyError, match="unknown gate 'no_such_gate'"):
        judge("no_such_gate", spec, paths)


def test_rights_cleared_blocks_an_expired_license(suite):
    spec, paths = suite
    expire_license(spec.base_dir / "ap_exceptions.yaml")
    rights_review.review_rights(spec, paths)
    v = judge("rights_cleared", spec, paths)
    assert v.blocking and "expired license on 2020-01-01" in v.reason
    with pytest.raises(GateError, match="rights_cleared"):  # and the next stage refuses to read the sources
        seed_snapshot.build_seed(spec, paths)


def test_source_quality_blocks_a_duplicate_key_and_a_snapshot_changed_after_its_check(suite):
    spec, paths = suite
    invoices = spec.resolve(spec.sources.tables["invoices"].path)
    lines = invoices.read_text().splitlines()
    invoices.write_text("\n".join([*lines, lines[1]]) + "\n")  # the first invoice twice
    seed_snapshot.build_seed(spec, paths)
    v = judge("source_quality", spec, paths)
    assert v.blocking and "invoices" in v.reason
    with pytest.raises(GateError, match="source_quality"):
        deidentified_snapshot.deidentify_seed(spec, paths)
    meta = json.loads((paths.seed / "snapshot.json").read_text())
    (paths.seed / "snapshot.json").write_text(json.dumps({**meta, "sha256": "0" * 64}))
    assert "seed changed after its quality check" in judge("source_quality", spec, paths).reason


def test_no_residual_pii_blocks_a_leaked_email_and_never_shows_it(suite):
    spec, paths = suite
    email = leak_email(spec.base_dir / "ap_exceptions.yaml")
    seed_snapshot.build_seed(spec, paths)
    deidentified_snapshot.deidentify_seed(spec, paths)
    v = judge("no_residual_pii", spec, paths)
    assert v.blocking and "purchase_orders.buyer" in v.reason
    assert email not in json.dumps(v.model_dump(mode="json"))
    with pytest.raises(GateError, match="no_residual_pii"):
        derived_tasks.derive(spec, paths)


def test_personal_data_declared_blocks_contacts_a_manifest_denies_and_never_shows_them(suite):
    spec, paths = suite
    deny_personal_data(spec.base_dir / "ap_exceptions.yaml")
    assert rights_review.review_rights(spec, paths).cleared  # the manifest's word alone clears it: the bypass
    seed_snapshot.build_seed(spec, paths)
    v = judge("personal_data_declared", spec, paths)
    assert v.blocking
    for column, detector, rows in [("contact_name", "person_name", 27), ("email", "email", 24), ("phone", "phone", 11),
                                   ("bank_account", "iban", 27)]:
        assert f"vendor_master.{column}: {rows} {detector} values in a column not declared personal" in v.reason
    assert "\n" not in v.reason and "purchase_orders" not in v.reason and "exception_queue" not in v.reason
    contacts = pd.read_csv(spec.resolve(spec.sources.tables["vendor_master"].path), dtype=str)
    record = paths.pii_scan.read_text()
    for value in contacts[["contact_name", "email", "phone", "bank_account"]].stack().dropna():
        assert value not in record and value not in json.dumps(v.model_dump(mode="json"))
    assert json.loads(record)["undeclared"] == [f"vendor_master.{c}" for c in ("bank_account", "contact_name",
                                                                              "email", "phone")]
    with pytest.raises(GateError, match="personal_data_declared"):  # nothing is de-identified, derived or released
        deidentified_snapshot.deidentify_seed(spec, paths)


def test_personal_data_declared_blocks_real_contacts_a_manifest_calls_synthetic(suite):
    """Issue 25: the `personal_data: false` lie told through `synthetic_columns` released 85 of 85 originals."""
    spec, paths = suite
    declare_contacts_synthetic(spec.base_dir / "ap_exceptions.yaml")
    assert rights_review.review_rights(spec, paths).cleared
    seed_snapshot.build_seed(spec, paths)
    v = judge("personal_data_declared", spec, paths)
    assert v.blocking and "\n" not in v.reason
    for column, rows in [("contact_name", 27), ("email", 24), ("phone", 18), ("bank_account", 27)]:  # = 96 of 96
        assert f"vendor_master.{column}: declared synthetic in rights.yaml, but {rows} of {rows} values are not " \
               "made up" in v.reason, v.reason
    contacts = pd.read_csv(spec.resolve(spec.sources.tables["vendor_master"].path), dtype=str)
    for value in contacts[["contact_name", "email", "phone", "bank_account"]].stack().dropna():
        assert value not in json.dumps(v.model_dump(mode="json"))
    with pytest.raises(GateError, match="personal_data_declared"):  # nothing is de-identified, derived or released
        deidentified_snapshot.deidentify_seed(spec, paths)


def test_invented_values_pass_as_synthetic_and_a_contact_named_in_a_real_note_does_not(suite):
    """Reserved e-mail domains and fictional phone ranges are invented; a "synthetic" name a note mentions is not."""
    spec, paths = suite
    declare_contacts_synthetic(spec.base_dir / "ap_exceptions.yaml")
    source = spec.resolve(spec.sources.tables["vendor_master"].path)
    vendors = pd.read_csv(source, dtype=str)
    vendors["email"] = [f"contact{i}@example.com" for i in range(len(vendors))]
    vendors["phone"] = [f"+1 212 555 01{i:02d}" for i in range(len(vendors))]
    vendors["bank_account"] = "DE89370400440532013000"
    vendors.to_csv(source, index=False)
    seed_snapshot.build_seed(spec, paths)
    v = judge("personal_data_declared", spec, paths)
    assert v.blocking and v.reason.startswith("vendor_master.contact_name: declared synthetic")
    assert "email" not in v.reason and "phone" not in v.reason and "bank_account" not in v.reason


def test_personal_data_declared_passes_the_bundled_suite_and_lists_what_it_scanned(suite):
    spec, paths = suite
    v = judge("personal_data_declared", spec, paths)
    assert v.passed and "vendor_master.email" in v.reason and "purchase_orders.buyer" in v.metadata["scanned"]
    assert json.loads(paths.pii_scan.read_text())["undeclared"] == []


def test_joins_preserved_blocks_a_broken_foreign_key(suite):
    spec, paths = suite
    record = json.loads(paths.deid_report.read_text())
    key = sorted(record["joins"])[0]
    record["joins"][key]["after"] -= 1
    paths.deid_report.write_text(json.dumps(record))
    v = judge("joins_preserved", spec, paths)
    assert v.blocking and key in v.reason


def _rewrite_tasks(paths: Paths, edit) -> None:
    """Edit the derived tasks and record the edit as the derivation (so only the gate under test can object)."""
    tasks = derived_tasks.tasks_on_disk(paths)
    tasks = edit(tasks)
    paths.tasks.write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    record = json.loads(paths.derivation.read_text())
    paths.derivation.write_text(json.dumps({**record, "task_set_sha256": task_set_sha256(tasks), "tasks": len(tasks)}))


def test_task_schema_valid_blocks_an_unknown_tool_and_tasks_edited_after_derivation(suite):
    spec, paths = suite
    original = paths.tasks.read_text()

    def unknown_tool(tasks):
        t = tasks[0]
        tasks[0] = t.model_copy(update={"role": t.role.model_copy(update={"read_tools": [*t.role.read_tools, "sudo"]})})
        return tasks

    _rewrite_tasks(paths, unknown_tool)
    v = judge("task_schema_valid", spec, paths)
    last = len(derived_tasks.tasks_on_disk(paths)[0].role.read_tools) - 1
    assert v.blocking and f"role.read_tools.{last}" in v.reason
    assert "unknown tool 'sudo'" in v.reason
    paths.tasks.write_text(original.replace('"split":"train"', '"split":"test"', 1))  # not recorded as derived
    assert judge("task_schema_valid", spec, paths).reason == "tasks.jsonl changed after derivation"


def test_an_assertion_citing_no_clause_of_its_policy_is_refused_by_name(suite):
    spec, paths = suite
    t0 = next(t for t in derived_tasks.tasks_on_disk(paths) if t.goal_state.assertions)
    bad = json.loads(t0.model_dump_json())
    bad["goal_state"]["assertions"][0]["clause"] = "AP-99"
    lines = [json.dumps(bad) if json.loads(line)["task_id"] == t0.task_id else line
             for line in paths.tasks.read_text().splitlines()]
    paths.tasks.write_text("\n".join(lines) + "\n")
    schema = judge("task_schema_valid", spec, paths)
    assert schema.blocking and f"{t0.task_id}:goal_state.assertions.0.clause: 'AP-99' is not a clause" in schema.reason
    cite = judge("assertions_cite_policy", spec, paths)
    assert cite.blocking and "see gate task_schema_valid" in cite.reason and "\n" not in cite.reason


@pytest.mark.parametrize("gate, spoil", [
    ("masked_fields_justified",
     lambda t: t.goal_state.model_copy(update={"volatile_fields_masked": [
         m.model_copy(update={"justification": "  "}) for m in t.goal_state.volatile_fields_masked]})),
])
def test_task_level_gates_quarantine_within_the_allowance_and_block_beyond_it(suite, gate, spoil):
    spec, paths = suite
    candidates = [t.task_id for t in derived_tasks.tasks_on_disk(paths)
                  if spoil(t) != t.goal_state]
    assert len(candidates) >= 6

    def spoil_some(n):
        def edit(tasks):
            chosen = set(candidates[:n])
            return [t.model_copy(update={"goal_state": spoil(t)}) if t.task_id in chosen else t for t in tasks]
        return edit

    _rewrite_tasks(paths, spoil_some(1))
    one = judge(gate, spec, paths)
    assert not one.passed and not one.blocking and candidates[0] in one.reason  # WARN: quarantined, release allowed
    _rewrite_tasks(paths, spoil_some(6))  # 6 of 49 > 10%
    assert judge(gate, spec, paths).blocking


def _adversary_only(world: World, task):
    """The task rewritten so that exactly the every-write adversary's effects are its goal (and its reference)."""
    domain = world.domain
    writes = sorted(n for n, t in domain.tools.items() if t.kind == "write")
    reads = sorted(n for n, t in domain.tools.items() if t.kind != "write")
    role = Role(name=task.role.name, read_tools=reads, write_tools=writes)
    open_task = task.model_copy(update={"role": role, "goal_state": task.goal_state.model_copy(
        update={"forbidden_calls": [], "required_outputs": [], "assertions": []})})
    result = run_trial(world, open_task, AdversaryAgent())
    calls = [ToolCall(tool=e.tool, arguments=e.arguments)
             for e in result.trace if e.outcome == "ok" and e.kind == "write"]
    assert calls, "the adversary changed nothing; pick another task"
    trial = world.reset(role)
    for c in calls:
        assert trial.call(c.tool, c.arguments).outcome == "ok"
    clause = sorted(task.policy.clause_ids)[0]
    assertions = []
    for table, keys in sorted(trial.changed_keys().items()):
        cols = [c.name for c in domain.tables[table].columns]
        pk = [c.name for c in domain.tables[table].primary_key.columns]
        for key in sorted(keys):
            row = trial.row(table, key)
            key_dict = dict(zip(pk, key))
            if row is None:
                assertions.append(Assertion(table=table, key=key_dict, row_count=0, clause=clause))
            else:
                values = dict(zip(cols, row))
                assertions.append(Assertion(table=table, key=key_dict, clause=clause,
                                            expect={c: v for c, v in values.items() if c not in pk}))
    goal = open_task.goal_state.model_copy(update={"assertions": assertions, "unchanged_tables": []})
    return open_task.model_copy(update={"goal_state": goal, "reference_solution": calls})


def test_a_task_only_the_every_write_adversary_passes_is_quarantined_and_blocks_without_allowance(suite):
    spec, paths = suite
    world = World(get_domain(spec.domain), paths.world)
    tasks = derived_tasks.tasks_on_disk(paths)
    target = _adversary_only(world, next(t for t in tasks if t.goal_state.requires_write))
    assert run_trial(world, target, AdversaryAgent()).passed and run_trial(world, target, ReferenceAgent()).passed
    _rewrite_tasks(paths, lambda ts: [target if t.task_id == target.task_id else t for t in ts])
    report = acceptance_results.accept(spec, paths, in_process_runner(world))
    audit = next(t for t in report.tasks if t.task_id == target.task_id)
    assert audit.adversary_passes and not audit.noop_passes and audit.reference_stable and audit.quarantined
    v = judge("not_trivially_passable", spec, paths)
    assert not v.passed and not v.blocking and target.task_id in v.reason  # 1 of 49: within the 10% allowed
    # the gate's count and the count the release is decided on (acceptance's quarantine, any gate), each named
    assert v.reason.startswith(f"1 of {len(tasks)} task(s) fail this gate (quarantined, release still allowed: "
                               f"acceptance quarantines 1 of {len(tasks)} for any reason, 2%; allowed 10%)")
    for other in ("reference_solvable", "reference_stable", "resettable"):
        assert judge(other, spec, paths).passed, other
    rel = suite_release.release(spec, paths)
    shipped = [json.loads(line)["task_id"] for line in (rel / "tasks.jsonl").read_text().splitlines()]
    assert target.task_id not in shipped and len(shipped) == len(tasks) - 1

    strict = spec.model_copy(update={"acceptance": spec.acceptance.model_copy(update={"max_quarantined_fraction": 0})})
    acceptance_results.accept(strict, paths, in_process_runner(world))
    assert judge("not_trivially_passable", strict, paths).blocking
    with pytest.raises(GateError, match="not_trivially_passable"):
        suite_release.release(strict, paths)


class FlakyReference(ReferenceAgent):
    """Fails the odd-numbered runs of one task: a reference solution that does not pass every trial."""

    def __init__(self, task_id: str):
        self.task_id, self.runs = task_id, 0

    def run(self, task, env):
        if task.task_id == self.task_id:
            self.runs += 1
            if self.runs % 2:
                return ""
        return super().run(task, env)


def test_reference_stable_fails_a_task_whose_reference_passes_only_sometimes(suite):
    spec, paths = suite
    world = World(get_domain(spec.domain), paths.world)
    flaky = next(t for t in derived_tasks.tasks_on_disk(paths) if t.goal_state.requires_write).task_id
    acceptance_results.accept(spec, paths, in_process_runner(world, agents={"reference": FlakyReference(flaky)}))
    v = judge("reference_stable", spec, paths)
    assert not v.passed and flaky in v.reason and "flaky" in v.reason
    assert judge("reference_solvable", spec, paths).passed  # it passed once: solvable, not stable


def test_resettable_fails_when_a_reset_does_not_reproduce_the_seed(suite):
    spec, paths = suite
    wrong_seed = World(get_domain(spec.domain), paths.world, seed_sha256="0" * 64)
    acceptance_results.accept(spec, paths, in_process_runner(wrong_seed))
    v = judge("resettable", spec, paths)
    assert v.blocking and "not resettable" in v.reason  # every task fails it: far beyond the allowance


def test_adjudicated_applies_only_where_the_spec_requires_it(suite):
    spec, paths = suite
    assert "adjudicated" not in [g.name for g in registry.gates_of("acceptance_results", spec)]
    strict = spec.model_copy(update={"acceptance": spec.acceptance.model_copy(update={"require_adjudication": True})})
    assert "adjudicated" in [g.name for g in registry.gates_of("acceptance_results", strict)]
    acceptance_results.accept(strict, paths, in_process_runner(World(get_domain(spec.domain), paths.world)))
    v = judge("adjudicated", strict, paths)
    assert v.blocking and "reviewer sign-off" in v.reason


def test_acceptance_results_for_another_task_set_are_refused(suite):
    spec, paths = suite
    _rewrite_tasks(paths, lambda ts: ts[:-1])
    v = judge("reference_solvable", spec, paths)
    assert v.blocking and "acceptance results are for task set" in v.reason
    with pytest.raises(GateError):
        suite_release.release(spec, paths)


@pytest.mark.parametrize("spoil, gate, reason, not_written", [
    (expire_license, "rights_cleared", "expired license on 2020-01-01", "seed"),
    (deny_personal_data, "personal_data_declared", "vendor_master.email: 24 email values", "deidentified"),
    (declare_contacts_synthetic, "personal_data_declared", "vendor_master.email: declared synthetic", "deidentified"),
])
def test_the_driver_stops_at_the_first_blocking_gate_and_releases_nothing(tmp_path, monkeypatch, spoil, gate, reason,
                                                                          not_written):
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    spec = copy_suite(tmp_path / "suite")
    spoil(spec)
    with pytest.raises(GateError) as err:
        driver.build(spec, tmp_path / "home")
    assert err.value.gate == gate and reason in err.value.reason
    assert not (tmp_path / "home" / "releases").exists()
    assert not (tmp_path / "home" / "suites" / "ap_exceptions" / not_written).exists()


def test_yaml_errors_in_the_quality_file_are_one_line_naming_the_file(tmp_path, monkeypatch):
    from evalsuite.sourcing.quality import QualityConfigError

    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    spec = copy_suite(tmp_path / "suite")
    quality = spec.parent / "ap_exceptions" / "quality.yaml"
    quality.write_text("invoices: [unclosed\n")
    raw = yaml.safe_load(spec.read_text())
    assert raw["quality"] == "ap_exceptions/quality.yaml"
    with pytest.raises(QualityConfigError) as err:
        driver.build(spec, tmp_path / "home")
    assert str(quality) in str(err.value) and "\n" not in str(err.value)
