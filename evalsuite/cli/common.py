"""What every command group shares: plain help labels, the home option, and bad input as one line and exit 2."""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand, TyperGroup

console = Console()


class _PlainArgument(TyperArgument):
    """An argument whose help row shows its metavar alone (typer would add a type such as <list[Path]>)."""

    def display_type_rich(self, ctx) -> None:
        return None


class _Plain:
    """Help in plain labels: every argument and option without a metavar gets its name in capitals (a flag gets
    none), and the usage line shows SPEC where typer writes {spec}."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for p in params:
            if p.metavar is None:
                p.metavar = "" if getattr(p, "is_flag", False) else p.name.upper()
            if type(p) is TyperArgument:
                p.__class__ = _PlainArgument  # the same object, drawn without its type
        return params

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for p in self.get_params(ctx):
            if isinstance(p, TyperArgument):
                pieces.append((p.metavar if p.required else f"[{p.metavar}]") + ("..." if p.nargs != 1 else ""))
        return pieces


class PlainCommand(_Plain, TyperCommand):
    """A command whose help shows plain labels."""


class PlainGroup(_Plain, TyperGroup):
    """A command group whose help shows plain labels."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [*super().collect_usage_pieces(ctx), self.subcommand_metavar]


class Typer(typer.Typer):
    """typer.Typer with plain help labels on the group and each of its commands; no arguments shows the help."""

    def __init__(self, *, cls: type[TyperGroup] = PlainGroup, **kwargs):
        super().__init__(cls=cls, no_args_is_help=True, add_completion=False, **kwargs)

    def command(self, name: str | None = None, *, cls: type[TyperCommand] = PlainCommand, **kwargs):
        return super().command(name, cls=cls, **kwargs)


HOME = typer.Option(None, metavar="FOLDER", help="home folder (default: EVALSUITE_HOME, else ./.evalsuite)")
SUITE_SPEC = typer.Argument(..., metavar="SPEC", help="a suite spec (YAML), built at least once")
RUN_DIR = typer.Argument(..., metavar="RUN", help="a run folder written by `evalsuite run`")
RESAMPLES = typer.Option(2000, min=1, metavar="N", help="task-bootstrap resamples for intervals")


def one_of(choices: tuple[str, ...]):
    """An option callback refusing a value outside `choices` (None, the option left out, passes)."""
    def check(value: str | None) -> str | None:
        if value is not None and value not in choices:
            raise typer.BadParameter(f"{value!r}: expected one of {', '.join(choices)}")
        return value
    return check


@contextmanager
def build_errors(*more: type[Exception]) -> Iterator[None]:
    """A blocking gate: a JSON line on stdout, one line on stderr and exit 2; a bad input file (any of the
    loaders' one-line errors, or `more`): one line `error: FILE: field: what` on stderr and exit 2.
    Anything else is a bug and keeps its traceback."""
    from evalsuite.core.domain_refs import UnknownDomainError
    from evalsuite.core.io import YamlModelError
    from evalsuite.deid.rules import DeidError
    from evalsuite.domains.declarative import DomainFileError
    from evalsuite.pipeline.locks import LockError
    from evalsuite.pipeline.stage import GateError
    from evalsuite.releases.release import ReleaseError
    from evalsuite.sourcing.policies import PolicyError
    from evalsuite.sourcing.quality import QualityConfigError
    from evalsuite.sourcing.rights import RightsError
    from evalsuite.sourcing.spec import SpecError
    from evalsuite.tasks.taskfile import TaskFileError

    try:
        yield
    except GateError as exc:
        typer.echo(json.dumps({"blocked": exc.gate, "reason": exc.reason}))
        typer.echo(f"error: gate {exc.gate} blocked: {exc.reason}", err=True)
        raise typer.Exit(2) from exc
    except (SpecError, RightsError, DeidError, PolicyError, QualityConfigError, TaskFileError, YamlModelError,
            ReleaseError, LockError, UnknownDomainError, DomainFileError, *more) as exc:
        # LockError: another build of the suite holds the home
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


@contextmanager
def run_errors(*more: type[Exception]) -> Iterator[None]:
    """Bad input (a spec, release or run folder): one line on stderr and exit 2, as for a build; a harness that
    failed is one line and exit 1; anything else keeps its traceback."""
    from evalsuite.core.identity import EndpointError
    from evalsuite.scoring.runlog import RunFolderError
    from evalsuite.trials.pool import HarnessError
    from evalsuite.trials.tracelog import TraceLogError

    with build_errors(RunFolderError, TraceLogError, EndpointError, *more):
        try:
            yield
        except HarnessError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc


def print_scorecard(card, out: Path) -> None:
    from evalsuite.scoring.render import console_table, warnings
    from evalsuite.scoring.runlog import PASSK_PNG, SCORECARD_JSON

    console.print(console_table(card))
    for line in warnings(card):
        console.print(line, style="bold yellow", markup=False, highlight=False)
    console.print(f"scorecard: {Path(out) / SCORECARD_JSON}  (.md, {PASSK_PNG} beside it)")
