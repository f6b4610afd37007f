"""The review walkthrough at the command line: a reviewer signs every task in one command, and a suite that does
not require adjudication says how to make sign-offs count."""
from __future__ import annotations

import json

import pytest
from suite_support import DEMO_KEY, edit_spec, private_copy
from typer.testing import CliRunner

from evalsuite.audit.reviews import Ledger, review_state
from evalsuite.cli import app
from evalsuite.pipeline import registry
from evalsuite.pipeline.paths import Paths
from evalsuite.sourcing.spec import load_spec
from evalsuite.tasks.taskfile import read_tasks

RUNNER = CliRunner()
NOTE = "set `acceptance.require_adjudication: true` in the spec"


@pytest.fixture
def suite(built, tmp_path, monkeypatch):
    """A private copy of the built suite and its home: (spec file, paths)."""
    spec_file, home = private_copy(built, tmp_path)
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    monkeypatch.setenv("EVALSUITE_HOME", str(home))
    return spec_file, Paths(load_spec(spec_file), home)


def review(*args) -> str:
    result = RUNNER.invoke(app, ["review", *map(str, args)])
    assert result.exit_code == 0, (result.output, result.stderr)
    return result.output


def test_two_reviewers_adjudicate_a_whole_suite_in_two_commands(suite):
    spec_file, paths = suite
    edit_spec(spec_file, require_adjudication=True)
    tasks = read_tasks(paths.tasks)
    first = review("sign", spec_file, "--task", tasks[0].task_id, "--reviewer", "ann", "--decision", "disagree")
    assert "disagree recorded" in first
    out = review("sign", spec_file, "--all", "--reviewer", "Ann ", "--decision", "agree")
    assert out.strip() == (f"Ann agree recorded on {len(tasks) - 1} task(s); 1 already signed by Ann left as they "
                           f"were (sign one with --task to change it); adjudicated: 0 of {len(tasks)}")
    out = review("sign", spec_file, "--all", "--reviewer", "bob", "--decision", "agree", "--note", "checked")
    assert out.strip().endswith(f"adjudicated: {len(tasks) - 1} of {len(tasks)}")
    entries = Ledger(paths.root / "reviews.jsonl").entries()
    assert len(entries) == 2 * len(tasks)  # one line per task and reviewer: ann's disagreement kept, not replaced
    assert review_state(tasks[0], entries).open_disagreement
    again = review("sign", spec_file, "--all", "--reviewer", "bob", "--decision", "agree")
    assert again.startswith(f"bob agree recorded on 0 task(s); {len(tasks)} already signed by bob")
    assert len(Ledger(paths.root / "reviews.jsonl").entries()) == 2 * len(tasks)
    assert NOTE not in out + again


@pytest.mark.parametrize("args, says", [
    (["--reviewer", "ann", "--decision", "agree"], "name one task with --task TASK, or every task with --all"),
    (["--all", "--task", "x", "--reviewer", "ann", "--decision", "agree"], "or every task with --all"),
    (["--all", "--reviewer", "ann", "--decision", "yes"], "--decision: expected agree or disagree, got 'yes'"),
    (["--all", "--reviewer", " ", "--decision", "agree"], "--reviewer: a reviewer name is required"),
])
def test_sign_all_refuses_what_sign_refuses_and_writes_nothing(suite, args, says):
    spec_file, paths = suite
    result = RUNNER.invoke(app, ["review", "sign", str(spec_file), *args])
    assert result.exit_code == 2 and says in result.output + result.stderr
    assert not (paths.root / "reviews.jsonl").exists()


def test_a_suite_that_does_not_require_adjudication_says_how_to_make_sign_offs_count(suite):
    spec_file, paths = suite
    task = read_tasks(paths.tasks)[0].task_id
    for args in (["status", spec_file], ["show", spec_file, "--task", task],
                 ["sign", spec_file, "--task", task, "--reviewer", "ann", "--decision", "agree"],
                 ["sign", spec_file, "--all", "--reviewer", "bob", "--decision", "agree"]):
        out = review(*args)
        assert out.splitlines()[-1] == (f"note: {spec_file} does not require adjudication, so sign-offs do not gate "
                                        f"its releases; {NOTE} and rebuild to make them count")
    assert not registry.gate_result("adjudicated", load_spec(spec_file), paths).blocking


