"""`evalsuite review`: reviewers sign goal states and settle disagreements, in the suite's review ledger."""
from __future__ import annotations

from pathlib import Path

import typer

from evalsuite.cli.common import HOME, SUITE_SPEC, Typer, build_errors

review_app = Typer(help="Review goal states: sign-offs and resolutions, kept in the suite's review ledger across "
                        "rebuilds.")
TASK = typer.Option(..., "--task", metavar="TASK", help="task id")


def _desk(spec: Path, home: Path | None):
    from evalsuite.pipeline.review_desk import ReviewDesk

    return ReviewDesk(spec, home)


def _note(desk) -> None:
    """Each ledger line the command skipped, one line each on stderr; where sign-offs do not count, how to make
    them."""
    for line in desk.ledger.skipped:
        typer.echo(f"warning: {line}; skipped", err=True)
    if note := desk.adjudication_note():
        typer.echo(note)


@review_app.command("status")
def review_status(spec: Path = SUITE_SPEC, home: Path = HOME) -> None:
    """Tasks signed by 0, 1 or 2 reviewers on their current goal, disagreements open, and what each task still needs."""
    from evalsuite.audit.reviews import ReviewError

    with build_errors(ReviewError):
        desk = _desk(spec, home)
        lines = desk.status()
    typer.echo("\n".join(lines))
    _note(desk)


@review_app.command("show")
def review_show(spec: Path = SUITE_SPEC, task: str = TASK, home: Path = HOME) -> None:
    """What a reviewer signs: trigger, goal state beside the policy clauses it cites, reference solution, provenance."""
    from evalsuite.audit.reviews import ReviewError

    with build_errors(ReviewError):
        desk = _desk(spec, home)
        text = desk.show(task)
    typer.echo(text, nl=False)
    _note(desk)


@review_app.command("sign")
def review_sign(spec: Path = SUITE_SPEC,
                task: str = typer.Option(None, "--task", metavar="TASK", help="task id (or --all)"),
                every: bool = typer.Option(False, "--all", help="every task of the suite you have not yet signed "
                                                                "on its current goal (those you signed keep yours)"),
                reviewer: str = typer.Option(..., "--reviewer", metavar="NAME", help="your name"),
                decision: str = typer.Option(..., "--decision", metavar="DECISION", help="agree or disagree"),
                note: str = typer.Option("", "--note", metavar="TEXT", help="why, citing the policy text"),
                home: Path = HOME) -> None:
    """Sign a task's current goal state (or, with --all, every task's); signing a task again replaces your earlier
    decision on the same goal."""
    from evalsuite.audit.reviews import ReviewError, review_lines

    with build_errors(ReviewError):
        if (task is None) == (not every):  # exactly one of the two
            raise ReviewError("--task: name one task with --task TASK, or every task with --all")
        desk = _desk(spec, home)
        if every:
            line = desk.sign_all(reviewer, decision, note).summary()
        else:
            state = desk.sign(task, reviewer, decision, note)
            line = f"{task}: {reviewer.strip()} {decision} recorded on goal {state.goal_sha256[:16]}; " \
                + review_lines(state)[-1]
    typer.echo(line)
    _note(desk)


@review_app.command("resolve")
def review_resolve(spec: Path = SUITE_SPEC, task: str = TASK,
                   by: str = typer.Option(..., "--by", metavar="NAME", help="who settled it"),
                   resolution: str = typer.Option(..., "--resolution", metavar="TEXT",
                                                  help="how, citing the policy clause"),
                   home: Path = HOME) -> None:
    """Record how an open disagreement was settled against the policy text; the goal state stands as it is (to
    change a goal, change its derivation or sources and rebuild: the new goal needs fresh sign-offs)."""
    from evalsuite.audit.reviews import ReviewError, review_lines

    with build_errors(ReviewError):
        desk = _desk(spec, home)
        state = desk.resolve(task, by, resolution)
    typer.echo(f"{task}: resolution by {by.strip()} recorded on goal {state.goal_sha256[:16]}; "
               + review_lines(state)[-1])
    _note(desk)


@review_app.command("seal")
def review_seal(spec: Path = SUITE_SPEC, home: Path = HOME) -> None:
    """Chain a review ledger written before ledger lines were chained, once: every line is checked as it stands,
    then each gets its link, so a line added or edited by hand from then on is refused. Read the ledger first:
    sealing vouches for its lines as they are."""
    from evalsuite.audit.reviews import ReviewError

    with build_errors(ReviewError):
        desk = _desk(spec, home)
        sealed = desk.seal()
    typer.echo(f"{desk.ledger.path}: {sealed} line(s) chained; a line added or edited by hand is refused from now on")
