"""Goal-state adjudication end to end: reviewers sign, disagree and resolve through `evalsuite review`, the
`adjudicated` gate quarantines or blocks naming what each task still needs, acceptance sees a new sign-off as a
change, and a rebuild that changes a goal sends it back for review."""
from __future__ import annotations

import shutil

import pytest
import yaml
from suite_support import DEMO_KEY, SUITE, edit_spec
from typer.testing import CliRunner

from evalsuite.audit.acceptance import in_process_runner
from evalsuite.audit.reviews import Ledger
from evalsuite.cli import app
from evalsuite.domains.registry import domain_of as get_domain
from evalsuite.pipeline import driver, registry
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import GateError
from evalsuite.pipeline.stages import acceptance_results
from evalsuite.sourcing.spec import load_spec
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.world import World

RUNNER = CliRunner()


@pytest.fixture
def suite(built, tmp_path, monkeypatch):
    """A private copy of the built suite that requires adjudication, its home the default one:
    (spec file, spec, paths)."""
    spec_path, home = built
    shutil.copytree(spec_path.parent, tmp_path / "suite")
    shutil.copytree(home, tmp_path / "home")
    spec_file = tmp_path / "suite" / spec_path.name
    edit_spec(spec_file, require_adjudication=True)
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    monkeypatch.setenv("EVALSUITE_HOME", str(tmp_path / "home"))
    spec = load_spec(spec_file)
    return spec_file, spec, Paths(spec, tmp_path / "home")


def review(*args) -> str:
    """Run `evalsuite review ...`; it must succeed; returns its output."""
    result = RUNNER.invoke(app, ["review", *map(str, args)])
    assert result.exit_code == 0, (result.output, result.stderr)
    return result.output


def accept(spec, paths):
    return acceptance_results.accept(spec, paths, in_process_runner(World(get_domain(spec.domain), paths.world)))


def sign_all(paths, tasks, *reviewers):
    ledger = Ledger(paths.root / "reviews.jsonl")
    for t in tasks:
        for who in reviewers:
            ledger.sign(t, who, "agree")


def test_with_no_sign_offs_the_gate_blocks_and_lists_what_each_task_needs(suite):
    _, spec, paths = suite
    tasks = read_tasks(paths.tasks)
    accept(spec, paths)
    v = registry.gate_result("adjudicated", spec, paths)
    assert v.blocking
    n = len(tasks)  # the gate's count and acceptance's (the release is decided on the second), both said
    assert v.reason.startswith(f"{n} of {n} task(s) not adjudicated (blocks the release: acceptance "
                               f"quarantines {n} of {n} for any reason, 100%; allowed 10%): ")
    assert f"{tasks[0].task_id}: 0 of 2 reviewer sign-offs; {tasks[1].task_id}: 0 of 2" in v.reason
    assert v.reason.endswith(f"…and {len(tasks) - 5} more (evalsuite review status)")
    assert v.metadata["reviews"]["signed_by_0"] == len(tasks) and v.metadata["reviews"]["adjudicated"] == 0


