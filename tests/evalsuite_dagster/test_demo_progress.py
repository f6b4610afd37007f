"""`make demo` shows its runs' steps as they run (examples/demo.py, StageProgress), not 20-40 s of silence."""
from __future__ import annotations

import dagster as dg
from rich.console import Console

from examples.demo import StageProgress


def test_each_run_gets_a_bar_naming_the_step_running_and_counting_those_done():
    seen = {}
    console = Console(record=True, width=120)

    @dg.asset(name="rights_review", key_prefix="s")
    def first() -> None:
        pass

    @dg.asset(name="seed_snapshot", key_prefix="s", deps=[first])
    def second() -> None:
        progress.update()  # what the thread shows while this step runs
        seen["while"] = [t.description for t in progress.progress.tasks]

    job = dg.define_asset_job("s__build_job", selection=[first, second])
    defs = dg.Definitions(assets=[first, second], jobs=[job])
    with dg.instance_for_test() as instance, StageProgress(instance, console, prefix="s") as progress:
        assert defs.resolve_job_def("s__build_job").execute_in_process(instance=instance).success
    assert seen["while"] == ["build_job: seed_snapshot"]  # the suite prefix off the step key
    shown = console.export_text()
    assert "build_job: success" in shown and "2/2" in shown
