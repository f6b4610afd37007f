"""`make demo`: the bundled AP-exceptions suite through the Dagster asset graph, then the baseline agents.

Runs on the embedded instance in DAGSTER_HOME (SQLite; the Makefile puts it
under the home folder and copies the top-level dagster.yaml there), so
everything it did is in the UI afterwards: `make ui`.
"""
import json
import os
import sys
import time

import dagster as dg
from rich.console import Console
from rich.table import Table

from assets import driver
from assets.definitions import GRAPHS, INVALID, SUITES, defs
from assets.resources import EvalsuiteHome
from assets.site import publish as publish_site
from evalsuite.deid.keys import DEMO_KEY
from evalsuite.pipeline import registry
from evalsuite.scoring.render import console_table
from evalsuite.scoring.runlog import PASSK_PNG, SCORECARD_JSON, SCORECARD_MD
from evalsuite.scoring.scorecard import Scorecard

LOCATION = "assets.definitions"  # the code location workspace.yaml loads: group pages live under its name
console = Console(width=None if sys.stdout.isatty() else 110)


def main(suite: str = "ap_exceptions") -> int:
    start = time.perf_counter()
    g = next((g for g in GRAPHS if g.spec.name == suite), None)
    if g is None:
        errors = [bad.error for bad in INVALID] or [f"no suite spec named {suite} in suites/"]
        console.print(f"[red]cannot build {suite}[/]: " + "; ".join(errors))
        return 1
    _demo_key(g)
    paths = EvalsuiteHome().paths(g.spec)
    with dg.DagsterInstance.get() as instance:
        console.print(f"Building suite [bold]{suite}[/] through the asset graph (Dagster instance {instance.root_directory})")
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
        _print_acceptance(paths.acceptance / "audit.json")
        console.print(f"Running the baseline agents: {', '.join(a.name for a in g.spec.agents)}")
        driver.run_trials(defs, g, instance)
        driver.score(defs, g, instance, out.version)
        site = publish_site(defs, g, instance, out.version)  # the public evidence site (assets/site.py)
    _print_scorecard(paths.runs / out.version / SCORECARD_JSON)
    console.print(f"scorecard: {paths.runs / out.version / SCORECARD_MD} ({PASSK_PNG} beside it); "
                  f"leaderboard: {paths.runs / 'leaderboard.md'}")
    console.print(f"evidence site (static files; open in a browser): [bold]{site}[/]")
    console.print(f"done in {time.perf_counter() - start:.1f} s. Open the UI with [bold]make ui[/], then "
                  f"http://127.0.0.1:3000{lineage_path(suite)} (the build: asset graph, checks, metadata) and "
                  f"http://127.0.0.1:3000{lineage_path(g.trials_group)} (trials, scorecards, leaderboard, site).")
    return 0


def lineage_path(suite: str) -> str:
    """The suite's own graph; /asset-groups/<suite>/lineage without the location opens the global lineage."""
    return f"/locations/{LOCATION}/asset-groups/{suite}/lineage"


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


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