def test_sign_disagree_resolve_then_the_gate_passes_and_the_release_holds_every_task(suite):
    spec_file, spec, paths = suite
    tasks = read_tasks(paths.tasks)
    one, split = tasks[3].task_id, tasks[7].task_id
    sign_all(paths, [t for t in tasks if t.task_id not in (one, split)], "ann", "bob")
    signed = review("sign", spec_file, "--task", one, "--reviewer", "ann", "--decision", "agree")
    assert "1 of 2 reviewer sign-offs" in signed
    review("sign", spec_file, "--task", split, "--reviewer", "ann", "--decision", "agree")
    out = review("sign", spec_file, "--task", split, "--reviewer", "bob", "--decision", "disagree", "--note", "AP-4?")
    assert out.strip().endswith("status: not adjudicated: disagreement open")
    status = review("status", spec_file).splitlines()
    assert status == [f"{len(tasks)} tasks: signed by 0: 0, 1: 1, 2 or more: {len(tasks) - 1}; disagreements open: 1; "
                      f"resolved: 0; adjudicated: {len(tasks) - 2}; needs review again: 0",
                      f"{one}: 1 of 2 reviewer sign-offs", f"{split}: disagreement open"]

    accept(spec, paths)  # two of 49 unreviewed: quarantined within the 10% allowance, the release still allowed
    v = registry.gate_result("adjudicated", spec, paths)
    assert not v.passed and not v.blocking
    assert v.reason == (f"2 of {len(tasks)} task(s) not adjudicated (quarantined, release still allowed: "
                        f"acceptance quarantines 2 of {len(tasks)} for any reason, 4%; allowed 10%): "
                        f"{one}: 1 of 2 reviewer sign-offs; {split}: disagreement open")

    cited = tasks[7].goal_state.assertions[0].clause  # a clause the disputed goal cites (AP-3 would not settle it)
    text = next(c.text for c in tasks[7].policy.clauses if c.id == cited).split(". ", 1)[1]
    out = review("resolve", spec_file, "--task", split, "--by", "carol", "--resolution",
                 f'{cited}: "{text}" That is the rule this case falls under, so the goal stands')
    assert out.strip().endswith("status: adjudicated")
    review("sign", spec_file, "--task", one, "--reviewer", "bob", "--decision", "agree")
    built = driver.build(spec_file, paths.home)
    assert (built.accepted, built.quarantined) == (len(tasks), 0)
    assert registry.gate_result("adjudicated", spec, paths).passed
    assert acceptance_results.audit_on_record(paths).reviews == {
        "tasks": len(tasks), "signed_by_0": 0, "signed_by_1": 0, "signed_by_2_or_more": len(tasks),
        "disagreements_open": 0, "resolved": 1, "adjudicated": len(tasks), "needs_review_again": 0}


def test_show_puts_each_assertion_beside_the_clause_it_cites(suite):
    spec_file, _, paths = suite
    task = read_tasks(paths.tasks)[0]
    out = review("show", spec_file, "--task", task.task_id, "--home", paths.home)
    clause = next(c for c in task.policy.clauses if c.id == task.goal_state.assertions[0].clause)
    a = task.goal_state.assertions[0]
    assert f"1. {a.table} where {', '.join(f'{k}={v}' for k, v in a.key.items())}" in out
    assert f"     {clause.id}: {clause.text}" in out
    for needle in (task.trigger.text, f"policy {task.policy.doc} {task.policy.version}",
                   f"1. {task.reference_solution[0].tool}(", task.provenance.source_record,
                   "status: not adjudicated: 0 of 2 reviewer sign-offs"):
        assert needle in out


def test_a_rebuild_that_changes_a_goal_sends_it_back_for_review(suite):
    spec_file, spec, paths = suite
    tasks = read_tasks(paths.tasks)
    sign_all(paths, tasks, "ann", "bob")
    # the same policies, copied beside the spec; then the v7 policy's reporting clause is reworded
    raw = yaml.safe_load(spec_file.read_text())
    copies = [shutil.copy(p, spec_file.parent / SUITE) for p in raw["policies"]]
    raw["policies"] = [f"{SUITE}/{c.split('/')[-1]}" for c in copies]
    spec_file.write_text(yaml.safe_dump(raw, sort_keys=False))
    assert driver.build(spec_file, paths.home).quarantined == 0  # same content: every sign-off still counts
    v7 = spec_file.parent / SUITE / "ap_policy_v7.md"
    v7.write_text(v7.read_text().replace("in the invoice currency.", "in the invoice currency, rounded to cents."))

    with pytest.raises(GateError) as blocked:
        driver.build(spec_file, paths.home)
    changed = [t.task_id for t in read_tasks(paths.tasks) if t.policy.version == "v7"]
    assert blocked.value.gate == "adjudicated" and 0 < len(changed) < len(tasks)
    assert f"{changed[0]}: 0 of 2 reviewer sign-offs (goal changed since 2 earlier sign-off(s))" in blocked.value.reason
    first, *listed = review("status", spec_file).splitlines()
    assert first.endswith(f"adjudicated: {len(tasks) - len(changed)}; needs review again: {len(changed)}")
    assert [line.split(":")[0] for line in listed] == changed


