"""The trial engine: many I/O-bound trials in flight in one process, each on its own world."""
import asyncio
import gc

import pytest
from harness_support import make_release

from evalsuite.core.identity import AgentConfig, TrialLimits
from evalsuite.core.records import ModelCall, Usage
from evalsuite.releases.release import Release
from evalsuite.trials.engine import RUN_GC_THRESHOLD
from evalsuite.trials.harness import TrialSettings, run_trials
from evalsuite.trials.spend import RunCap, RunCapped
from evalsuite.trials.tracelog import repair_traces

TIMING = {"seconds", "trace", "usage"}  # wall times differ run to run; the rest of a record must not


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return Release(make_release(ap, tmp_path_factory.mktemp("releases")))


class SlowReference:
    """The reference solution with an await between calls, as a model agent waits on its endpoint; it bills
    100 tokens per call and counts how many of its trials are in flight at once."""

    max_in_flight = 4

    def __init__(self, name="slow", pause=0.01):
        self.name, self.pause = name, pause
        self.in_flight = self.peak = 0

    async def arun(self, task, env):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        env.usage = Usage()
        try:
            for call in task.solution_calls():
                env.before_model_call()
                await asyncio.sleep(self.pause)
                env.usage.model_calls.append(ModelCall(model="gpt-4o-mini", tokens_in=80, tokens_out=20))
                env.call(call.tool, call.arguments)
            return task.reference_answer or ""
        finally:
            self.in_flight -= 1


class Snooper:
    """Makes the first write of the reference solution, waits (other trials run meanwhile), then notes which
    rows its world's change log holds: its own write's, and nothing another trial in flight wrote."""

    name = "snoop"

    def __init__(self, max_in_flight):
        self.max_in_flight = max_in_flight
        self.seen = {}

    async def arun(self, task, env):
        writes = [c for c in task.solution_calls() if c.tool in env._trial.domain.write_tools()]
        env.call(writes[0].tool, writes[0].arguments)
        await asyncio.sleep(0.02)
        world = env._trial.world
        self.seen[task.task_id] = {t: sorted(keys) for t, keys in world.selector.changed_keys(world.trial_db).items()}
        return ""


def comparable(records):
    return [r.model_dump(mode="json", exclude=TIMING) for r in records]


def test_concurrent_records_equal_sequential_ones(release):
    world, tasks, identity = release.world_ref(), release.tasks()[:12], release.run_identity()
    one, many = SlowReference(), SlowReference()
    serial = run_trials(world, tasks, [one], 2, TrialSettings(identity, seed=4, workers=1, max_in_flight=1))
    parallel = run_trials(world, tasks, [many], 2, TrialSettings(identity, seed=4, workers=1, max_in_flight=8))
    assert one.peak == 1 and many.peak == 8
    assert comparable(serial) == comparable(parallel)
    assert {r.outcome for r in parallel} == {"pass"}
    assert [len(r.trace) for r in serial] == [len(r.trace) for r in parallel]


def test_the_agent_default_in_flight_applies_when_the_run_names_none(release):
    agent = SlowReference()
    run_trials(release.world_ref(), release.tasks()[:10], [agent], 1,
               TrialSettings(release.run_identity(), workers=1))
    assert agent.peak == SlowReference.max_in_flight


def test_a_trials_writes_never_reach_another_trial_in_flight(release):
    tasks = [t for t in release.tasks() if any(c.tool in release.world_ref().open().domain.write_tools()
                                               for c in t.solution_calls())][:16]
    alone, together = Snooper(1), Snooper(8)
    run_trials(release.world_ref(), tasks, [alone], 1, TrialSettings(release.run_identity(), workers=1))
    records = run_trials(release.world_ref(), tasks, [together], 1, TrialSettings(release.run_identity(), workers=1))
    assert len(records) == 16 and "infra_error" not in {r.outcome for r in records}
    assert all(alone.seen[t.task_id] for t in tasks)  # each trial's own write is in its change log
    assert together.seen == alone.seen  # and only its own, with 8 in flight


def test_limits_end_a_trial_as_budget_exhausted_with_what_it_spent(release):
    tasks = [t for t in release.tasks() if len(t.solution_calls()) >= 3][:3]
    config = AgentConfig(name="slow", limits=TrialLimits(model_calls=2))
    identity = release.run_identity().with_agents([config])
    records = run_trials(release.world_ref(), tasks, [SlowReference()], 1,
                         TrialSettings(identity, workers=1, max_in_flight=3))
    assert {r.outcome for r in records} == {"budget_exhausted"}
    assert {r.exhausted for r in records} == {"model calls: 2 of 2"}
    assert all(len(r.usage.model_calls) == 2 and r.usage.tokens_in == 160 for r in records)


def test_a_wall_time_limit_ends_a_slow_trial(release):
    config = AgentConfig(name="slow", limits=TrialLimits(seconds=0.05))
    identity = release.run_identity().with_agents([config])
    task = next(t for t in release.tasks() if len(t.solution_calls()) >= 2)
    [record] = run_trials(release.world_ref(), [task], [SlowReference(pause=0.2)], 1,
                          TrialSettings(identity, workers=1))
    assert record.outcome == "budget_exhausted" and record.exhausted == "wall time: 0.05 s"
    assert not record.passed and record.verdict is not None  # its effects (none yet) are graded


