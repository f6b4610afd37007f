"""The root `evalsuite` command: the version option and every command group, each from its own module."""
from __future__ import annotations

import typer

from evalsuite.cli import build, domain, local_model, play, releases, review, runs, site, tasks, transfer, users
from evalsuite.cli.common import Typer

app = Typer(help="Build agent test suites from records and score agents on them.")


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"evalsuite {version('evalsuite')}")
        raise typer.Exit()


@app.callback()
def _main(_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                        help="print the installed version and exit")) -> None:
    """Build agent test suites from records and score agents on them."""


for group in (build.commands, runs.commands, play.commands, local_model.commands, site.commands):
    app.add_typer(group)
for name, group in (("task", tasks.task_app), ("trial", tasks.trial_app), ("users", users.users_app),
                    ("review", review.review_app), ("releases", releases.releases_app), ("runs", runs.runs_app),
                    ("domain", domain.domain_app), ("import", transfer.import_app), ("export", transfer.export_app),
                    *((f"tau2-{n}", g) for n, g in transfer.tau2_apps.items()),
                    *((f"agentdojo-{n}", g) for n, g in transfer.agentdojo_apps.items())):
    app.add_typer(group, name=name)
