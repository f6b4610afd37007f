"""`make demo`: the bundled AP-exceptions suite through the Dagster asset graph, then the baseline agents.

    .venv/bin/python examples/demo.py [SUITE]

It drives the code location's jobs in this process with the tests' driver
(tests/dagster_driver.py: the build job, the new-release sensor's trial runs,
the scorecard, the leaderboard and the evidence site), on the embedded
instance in DAGSTER_HOME (SQLite; the Makefile puts it under the home folder
and copies the top-level dagster.yaml there), so everything it did is in the
UI afterwards: `make ui`. The runs execute in this process, so a progress bar per
run shows its steps as they go (StageProgress).
"""
import json
import os
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import dagster as dg
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evalsuite.deid.keys import DEMO_KEY
from evalsuite.pipeline import registry
from evalsuite.scoring.render import console_table
from evalsuite.scoring.runlog import PASSK_PNG, SCORECARD_JSON, SCORECARD_MD
from evalsuite.scoring.scorecard import Scorecard
from evalsuite_dagster.definitions import build_defs, lineage_path
from evalsuite_dagster.resources import EvalsuiteHome
from evalsuite_dagster.suite.loading import SUITES, load_suites

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the driver the tests run the jobs with
import dagster_driver as driver  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 110)


def main(suite: str = "ap_exceptions") -> int:
    start = time.perf_counter()
    graphs, invalid = load_suites([SUITES / f"{suite}.yaml"])
    if not graphs:
        console.print(f"[red]cannot build {suite}[/]: {invalid[0].error}")
        return 1
    g, defs = graphs[0], build_defs(graphs)
    _demo_key(g)
    paths = EvalsuiteHome().paths(g.spec)
    with dg.DagsterInstance.get() as instance:
        console.print(f"Building suite [bold]{suite}[/] through the asset graph "
                      f"(Dagster instance {instance.root_directory})")
        with StageProgress(instance, console, prefix=suite):
            out = driver.build(defs, g, instance)
        _print_gates(out, g.spec)
        if not out.success:
            for gate, reason in out.blocked:
                console.print(f"[red]blocked at {gate}[/]: {reason}")
            if out.held_back:
                console.print(f"not run (held back by the gate): {', '.join(out.held_back)}")
            return 1
        console.print(f"release: [bold]{out.release}[/] (version {out.version})")
        derived = instance.get_latest_materialization_event(g.key("derived_tasks")).asset_materialization
        console.print(f"derivation: {derived.metadata['summary'].value} (details: {paths.derivation})")
        _print_acceptance(paths.audit)
        console.print(f"Running the baseline agents: {', '.join(a.name for a in g.spec.agents)}")
        with StageProgress(instance, console, prefix=suite):
            driver.run_trials(defs, g, instance)
            driver.score(defs, g, instance, out.version)
            site = driver.publish(defs, g, instance, out.version)  # the public evidence site
    _print_scorecard(paths.runs / out.version / SCORECARD_JSON)
    console.print(f"scorecard: {paths.runs / out.version / SCORECARD_MD} ({PASSK_PNG} beside it); "
                  f"leaderboard: {paths.runs / 'leaderboard.md'}")
    console.print(f"evidence site (static files; open in a browser): [bold]{site}[/]")
    console.print(f"done in {time.perf_counter() - start:.1f} s. Open the UI with [bold]make ui[/], then "
                  f"http://127.0.0.1:3000{lineage_path(suite)} (the build: asset graph, checks, metadata) and "
                  f"http://127.0.0.1:3000{lineage_path(g.trials_group)} (trials, scorecards, leaderboard, site).")
    return 0


def _demo_key(g) -> None:
    """The published demo key, only for a bundled suite and only when no key is set: a user's own records
    never get it (their build stops at de-identification with one line naming the variable)."""
    if not os.environ.get("EVALSUITE_DEID_KEY") and g.spec_path.is_relative_to(SUITES):
        os.environ["EVALSUITE_DEID_KEY"] = DEMO_KEY
    if os.environ.get("EVALSUITE_DEID_KEY") == DEMO_KEY:
        console.print("[yellow]De-identifying with the published DEMO key; set EVALSUITE_DEID_KEY for real records.[/]")


