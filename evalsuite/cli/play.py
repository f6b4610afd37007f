"""`evalsuite play`: a page on 127.0.0.1 where people attempt a release's tasks; the page itself is trials.play's."""
from __future__ import annotations

from pathlib import Path

import typer

from evalsuite.cli.common import Typer, run_errors

commands = Typer()


@commands.command("play")
def play(
    source: Path = typer.Argument(..., metavar="SOURCE",
                                  help="a release folder (or a suite spec: its release is built first)"),
    out: Path = typer.Option(..., "--out", metavar="FOLDER", help="run folder for the attempts; a run folder of "
                                                                  "this release puts people beside its agents"),
    port: int = typer.Option(8470, min=0, max=65535, metavar="PORT", help="port on 127.0.0.1 (0: any free port)"),
    sample: int = typer.Option(None, "--sample", min=1, metavar="N",
                               help="offer N tasks spread over the scorecard's slices (default: every task people "
                                    "may attempt)"),
    max_open: int = typer.Option(16, "--max-open", min=1, max=256, metavar="N",
                                 help="open attempts the page holds at once (each a reset world and a thread; one "
                                      "per person)"),
) -> None:
    """Serve a page on 127.0.0.1 where staff attempt tasks as the task's role; each attempt is a graded trial."""
    from evalsuite.pipeline.driver import resolve_release
    from evalsuite.releases.runs import play_desk
    from evalsuite.trials.agents.human import PlayLimits
    from evalsuite.trials.play import loopback_socket, play_app, serve, url_of

    with run_errors():
        desk = play_desk(resolve_release(source), out, sample=sample)
    try:
        sock = loopback_socket(port)
    except OSError as exc:
        typer.echo(f"error: port {port} on 127.0.0.1: {exc.strerror}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"evalsuite play: {url_of(sock)}  ({len(desk.tasks)} task(s); attempts go to {out}; Ctrl-C stops)")
    serve(play_app(desk, out, PlayLimits(open_total=max_open)), sock)
