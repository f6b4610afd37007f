"""The review walkthrough at the command line: a reviewer signs every task in one command, and a suite that does
not require adjudication says how to make sign-offs count."""
from __future__ import annotations

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
    assert not registry.judge("adjudicated", load_spec(spec_file), paths).blocking
