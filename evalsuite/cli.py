"""The `evalsuite` command line."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from evalsuite.records import TaskRecord
from evalsuite.validation import TaskFileError, validate_file

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Build agent test suites from records and score agents on them.")
task_app = typer.Typer(no_args_is_help=True, help="Task records: validate files, print the schema.")
app.add_typer(task_app, name="task")
console = Console()


@task_app.command("validate")
def task_validate(files: list[Path]) -> None:
    """Validate JSON/JSONL task files; one line per problem as FILE:TASK_ID:FIELD: message."""
    problems = []
    for f in files:
        try:
            problems.extend(validate_file(f))
        except TaskFileError as exc:
            typer.echo(str(exc))
            problems.append(exc)
    for p in problems:
        if not isinstance(p, TaskFileError):
            typer.echo(str(p))
    if problems:
        raise typer.Exit(1)
    typer.echo(f"{len(files)} file(s) valid")


@task_app.command("schema")
def task_schema() -> None:
    """Print the JSON Schema of a task record."""
    typer.echo(json.dumps(TaskRecord.model_json_schema(), indent=2))


@app.command("example")
def example(workdir: Path = typer.Option(None, help="where to build the world (default: a temporary folder)")) -> None:
    """Build the AP-exceptions example and run the reference, no-op and adversary agents on every task."""
    from evalsuite.agents import make_agent
    from evalsuite.examples import ap_example
    from evalsuite.trial import run_trial

    workdir = workdir or Path(tempfile.mkdtemp(prefix="evalsuite-"))
    ex = ap_example(workdir)
    table = Table(title=f"AP exceptions: {len(ex.tasks)} tasks (skipped: {ex.skipped})")
    for col in ("agent", "passed", "failed", "infra errors", "expected"):
        table.add_column(col)
    for name, expect in (("reference", "all pass"), ("noop", "all fail"), ("adversary", "all fail")):
        results = [run_trial(ex.world, t, make_agent(name)) for t in ex.tasks]
        table.add_row(name, str(sum(r.passed for r in results)), str(sum(r.outcome == "fail" for r in results)),
                      str(sum(r.outcome == "infra_error" for r in results)), expect)
    console.print(table)
    console.print(f"world: {ex.world.path}  seed sha256: {ex.world.seed_sha256}")


if __name__ == "__main__":
    app()
