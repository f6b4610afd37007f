"""`evalsuite new`, `build`, `audit`, `gates` and `example`: suites started, built, audited and explained."""
from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from evalsuite.cli.common import HOME, Typer, build_errors, console

commands = Typer()


@commands.command("new")
def new_cmd(exports: Path = typer.Argument(..., metavar="EXPORTS", help="a folder of CSV or Parquet exports"),
            out: Path = typer.Option(..., "--out", metavar="FOLDER", help="the project folder (new or empty)"),
            name: str = typer.Option(..., "--name", help="the suite's name (lower-case letters, digits, _)")) -> None:
    """Start a project from a folder of exports: the suite spec, rights, de-identification (the personal columns
    the scan finds) and quality files (the keys it infers), a declarative domain with one read tool per table, a
    policy skeleton and a README of what is left to fill in. It loads as it stands; a build stops at the first gap
    with one line."""
    from evalsuite.pipeline.starter import StarterError, new_project

    with build_errors(StarterError):
        personal = new_project(exports, out, name)
    typer.echo(f"{out / 'suite.yaml'}: starter project written; personal columns found: "
               f"{', '.join(personal) or 'none'}; what is left: {out / 'README.md'}")


@commands.command("build")
def build_cmd(spec: Path = typer.Argument(..., metavar="SPEC", help="a suite spec (YAML)"), home: Path = HOME,
              progress: bool = typer.Option(None, "--progress/--no-progress", show_default=False,
                                            help="a bar over the stages and what derivation kept, on stderr "
                                                 "(default: when stderr is a terminal)")) -> None:
    """Build a suite spec into a release; one JSON line. A blocking gate exits 2 naming the gate and its reason."""
    from evalsuite.pipeline.driver import build

    with build_errors(), _stage_progress(progress, spec) as on_stage:
        built = build(spec, home, on_stage=on_stage)
    typer.echo(built.model_dump_json())


@contextmanager
def _stage_progress(enabled: bool | None, spec: Path) -> Iterator[Callable | None]:
    """A bar over the build stages on stderr (stdout keeps the one JSON line); once tasks are derived, how many
    cases became tasks and why the others did not is printed above it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evalsuite.pipeline.registry import build_stages
    from evalsuite.sourcing.spec import load_spec

    err = Console(stderr=True)
    if not (err.is_terminal if enabled is None else enabled):
        yield None
        return
    names = [s.name for s in build_stages(load_spec(spec))]
    columns = (TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err) as bar:
        task = bar.add_task(names[0], total=len(names))

        def on_stage(name: str, out) -> None:
            if name == "derived_tasks":
                bar.console.print(f"{name}: {out.metadata['summary']}", markup=False, highlight=False)
            following = names[names.index(name) + 1:]
            bar.update(task, advance=1, description=following[0] if following else "built")

        yield on_stage


@commands.command("audit")
def audit(spec: Path = typer.Argument(..., metavar="SPEC", help="a suite spec (YAML)"),
          out: Path = typer.Option(..., "--out", metavar="FOLDER", help="folder for audit.json and audit.md"),
          probes: bool = typer.Option(True, "--probes/--no-probes",
                                      help="replay each reference with one write argument nudged (grader probes)")
          ) -> None:
    """Run the acceptance checks on any suite: solvable, stable, not trivially passable, resettable; and probe every
    grader with near-miss trajectories (an imported suite's peer grader too)."""
    from evalsuite.importers.peers import peer_grader
    from evalsuite.pipeline.driver import audit as audit_suite

    with build_errors():
        report = audit_suite(spec, out, probes=probes, peer_of=peer_grader)
    s = report.summary
    typer.echo(f"{s['tasks']} tasks: {s['accepted']} accepted, {s['quarantined']} quarantined, "
               f"{s['gold_replay_errors']} reference call(s) raised, no-op passes {s['noop_passes']}; "
               f"written to {out / 'audit.json'} and {out / 'audit.md'}")


@commands.command("gates")
def gates() -> None:
    """List every gate: the stage it guards and what it checks (the one registry the build and Dagster use)."""
    from evalsuite.pipeline.registry import GATES

    table = Table(title="Gates (each blocks every release when it fails)")
    for col in ("gate", "stage", "what it checks"):
        table.add_column(col, overflow="fold")
    for g in GATES.values():
        table.add_row(g.name, g.stage, g.description)
    console.print(table)


@commands.command("example")
def example(workdir: Path = typer.Option(None, metavar="FOLDER",
                                         help="where to build the world (default: a temporary folder)")) -> None:
    """Build the AP-exceptions example and run the reference, no-op and adversary agents on every task."""
    from evalsuite.pipeline.driver import example as run_example

    ex = run_example(workdir or Path(tempfile.mkdtemp(prefix="evalsuite-")))
    table = Table(title=f"AP exceptions: {ex.tasks} tasks (skipped: {ex.skipped})")
    for col in ("agent", "passed", "failed", "infra errors", "expected"):
        table.add_column(col)
    for r in ex.rows:
        table.add_row(r.agent, str(r.passed), str(r.failed), str(r.infra_errors), r.expected)
    console.print(table)
    console.print(f"world: {ex.world}  seed sha256: {ex.seed_sha256}")