def _print_gates(out: driver.BuildOutcome, spec) -> None:
    """In build order (the gate registry's), with the stage each guards; a gate that never ran says so."""
    table = Table(title="Gates (asset checks), in build order")
    for col in ("stage", "gate", "result"):
        table.add_column(col)
    for gate in (gate for stage in registry.BUILD for gate in registry.gates_of(stage.name, spec)):
        if gate.name in out.checks:
            passed, severity = out.checks[gate.name]
            table.add_row(gate.stage, gate.name, "[green]passed[/]" if passed else f"[red]failed ({severity})[/]")
        elif not out.success:
            table.add_row(gate.stage, gate.name, "[dim]not reached[/]")
    console.print(table)


def _print_acceptance(audit_file) -> None:
    s = json.loads(audit_file.read_text())["summary"]
    console.print(f"acceptance: {s['tasks']} tasks, {s['accepted']} accepted, {s['quarantined']} quarantined "
                  f"({s['quarantined_fraction']:.1%}, allowed {s['max_quarantined_fraction']:.0%}); "
                  f"{s['trials_run']} trials (reference x{s['reference_trials']}, no-op, adversary); "
                  f"no-op passes {s['noop_passes']}, adversary passes {s['adversary_passes']}")


def _print_scorecard(card_file) -> None:
    console.print(console_table(Scorecard.model_validate_json(card_file.read_text())))


STEP_EVENTS = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE,
               dg.DagsterEventType.STEP_SKIPPED}
POLL = 0.25  # seconds between two reads of the event log


class StageProgress:
    """While inside, every run created on `instance` gets a bar of its steps: the job, the steps done out of the
    plan's and those running now, read from the event log (which the runs write as they go) by a thread."""

    def __init__(self, instance: dg.DagsterInstance, console: Console, prefix: str = ""):
        self.instance, self.prefix = instance, prefix  # prefix: stripped from step keys (the suite's name)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=console, transient=False)
        self.since = datetime.now(timezone.utc)
        self.tasks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="stage-progress", daemon=True)

    def __enter__(self) -> "StageProgress":
        self.progress.start()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.update()  # the last steps, whatever the thread saw
        self.progress.stop()

    def _poll(self) -> None:
        while not self._stop.wait(POLL):
            self.update()

    def update(self) -> None:
        for run in reversed(self.instance.get_runs(dg.RunsFilter(created_after=self.since))):
            started, finished = self._steps(run.run_id)
            total = self._planned(run)
            if run.run_id not in self.tasks:
                self.tasks[run.run_id] = self.progress.add_task(run.job_name, total=total)
            running = [self._name(k) for k in started if k not in finished]
            label = f"{self._name(run.job_name)}: {', '.join(running) if running else run.status.value.lower()}"
            self.progress.update(self.tasks[run.run_id], completed=len(finished), total=total, description=label)

    def _steps(self, run_id: str) -> tuple[list[str], set[str]]:
        records = self.instance.get_records_for_run(run_id, of_type=STEP_EVENTS).records
        started = [r.event_log_entry.step_key for r in records
                   if r.event_log_entry.dagster_event_type == dg.DagsterEventType.STEP_START]
        return started, {r.event_log_entry.step_key for r in records
                         if r.event_log_entry.dagster_event_type != dg.DagsterEventType.STEP_START}

    def _planned(self, run: dg.DagsterRun) -> int | None:
        if not run.execution_plan_snapshot_id:
            return None
        plan = self.instance.get_execution_plan_snapshot(run.execution_plan_snapshot_id)
        return len(plan.step_keys_to_execute) or None

    def _name(self, key: str) -> str:
        return key.removeprefix(f"{self.prefix}__") if self.prefix else key


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
