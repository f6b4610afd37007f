"""A declarative domain (examples/expense_desk: exports, YAML, SQL and Markdown only) builds through every gate,
its tools keep arguments out of SQL, its goals catch collateral writes and forbidden calls, and a file that holds
SQL it may not is refused at load in one line naming the file, the tool and the step."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from suite_support import ROOT
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.domains.declarative import DomainFileError, load_domain_file
from evalsuite.grading.grader import grade_trial
from evalsuite.releases.release import Release

EXAMPLE = ROOT / "examples" / "expense_desk"
RUNNER = CliRunner()


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Release:
    """The example built from a copy outside the checkout, with a key of its own (not the demo's)."""
    project = tmp_path_factory.mktemp("expense") / "expense_desk"
    shutil.copytree(EXAMPLE, project)
    home = project.parent / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSUITE_DEID_KEY", "k" * 64)
        result = RUNNER.invoke(app, ["build", str(project / "suite.yaml"), "--home", str(home)])
    assert result.exit_code == 0, result.output
    return Release(Path(json.loads(result.stdout.strip().splitlines()[-1])["release"]))


def test_the_example_releases_every_verified_case_that_agrees_with_its_policy(release):
    m = release.manifest
    assert (m.domain, m.domain_source, m.n_tasks, m.quarantined) == ("expense_desk", "domain.yaml", 32, [])
    assert (release.path / "domain.yaml").is_file()  # the release loads without the project's sources
    tasks = {t.task_id: t for t in release.tasks()}
    approve = tasks["expense_desk-EXP-003"]
    assert approve.policy.version == "v1" and approve.goal_state.forbidden_calls == ["issue_reimbursement"]
    assert [(a.table, a.clause) for a in approve.goal_state.assertions] == [
        ("expense_reports", "EX-2"), ("report_events", "EX-2")]
    assert approve.goal_state.assertions[0].expect == {"status": "approved", "decision_reason": "within_policy"}
    assert "event_id" not in approve.goal_state.assertions[1].key  # masked: depends on call order


def test_reference_passes_every_task_and_the_baselines_none(release, tmp_path):
    result = RUNNER.invoke(app, ["run", str(release.path), "--agent", "reference", "--agent", "noop",
                                 "--agent", "adversary", "--out", str(tmp_path / "run"), "--trials", "1",
                                 "--workers", "1"])
    assert result.exit_code == 0, result.output
    card = json.loads((tmp_path / "run" / "scorecard.json").read_text())
    passed = {a["agent"]: a["curve"][0]["pass_hat"] for a in card["agents"]}
    assert passed == {"reference": 1.0, "noop": 0.0, "adversary": 0.0}


def _trial(release: Release, task_id: str, calls: list[tuple[str, dict]]):
    task = next(t for t in release.tasks() if t.task_id == task_id)
    world = release.open_world()
    trial = world.reset(task.role)
    for tool, args in calls:
        trial.call(tool, args)
    return task, world, trial


def _grade(release, task_id, calls):
    task, _, trial = _trial(release, task_id, calls)
    return grade_trial(trial, "", task.goal_state, task.role, set(task.goal_state.forbidden_calls))


def test_the_reference_passes_and_a_collateral_write_or_forbidden_call_fails(release):
    ref = [(c.tool, c.arguments) for c in next(
        t for t in release.tasks() if t.task_id == "expense_desk-EXP-003").reference_solution]
    assert _grade(release, "expense_desk-EXP-003", ref).passed
    collateral = _grade(release, "expense_desk-EXP-003", [*ref, ("escalate_report", {"report_id": "R2005"})])
    assert not collateral.passed and any("R2005" in c.detail for c in collateral.failures())
    forbidden = _grade(release, "expense_desk-EXP-003", [*ref, ("issue_reimbursement", {"report_id": "R2002"})])
    assert not forbidden.passed and any("issue_reimbursement" in c.name + c.detail for c in forbidden.failures())


def test_sql_in_an_argument_is_a_value_never_sql(release):
    task, world, trial = _trial(release, "expense_desk-EXP-003", [])
    before = trial.content_sha256()
    read = trial.call("get_report", {"report_id": "R2002' OR '1'='1"})
    assert read.outcome == "error" and "not found" in read.error
    write = trial.call("reject_report", {"report_id": "x'; DELETE FROM expense_reports; --", "reason": "duplicate"})
    assert write.outcome == "error" and trial.content_sha256() == before


def _with(tmp_path: Path, edit) -> Path:
    raw = yaml.safe_load((EXAMPLE / "domain.yaml").read_text())
    edit(raw)
    path = tmp_path / "domain.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


COLUMNS = {"employees": ["employee_id", "name", "email", "cost_center", "status"],
           "expense_reports": ["report_id", "employee_id", "amount", "category", "receipt_attached", "status",
                               "submitted_on", "decision_reason", "updated_at"],
           "resolved_cases": ["case_id", "report_id", "summary", "decision", "amount", "outcome_verified",
                              "resolved_on", "resolution_actions", "closing_note"]}


def _step(raw: dict, tool: str, index: int, sql: str) -> None:
    raw["tools"][tool]["steps"][index]["sql"] = sql


@pytest.mark.parametrize("edit, key, says", [
    (lambda r: _step(r, "approve_report", 2, "DROP TABLE expense_reports"), "tools.approve_report.steps.2.sql",
     "a DROP statement"),
    (lambda r: _step(r, "get_report", 0, "SELECT * FROM resolved_cases WHERE report_id = :report_id"),
     "tools.get_report.steps.0.sql", "case table resolved_cases"),
    (lambda r: _step(r, "get_report", 0, "SELECT * FROM expense_reports WHERE report_id = :id"),
     "tools.get_report.steps.0.sql", ":id is not declared"),
    (lambda r: _step(r, "get_report", 0, "UPDATE expense_reports SET status = 'paid' WHERE report_id = :report_id"),
     "tools.get_report.steps.0.sql", "a read tool"),
    (lambda r: _step(r, "list_reports", 0, "SELECT 1; DELETE FROM employees"), "tools.list_reports.steps.0.sql",
     "2 statements"),
    (lambda r: _step(r, "get_report", 0, "SELECT * FROM expense_reports WHERE report_id = ?"),
     "tools.get_report.steps.0.sql", "positional"),
    (lambda r: r["roles"]["expense_clerk"]["write"].append("get_report"), "roles.expense_clerk.write",
     "get_report is a read tool"),
    (lambda r: r["derivation"]["clauses"].pop("escalate_report"), "derivation.clauses", "escalate_report"),
    (lambda r: r["tools"]["get_report"].update(kind="delete"), "tools.get_report.kind", ""),
])
def test_a_file_holding_what_it_may_not_is_refused_at_load_in_one_line(tmp_path, edit, key, says):
    path = _with(tmp_path, edit)
    with pytest.raises(DomainFileError) as err:
        load_domain_file(path, COLUMNS)
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{path}: {key}") and says in line, line


def test_a_build_on_a_destructive_domain_stops_in_one_line_and_writes_no_release(tmp_path):
    project = tmp_path / "expense_desk"
    shutil.copytree(EXAMPLE, project)
    raw = yaml.safe_load((project / "domain.yaml").read_text())
    _step(raw, "approve_report", 2, "DELETE FROM employees")
    raw["tools"]["approve_report"]["kind"] = "read"
    (project / "domain.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    result = RUNNER.invoke(app, ["build", str(project / "suite.yaml"), "--home", str(tmp_path / "home")],
                           env={"EVALSUITE_DEID_KEY": "k" * 64})
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {project / 'domain.yaml'}: tools.approve_report.steps.2.sql: writes, but a read tool or a query "
        "may only SELECT"]
    assert not (tmp_path / "home" / "releases").exists()


