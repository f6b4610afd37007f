"""Mobile service: composed tasks proven sound, solved by the reference with the scripted user in every mode,
failed by the no-op, the adversary and an agent that skips the user; both worlds reset, hashed and graded."""
from __future__ import annotations

import pytest

from evalsuite.core.records import ToolCall
from evalsuite.domains.mobile_service.generate import composites, sample_world
from evalsuite.grading.grader import grade_trial
from evalsuite.scoring.modes import with_mode
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import run_trial
from evalsuite.trials.users.dual import user_world


@pytest.fixture(scope="module")
def ms(tmp_path_factory):
    world, gen = sample_world(tmp_path_factory.mktemp("ms") / "world.sqlite", n=20, max_subtasks=2)
    return world, gen


class Replay:
    """Runs given calls as the agent: user-side steps asked of the user when there is one, else called."""

    name = "replay"

    def __init__(self, calls, final="", ask=True):
        self.calls, self.final, self.ask = calls, final, ask

    def run(self, task, env):
        if env.user is not None:
            env.user.reply()
        for c in self.calls:
            if c.actor == "user" and env.user is not None and self.ask:
                env.user.reply(f"Please {c.tool.replace('_', ' ')} on your phone.")
            else:
                env.call(c.tool, c.arguments)
        return self.final


def _task(gen, *names):
    return next(t for t in gen.tasks if all(n in t.provenance.source_record for n in names))


def test_generation_verifies_every_composite_and_samples_balanced_strata(ms):
    _, gen = ms
    assert len(composites()) == 767 and len(composites(max_subtasks=2)) == gen.composites  # every combination
    assert gen.verified + sum(gen.dropped.values()) == gen.composites
    # resetting the APN also restores MMS, so an MMS composite with both is solved without its MMS step
    assert gen.dropped == {"solved without mms_off": 1}
    assert gen.sampled == len(gen.tasks) == 20 and gen.candidates == 3 * gen.verified
    assert sum(s["sampled"] for s in gen.strata) == 20
    assert max(s["sampled"] for s in gen.strata) - min(s["sampled"] for s in gen.strata if s["available"] > 1) <= 1
    assert {t.user_scenario.persona for t in gen.tasks} == {"none", "easy", "hard"}


@pytest.mark.parametrize("mode", ["default", "no_user", "oracle_plan"])
def test_the_reference_solves_every_task_and_the_baselines_fail(ms, mode):
    world, gen = ms
    for task in with_mode(gen.tasks, mode):
        ref = run_trial(world, task, make_agent("reference"))
        assert ref.passed and ref.mode == mode, (task.task_id, ref.error, ref.verdict and ref.verdict.failures())
        assert ref.user_reset_sha256 == user_world(world).seed_sha256
        for name in ("noop", "adversary"):
            assert not run_trial(world, task, make_agent(name)).passed, (task.task_id, name)


def test_in_dual_control_the_agent_cannot_touch_the_phone(ms):
    world, gen = ms
    task = _task(gen, "airplane_mode_on")
    result = run_trial(world, task, Replay(task.solution_calls(), ask=False))
    assert not result.passed and result.user_trace == []
    assert [e.outcome for e in result.trace if e.tool == "turn_off_airplane_mode"] == ["error"]
    failed = {c.name for c in result.verdict.failures()}
    assert any(n.startswith("user world: assertion") for n in failed)
    # the same calls in no-user mode reach the phone: the agent holds every tool
    alone = run_trial(world, with_mode([task], "no_user")[0], Replay(task.solution_calls(), ask=False))
    assert alone.passed and [e.actor for e in alone.user_trace] == ["agent"]


def test_an_unneeded_step_on_the_phone_is_collateral_and_the_next_trial_starts_clean(ms):
    world, gen = ms
    task = _task(gen, "airplane_mode_on")
    extra = ToolCall(tool="turn_on_data_roaming", arguments={"device_id": "x"}, actor="user")
    result = run_trial(world, task, Replay([*task.solution_calls(), extra]))
    assert not result.passed
    assert "user world: no collateral change" in {c.name for c in result.verdict.failures()}
    again = run_trial(world, task, make_agent("noop"))  # the phone was reset: airplane mode is on again
    assert not again.passed and again.user_reset_sha256 == result.user_reset_sha256


def test_the_refuel_charge_must_be_told_to_the_customer(ms):
    world, gen = ms
    task = _task(gen, "data_exhausted_refuel")
    told = run_trial(world, task, Replay(task.solution_calls(), final=task.reference_answer))
    silent = run_trial(world, task, Replay(task.solution_calls(), final="Done."))
    assert told.passed and "4.00" in task.reference_answer
    assert [c.name for c in silent.verdict.failures()] == ["check told_user"]


def test_alternatives_pass_and_negative_controls_fail(ms):
    world, gen = ms
    task = next(t for t in gen.tasks if t.negative_controls)
    assert run_trial(world, task, Replay(task.alternative_solutions[0], task.reference_answer)).passed
    control = task.negative_controls[0]
    assert not run_trial(world, task, Replay(control.calls, control.final_message)).passed
    trial = world.reset(task.role)  # the agent's world alone looks solved: only the user-side world shows it is not
    for call in control.calls:
        trial.call(call.tool, call.arguments)
    assert task.goal_state.user_assertions
    assert grade_trial(trial, control.final_message, task.goal_state, task.role).passed


def test_records_validate_against_both_worlds_and_a_wrong_user_side_column_is_named(ms):
    from evalsuite.audit.validation import domain_problems

    world, gen = ms
    assert [p for t in gen.tasks for p in domain_problems(t, world.domain)] == []
    bad = next(t for t in gen.tasks if t.goal_state.user_assertions).model_copy(deep=True)
    bad.goal_state.user_assertions[0].expect = {"volume": 3}
    assert domain_problems(bad, world.domain) == [("goal_state.user_assertions.0.expect.volume",
                                                   "no column 'volume' in table devices")]
