"""`evalsuite users`: human review of LLM-simulated users, a run's conversations sampled into a sheet and tallied."""
from __future__ import annotations

from pathlib import Path

import typer

from evalsuite.cli.common import RUN_DIR, Typer, build_errors, run_errors

users_app = Typer(help="Human review of LLM-simulated users: sample a run's conversations into a sheet, tally the "
                       "filled sheet.")


@users_app.command("sample")
def users_sample(run_dir: Path = RUN_DIR,
                 out: Path = typer.Option(..., "--out", metavar="FILE", help="the review sheet to write (JSON lines)"),
                 n: int = typer.Option(20, "--n", min=1, metavar="N", help="conversations to sample"),
                 seed: int = typer.Option(0, metavar="N", help="sampling seed: the same seed gives the same sheet"),
                 scripted: bool = typer.Option(False, "--scripted", help="sample scripted users' conversations too")
                 ) -> None:
    """Write a seeded sample of the run's conversations with an LLM user, one per line, each with its transcript
    and an empty `error_class` (none, benign, task-critical) and `note` for the reviewer to fill in."""
    from evalsuite.audit.user_review import sample_run

    with run_errors():
        chosen, of = sample_run(run_dir, out, n, seed, scripted)
    flagged = sum(bool(c.flags) for c in chosen)
    typer.echo(f"{out}: {len(chosen)} of {of} conversation(s), {flagged} with the screen's flags; set each line's "
               "error_class to none, benign or task-critical, and run `evalsuite users tally` on it")


@users_app.command("tally")
def users_tally(sheet: Path = typer.Argument(..., metavar="SHEET",
                                             help="a review sheet written by `evalsuite users sample`")) -> None:
    """Count the error classes of a filled review sheet; the task-critical rate with its Wilson interval."""
    from evalsuite.audit.user_review import ReviewError, read_sheet, tally

    with build_errors(ReviewError):
        t = tally(read_sheet(sheet))
    typer.echo(t.model_dump_json(indent=2))
