"""`evalsuite releases`: a suite's release history, listed and diffed."""
from __future__ import annotations

from pathlib import Path

import typer

from evalsuite.cli.common import HOME, Typer, build_errors

releases_app = Typer(help="Release history: list a suite's releases, diff two of them.")
SUITE_HELP = "a suite, by its name (as in the home's releases/ folder) or by its spec (YAML)"


@releases_app.command("list")
def releases_list(suite: str = typer.Argument(..., metavar="SUITE", help=SUITE_HELP), home: Path = HOME) -> None:
    """The suite's releases, newest first: created, tasks, quarantined, policy versions, seed hash."""
    from evalsuite.releases.history import releases, suite_releases

    with build_errors():
        rows = releases(*suite_releases(suite, home))
    for r in rows:  # plain lines: a version id must never be cut by a narrow terminal
        typer.echo(f"{r.version}  {r.created} ({r.created_from})  {r.n_tasks} tasks  {r.quarantined} quarantined  "
                   f"policies {', '.join(r.policy_versions)}  seed {r.seed_sha256[:12]}")


@releases_app.command("diff")
def releases_diff(old: str = typer.Argument(..., metavar="OLD", help="a release folder, or a version of --suite"),
                  new: str = typer.Argument(..., metavar="NEW", help="a release folder, or a version of --suite"),
                  suite: str = typer.Option(None, "--suite", metavar="SUITE",
                                            help=SUITE_HELP + ", to name releases by version"),
                  home: Path = HOME, markdown: bool = typer.Option(False, "--markdown", help="print Markdown")) -> None:
    """Tasks added, removed and changed (field by field), quarantine changes, and identity changes from OLD to NEW."""
    from evalsuite.pipeline.stages.suite_release import diff_markdown
    from evalsuite.releases.history import diff_lines, diff_refs

    with build_errors():
        d = diff_refs(old, new, suite, home)
    typer.echo(diff_markdown(d) if markdown else "\n".join(diff_lines(d)))
