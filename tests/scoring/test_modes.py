"""The three trial modes side by side on the same tasks, and every scorecard naming its mode."""
from __future__ import annotations

from collections import Counter

import pytest

from evalsuite.core.identity import RunIdentity
from evalsuite.domains.mobile_service.generate import sample_world
from evalsuite.domains.ref import WorldRef
from evalsuite.scoring.modes import compare_modes, mode_identity, plot, to_markdown, with_mode
from evalsuite.scoring.render import to_markdown as scorecard_markdown
from evalsuite.scoring.runlog import SCORECARD_MD
from evalsuite.scoring.scorecard import build_scorecard, required_actions
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.harness import TrialSettings, run_trials


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    world, gen = sample_world(tmp_path_factory.mktemp("ms") / "world.sqlite", n=12, max_subtasks=2)
    release = RunIdentity(suite="ms", suite_version="t", task_set_sha256=task_set_sha256(gen.tasks),
                          seed_sha256=world.seed_sha256, environment_image=world.domain.image,
                          tool_schemas_sha256=world.domain.tool_schemas_sha256())
    out = {}
    for mode in ("default", "no_user", "oracle_plan"):
        tasks = with_mode(gen.tasks, mode)
        out[mode] = (tasks, run_trials(WorldRef.from_world(world), tasks, [make_agent("soloist")], 2,
                                       TrialSettings(mode_identity(release, tasks), workers=1)))
    return gen.tasks, out


def test_modes_side_by_side_with_pass_k_by_required_actions(runs, tmp_path):
    tasks, out = runs
    cmp = compare_modes({m: records for m, (_, records) in out.items()}, tasks, resamples=200)
    by = {m.mode: m for m in cmp.modes}
    needs_user = sum(any(c.actor == "user" for c in t.solution_calls()) for t in tasks)
    assert by["no_user"].curve[0].pass_hat == 1.0  # holding every tool, the plan always works
    assert by["default"].curve[0].pass_hat == pytest.approx(1 - needs_user / len(tasks))
    assert len({m.identity_sha256 for m in cmp.modes}) == 3  # three runs, never pooled
    counts = {p.required_actions: p.tasks for p in by["default"].by_actions}
    assert sum(counts.values()) == len(tasks)
    assert counts == {a: sum(required_actions(t) == a for t in tasks) for a in counts}
    text = to_markdown(cmp)
    assert "| default | soloist |" in text and "| no_user | soloist |" in text and "required actions" in text
    png = plot(cmp, tmp_path / "modes.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_of_another_mode_or_other_tasks_is_refused(runs):
    tasks, out = runs
    with pytest.raises(ValueError, match="ran in mode no_user"):
        compare_modes({"default": out["no_user"][1]}, tasks)
    with pytest.raises(ValueError, match="covers other tasks"):
        compare_modes({"default": out["default"][1][2:]}, tasks)


def test_every_scorecard_shows_its_mode(runs):
    _, out = runs
    tasks, records = out["oracle_plan"]
    card = build_scorecard(records, tasks, None, resamples=50)
    assert card.modes == ["oracle_plan"] and "- trial mode: oracle_plan" in scorecard_markdown(card)
    # composed tasks are sliced by the persona of their sampling stratum, each value with its task count
    personas = {r.value: r.tasks for r in card.agents[0].slices if r.slice == "persona"}
    assert personas == dict(Counter(t.provenance.stratum["persona"] for t in tasks))


def test_the_command_line_runs_a_release_in_each_mode_and_puts_them_side_by_side(tmp_path):
    from typer.testing import CliRunner

    from evalsuite.cli import app
    from evalsuite.releases.release import ReleaseManifest, write_release

    world, gen = sample_world(tmp_path / "world.sqlite", n=6, max_subtasks=1)
    domain = world.domain
    manifest = ReleaseManifest(
        suite="ms", version="t1", domain=domain.name, task_set_sha256=task_set_sha256(gen.tasks),
        seed_sha256=world.seed_sha256, environment_image=domain.image, tool_schemas_sha256=domain.tool_schemas_sha256(),
        policy_versions=["v1"], rights_decision={"allowed": True}, quarantined=[], n_tasks=len(gen.tasks),
        acceptance={"tasks": len(gen.tasks), "accepted": len(gen.tasks), "quarantined": 0, "releasable": True})
    release = write_release(tmp_path / "releases", manifest, gen.tasks, world.path)
    cli = CliRunner()
    for mode in ("default", "no_user", "oracle_plan"):
        done = cli.invoke(app, ["run", str(release), "--agent", "reference", "--trials", "1", "--workers", "1",
                                "--mode", mode, "--out", str(tmp_path / mode), "--no-progress", "--resamples", "50"])
        assert done.exit_code == 0, done.output
        assert f"- trial mode: {mode}" in (tmp_path / mode / SCORECARD_MD).read_text()
    runs = [str(tmp_path / m) for m in ("default", "no_user", "oracle_plan")]
    done = cli.invoke(app, ["modes", *runs, "--out", str(tmp_path / "cmp"), "--resamples", "50"])
    assert done.exit_code == 0, done.output
    assert "| no_user | reference | 6 | 6 | 1.000" in (tmp_path / "cmp" / "modes.md").read_text()
    assert (tmp_path / "cmp" / "modes.png").is_file()
    twice = cli.invoke(app, ["modes", runs[0], runs[0], "--out", str(tmp_path / "x")])
    assert twice.exit_code == 2 and "one run folder per mode" in twice.output
    bad = cli.invoke(app, ["run", str(release), "--agent", "reference", "--mode", "solo"])
    assert bad.exit_code == 2 and "--mode" in bad.output


def test_a_mode_with_its_own_policy_runs_under_it_and_a_policy_missing_a_cited_clause_is_refused(runs):
    task = runs[0][0]
    solo = task.policy.model_copy(update={"doc": "solo_policy", "version": "2"})
    task = task.model_copy(update={"mode_policies": {"no_user": solo}})
    assert with_mode([task], "no_user")[0].policy == solo
    assert with_mode([task], "oracle_plan")[0].policy == task.policy  # no policy of its own: the task's
    cited = task.goal_state.assertions[0].clause
    bare = solo.model_copy(update={"clauses": [c for c in solo.clauses if c.id != cited]})
    with pytest.raises(ValueError, match=rf"mode_policies.no_user: the goal state cites \['{cited}'\]"):
        type(task).model_validate({**task.model_dump(), "mode_policies": {"no_user": bare.model_dump()}})