def test_a_release_of_an_unknown_domain_is_one_line_and_exit_2(release, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(release.path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.update(domain="nope_desk", domain_source=None)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    result = RUNNER.invoke(app, ["run", str(copy), "--agent", "reference", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert "unknown domain 'nope_desk'" in line and "evalsuite.domains" in line
    assert not (tmp_path / "run").exists()


def test_the_bound_file_a_release_keeps_loads_alone_to_the_same_tools(release):
    package = load_domain_file(release.path / "domain.yaml")
    assert package.domain.tool_schemas_sha256() == release.domain().domain.tool_schemas_sha256()
    assert package.domain.image == release.manifest.environment_image


class ExpenseRules:
    """A team's own agent, in plain Python: reads the report and decides by the policy's rules."""

    name = "expense_rules"

    def run(self, task, env) -> str:
        report_id = task.trigger.item_id
        report = env.call("get_report", {"report_id": report_id}).result[0]
        limit = 500 if task.policy.version == "v1" else 250
        if report["category"] in ("alcohol", "personal"):
            env.call("reject_report", {"report_id": report_id, "reason": "not_reimbursable"})
        elif report["receipt_attached"] == "no":
            env.call("request_receipt", {"report_id": report_id})
        elif float(report["amount"]) <= limit:
            env.call("approve_report", {"report_id": report_id})
        else:
            env.call("escalate_report", {"report_id": report_id})
        return f"Report {report_id} decided."


def test_a_teams_own_python_agent_runs_through_the_api_as_an_object_or_a_factory(release, tmp_path):
    import evalsuite

    run = evalsuite.run(release, [ExpenseRules, "noop"], out=tmp_path / "run", trials=1)
    assert run.pass_hat() == {"expense_rules": {1: 1.0}, "noop": {1: 0.0}}
    assert run.meta.identity["agent_configs"]["expense_rules"]["kind"] == "python"


@pytest.mark.parametrize("args, page", [(["domain", "schema", "--markdown"], "reference/declarative-domain.md"),
                                        (["task", "schema", "--markdown"], "reference/task-records.md")])
def test_the_reference_pages_are_the_ones_the_models_make(args, page):
    """Regenerate with `evalsuite domain schema --markdown > docs/reference/declarative-domain.md` (and task)."""
    assert RUNNER.invoke(app, args).stdout == (ROOT / "docs" / page).read_text()


def test_the_published_schema_takes_the_example_and_refuses_a_stray_key():
    import jsonschema

    schema = json.loads(RUNNER.invoke(app, ["domain", "schema"]).stdout)
    example = yaml.safe_load((EXAMPLE / "domain.yaml").read_text())
    jsonschema.validate(example, schema)
    example["tools"]["get_report"]["stepz"] = example["tools"]["get_report"].pop("steps")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(example, schema)


def test_acceptance_trials_in_worker_processes_find_the_declarative_domain(release):
    """A large acceptance run spreads over worker processes (trials.harness.default_workers); a worker knows no
    declarative domain until it is told where its bound file is."""
    from evalsuite.pipeline.paths import Paths
    from evalsuite.pipeline.preflight import domain_for
    from evalsuite.pipeline.stages import acceptance_results, derived_tasks
    from evalsuite.sourcing.spec import load_spec
    from evalsuite.worlds.world import World

    home = release.path.parents[2]
    spec = load_spec(home.parent / "expense_desk" / "suite.yaml")
    paths = Paths(spec, home)
    world = World(domain_for(spec).domain, paths.world)
    runner = acceptance_results.parallel_runner(spec, world, derived_tasks.task_set_on_disk(paths), workers=2,
                                                paths=paths)
    results = runner(derived_tasks.tasks_on_disk(paths)[:4], {"reference": 1})
    assert [r.outcome for r in results] == ["pass"] * 4, [r.error for r in results]
