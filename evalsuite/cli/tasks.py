"""`evalsuite task` (validate task files, print their schema) and `evalsuite trial replay` (one trial by hand)."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from evalsuite.cli.common import Typer, build_errors

task_app = Typer(help="Task records: validate files, print the schema.")
trial_app = Typer(help="Look at single trials: replay given tool calls on a task.")


@task_app.command("validate")
def task_validate(files: list[Path] = typer.Argument(..., metavar="FILE", help="JSON or JSONL task files")) -> None:
    """Validate JSON/JSONL task files; one line per problem as FILE:TASK_ID:FIELD: message, exit 2 if any.

    A file that cannot be read at all is one line FILE:LINE: message; a task id that repeats within a suite,
    across the files given too, is a problem."""
    from evalsuite.audit.validation import problem_lines

    lines = problem_lines(files)
    for line in lines:
        typer.echo(line)
    if lines:
        raise typer.Exit(2)
    typer.echo(f"{len(files)} file(s) valid")


TASK_PAGE = ("Task records and goal states", "Every field of a task record (one line of a release's `tasks.jsonl`) "
             "and of its goal state, generated from the pydantic models (`evalsuite task schema --markdown`). What "
             "a domain's derivation writes and the grader checks: [Domains](../domains/index.md).")


@task_app.command("schema")
def task_schema(markdown: bool = typer.Option(False, "--markdown", help="the reference page instead")) -> None:
    """Print the JSON Schema of a task record; --markdown prints the reference page made from it
    (docs/reference/task-records.md)."""
    from evalsuite.core.records import TaskRecord

    if markdown:
        from evalsuite.core.schema_docs import schema_markdown

        typer.echo(schema_markdown(TaskRecord.model_json_schema(), *TASK_PAGE), nl=False)
    else:
        typer.echo(json.dumps(TaskRecord.model_json_schema(), indent=2))


@trial_app.command("replay")
def trial_replay(
    source: Path = typer.Argument(..., metavar="SOURCE", help="a release folder or a suite spec (.yaml, built first)"),
    task: str = typer.Option(..., "--task", metavar="TASK", help="task id"),
    calls: Path = typer.Option(..., "--calls", metavar="FILE",
                               help="a JSON list of calls, each an object with `tool` and `arguments`"),
    faults: Path = typer.Option(None, "--faults", metavar="FILE",
                                help="a JSON fault plan: name, faults (each with tool, call, kind), deadline_seconds"),
    message: str = typer.Option("", "--message", metavar="TEXT", help="the final message to grade with"),
) -> None:
    """Run the calls on a freshly reset world as the task's role; print one JSON object: each call's output or
    error, the verdict with every check, and the end-state hash. Any domain."""
    from evalsuite.pipeline.driver import replay_calls
    from evalsuite.trials.replay import ReplayError, to_json

    with build_errors(ReplayError):
        report = replay_calls(source, task, calls, faults, message)
    typer.echo(to_json(report))