def test_a_run_cap_stops_new_trials_and_the_folder_resumes(release, tmp_path):
    tasks = release.tasks()[:10]
    settings = TrialSettings(release.run_identity(), workers=1, max_in_flight=2, out_dir=tmp_path,
                             cap=RunCap(tokens=1500))
    with pytest.raises(RunCapped) as capped:
        run_trials(release.world_ref(), tasks, [SlowReference()], 1, settings)
    ran = repair_traces(tmp_path / "traces.jsonl").records
    assert 0 < len(ran) < 10 and capped.value.reached.trials_not_run == 10 - len(ran)
    assert capped.value.reached.limit == "tokens 1,500"
    assert sum(r.usage.tokens_in + r.usage.tokens_out for r in ran[:-2]) < 1500  # at most the lanes in flight past it
    again = run_trials(release.world_ref(), tasks, [SlowReference()], 1,
                       TrialSettings(release.run_identity(), workers=1, out_dir=tmp_path))
    assert len(again) == 10 and len({r.key for r in again}) == 10  # none lost, none run twice
    assert len(repair_traces(tmp_path / "traces.jsonl").records) == 10


def test_a_config_sets_its_in_flight_without_changing_the_identity(release):
    config = AgentConfig(name="slow", max_in_flight=3)
    identity = release.run_identity().with_agents([config])
    agent = SlowReference()
    records = run_trials(release.world_ref(), release.tasks()[:9], [agent], 1, TrialSettings(identity, workers=1))
    assert agent.peak == 3
    plain = release.run_identity().with_agents([AgentConfig(name="slow")])
    assert identity.fields("slow") == plain.fields("slow")  # how many ran at once is no part of what was measured
    assert {r.identity_sha256 for r in records} == {
        run_trials(release.world_ref(), release.tasks()[:1], [SlowReference()], 1,
                   TrialSettings(plain, workers=1))[0].identity_sha256}


def test_a_run_cap_counts_the_trials_in_flight_at_the_mean_spend_of_those_finished():
    from evalsuite.trials.spend import Spend

    spend = Spend(None)
    for _ in range(4):
        spend.add(Usage(model_calls=[ModelCall(model="m", tokens_in=80, tokens_out=20)]))
    cap = RunCap(tokens=600)
    assert spend.reached(cap, in_flight=1) is None  # 400 spent + 1 x 100 expected
    assert spend.reached(cap, in_flight=2) == "tokens 600"  # 400 + 2 x 100: starting another would pass the cap
    assert Spend(None).reached(cap, in_flight=32) is None  # nothing finished yet: nothing to project from


@pytest.mark.parametrize("limits, exhausted", [
    (TrialLimits(tokens=250), "tokens: 300 of 250"),  # 100 a call: the fourth call would start past it
    (TrialLimits(cost=0.00003), "cost: 0.000048 of 0.00003 USD"),  # gpt-4o-mini: 80 x 0.15 + 20 x 0.60 per M a call
])
def test_token_and_cost_limits_end_a_trial_at_the_first_call_past_them(release, limits, exhausted):
    task = next(t for t in release.tasks() if len(t.solution_calls()) >= 4)
    identity = release.run_identity().with_agents([AgentConfig(name="slow", limits=limits)])
    [record] = run_trials(release.world_ref(), [task], [SlowReference()], 1, TrialSettings(identity, workers=1))
    assert record.outcome == "budget_exhausted" and record.exhausted == exhausted
    assert len(record.usage.model_calls) == len(record.trace) < len(task.solution_calls())


class HeapWatcher(SlowReference):
    """Notes whether the heap is frozen while its trials run."""

    def __init__(self):
        super().__init__("heap")
        self.frozen, self.thresholds = [], []

    async def arun(self, task, env):
        self.frozen.append(gc.get_freeze_count())
        self.thresholds.append(gc.get_threshold()[0])
        return await super().arun(task, env)


def test_the_collector_is_tuned_while_trials_run_and_given_back_after(release):
    """The engine keeps the objects alive at the start of a run out of the collector's passes (gc.freeze) and
    collects less often, and afterwards the process's collector is as it was: unfrozen (or still frozen by the
    process itself), its thresholds its own."""
    agent, before = HeapWatcher(), gc.get_threshold()
    settings = TrialSettings(release.run_identity(), workers=1)
    run_trials(release.world_ref(), release.tasks()[:2], [agent], 1, settings)
    assert min(agent.frozen) > 0 and gc.get_freeze_count() == 0
    assert min(agent.thresholds) == RUN_GC_THRESHOLD and gc.get_threshold() == before
    gc.freeze()  # a process that froze its own heap (a forking server) keeps it frozen
    try:
        run_trials(release.world_ref(), release.tasks()[:2], [HeapWatcher()], 1, settings)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
