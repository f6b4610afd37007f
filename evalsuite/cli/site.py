"""`evalsuite site`: the public evidence site, static pages of releases, scorecards and trial replays."""
from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from evalsuite.cli.common import Typer, run_errors

commands = Typer()


@commands.command("site")
def site(sources: list[Path] = typer.Argument(..., metavar="SOURCE",
                                             help="release folders, run folders (`evalsuite run`) or a release's "
                                                  "scorecard folder (runs/<suite>/<version>)"),
         out: Path = typer.Option(..., "--out", metavar="FOLDER",
                                  help="the site folder: new, empty, or an earlier site (replaced whole)"),
         progress: bool = typer.Option(None, help="a progress bar on stderr (default: when stderr is a terminal)")
         ) -> None:
    """The public evidence site: static pages of releases and scorecards and a replay of every published trial.
    Only de-identified values; held-out tasks only as counts; no answer of a scored task (train: only with the spec's
    `site.show_train_answers: true`; a trial that reproduces a solution or the reference answer is shown as a
    summary). A page holding an original personal value, a configured secret or a value of a hidden answer stops
    the build (exit 2) and nothing is written."""
    from evalsuite.site.build import build_site
    from evalsuite.site.sanitize import SiteError

    with run_errors(SiteError):
        s = build_site(sources, out, progress=Console(stderr=True).is_terminal if progress is None else progress)
    typer.echo(f"site: {s.out.resolve() / 'index.html'}  ({s.releases} release page(s), {s.scorecards} scorecard(s), "
               f"{s.traces} trace replay(s); {s.files_scanned} files checked for original values, secrets and answers)")