def test_a_new_sign_off_marks_acceptance_changed(suite):
    _, spec, paths = suite
    task = read_tasks(paths.tasks)[0]
    runner = in_process_runner(World(get_domain(spec.domain), paths.world))
    lenient = spec.model_copy(update={"acceptance": spec.acceptance.model_copy(update={"require_adjudication": False})})
    before = {s: registry.code_version(s, spec, paths) for s in registry.STAGES}
    loose = registry.code_version("acceptance_results", lenient, paths)
    out = acceptance_results.run(spec, paths, runner)
    Ledger(paths.root / "reviews.jsonl").sign(task, "ann", "agree")
    after = {s: registry.code_version(s, spec, paths) for s in registry.STAGES}
    assert {s for s in before if before[s] != after[s]} == {"acceptance_results"}
    assert registry.code_version("acceptance_results", lenient, paths) == loose  # not an input where not required
    again = acceptance_results.run(spec, paths, runner)
    assert again.data_version != out.data_version
    assert (out.metadata["reviews"]["signed_by_1"], again.metadata["reviews"]["signed_by_1"]) == (0, 1)


def test_acceptance_is_keyed_on_the_ledger_of_the_home_the_suite_is_built_in(suite, tmp_path, monkeypatch):
    """A build in another home (`--home X`, a Dagster home resource) is marked stale by a sign-off in X's ledger,
    and not by one in the default home's."""
    _, spec, default = suite
    other = tmp_path / "other_home"
    shutil.copytree(default.home, other)
    paths = Paths(spec, other)
    task = read_tasks(paths.tasks)[0]
    before = registry.code_version("acceptance_results", spec, paths)
    Ledger(default.root / "reviews.jsonl").sign(task, "ann", "agree")
    assert registry.code_version("acceptance_results", spec, paths) == before
    Ledger(paths.root / "reviews.jsonl").sign(task, "bob", "agree")
    assert registry.code_version("acceptance_results", spec, paths) != before


def test_a_ledger_line_that_cannot_be_read_does_not_count_and_an_unsealed_ledger_blocks(suite):
    _, spec, paths = suite
    ledger = Ledger(paths.root / "reviews.jsonl")
    ledger.path.write_text('{"task_id": "x", "kind": "sign"}\n')  # no line chained: a ledger from before the chain
    with pytest.raises(GateError, match=r"reviews\.jsonl: written before ledger lines were chained") as blocked:
        accept(spec, paths)
    assert blocked.value.gate == "adjudicated"
    ledger.path.write_text("")
    ledger.sign(read_tasks(paths.tasks)[0], "ann", "agree")
    with ledger.path.open("a") as fh:
        fh.write('{"task_id": "x", "kind": "sign"}\n')
    assert [e.reviewer for e in acceptance_results.ledger_entries(spec, paths)] == ["ann"]


@pytest.mark.parametrize("args, says", [
    (["sign", "{spec}", "--task", "no-such-task", "--reviewer", "ann", "--decision", "agree"],
     "tasks.jsonl: --task: no task 'no-such-task' in the suite's current tasks"),
    (["sign", "{spec}", "--task", "{task}", "--reviewer", " ", "--decision", "agree"],
     "--reviewer: a reviewer name is required"),
    (["sign", "{spec}", "--task", "{task}", "--reviewer", "ann", "--decision", "yes"],
     "--decision: expected agree or disagree, got 'yes'"),
    (["resolve", "{spec}", "--task", "{task}", "--by", "carol", "--resolution", "AP-3"], "no open disagreement"),
    (["status", "{missing}"], "suite spec not found"),
    (["show", "{spec}", "--task", "{task}", "--home", "{fresh}"], "has not been built in"),
])
def test_bad_input_is_one_line_and_exit_2(suite, tmp_path, args, says):
    spec_file, _, paths = suite
    fill = {"spec": spec_file, "task": read_tasks(paths.tasks)[0].task_id, "missing": tmp_path / "nope.yaml",
            "fresh": tmp_path / "fresh-home"}
    result = RUNNER.invoke(app, ["review", *(a.format(**fill) for a in args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], result.stderr
    assert not (paths.root / "reviews.jsonl").exists() and not fill["fresh"].exists()