def test_a_second_spelling_of_one_reviewer_is_not_a_second_reviewer(suite):
    """The finding's reproducer: `--reviewer ann`, then `--reviewer $'ann\\u200b'` (and other spellings)."""
    spec_file, paths = suite
    task = read_tasks(paths.tasks)[0]
    review("sign", spec_file, "--task", task.task_id, "--reviewer", "ann", "--decision", "agree")
    for again in ("ann\u200b", "\u0430nn", "ANN.", "ann (2)"):
        out = review("sign", spec_file, "--task", task.task_id, "--reviewer", again, "--decision", "agree")
        assert out.splitlines()[0].endswith("status: not adjudicated: 1 of 2 reviewer sign-offs")
    status = review("status", spec_file)
    assert f"{task.task_id}: 1 of 2 reviewer sign-offs" in status


def test_a_disagreement_is_resolved_by_someone_else_quoting_the_clause_and_a_forged_line_is_skipped(suite):
    spec_file, paths = suite
    task = read_tasks(paths.tasks)[0]
    review("sign", spec_file, "--task", task.task_id, "--reviewer", "ann", "--decision", "disagree")
    clause = next(c for c in task.policy.clauses if c.id == task.goal_state.assertions[0].clause)
    quoted = f'{clause.id}: "{clause.text.split(". ", 1)[1]}"'
    for by, text, says in (("Ann.", quoted, "--by: Ann. signed this goal (ann: disagree)"),
                           ("carol", clause.id, f"--resolution: quote the text of {clause.id} that settles it")):
        result = RUNNER.invoke(app, ["review", "resolve", str(spec_file), "--task", task.task_id, "--by", by,
                                     "--resolution", text])
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
        assert result.stderr.startswith(f"error: {says}"), result.stderr
    ledger_file = paths.root / "reviews.jsonl"
    with ledger_file.open("a") as fh:  # bob's agreement, appended by hand
        fh.write(ledger_file.read_text().replace('"ann"', '"bob"').replace('"disagree"', '"agree"'))
    result = RUNNER.invoke(app, ["review", "status", str(spec_file)])  # on 7bb15c3: exit 2, every command refused
    assert result.exit_code == 0
    assert result.stderr.strip() == (f"warning: {ledger_file}:2: this line does not follow from the one before it "
                                     "(the file was edited, or a line added or removed, by hand); restore it as "
                                     "evalsuite wrote it; skipped")
    assert f"{task.task_id}: disagreement open" in result.output  # the forged agreement does not count


def test_seal_chains_a_ledger_from_before_the_chain_once(suite):
    spec_file, paths = suite
    edit_spec(spec_file, require_adjudication=True)
    task = read_tasks(paths.tasks)[0]
    ledger_file = paths.root / "reviews.jsonl"
    old = [{"task_id": task.task_id, "goal_sha256": review_state(task, []).goal_sha256, "kind": "sign",
            "reviewer": who, "decision": "agree", "at": "2026-11-01T00:00:00Z"} for who in ("ann", "bob")]
    ledger_file.write_text("".join(json.dumps(o) + "\n" for o in old))
    refused = RUNNER.invoke(app, ["review", "status", str(spec_file)])
    assert refused.exit_code == 2 and "run `evalsuite review seal SPEC` once" in refused.stderr
    out = review("seal", spec_file)
    assert out.splitlines()[0] == (f"{ledger_file}: 2 line(s) chained; a line added or edited by hand is refused "
                                   "from now on")
    assert f"{task.task_id}:" not in review("status", spec_file)  # adjudicated by the sealed sign-offs
    again = RUNNER.invoke(app, ["review", "seal", str(spec_file)])
    assert again.exit_code == 2 and "chained already; nothing to seal" in again.stderr
