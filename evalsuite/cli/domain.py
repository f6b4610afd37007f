"""`evalsuite domain`: check a declarative domain file, print its format's JSON Schema or reference page, and the
installed domains."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from evalsuite.cli.common import Typer, build_errors

domain_app = Typer(help="Domains: check a declarative domain file, print its format's schema, list those installed.")

DOMAIN_PAGE = ("The declarative domain file", "Every key of a declarative domain file (`domain: FILE.yaml` in a "
               "suite spec), generated from its JSON Schema (`evalsuite domain schema --markdown`). How to write "
               "one: [Declarative domains](../domains/declarative.md).")


@domain_app.command("schema")
def domain_schema(markdown: bool = typer.Option(False, "--markdown", help="the reference page instead")) -> None:
    """Print the JSON Schema of a declarative domain file (docs/domains/declarative.md), for an editor or a
    validator; --markdown prints the reference page made from it (docs/reference/declarative-domain.md)."""
    from evalsuite.domains.declarative import json_schema

    if markdown:
        from evalsuite.core.schema_docs import schema_markdown

        typer.echo(schema_markdown(json_schema(), *DOMAIN_PAGE), nl=False)
    else:
        typer.echo(json.dumps(json_schema(), indent=2, sort_keys=True))


@domain_app.command("check")
def domain_check(spec: Path = typer.Argument(..., metavar="SPEC", help="a suite spec naming the domain")) -> None:
    """Load the spec's domain as a build would (a declarative file bound to the spec's sources): its tables, tools
    and roles, or one line naming the file and key of the first problem, exit 2."""
    from evalsuite.pipeline.preflight import domain_for
    from evalsuite.sourcing.spec import load_spec

    with build_errors():
        package = domain_for(load_spec(spec))
    d = package.domain
    tasks = "derived from cases" if package.derive else "generated" if package.generate else "given by the spec"
    typer.echo(f"{d.name} {d.version}: {len(d.tables)} table(s), {len(d.tools)} tool(s) "
               f"({len(d.write_tools())} write), role(s) {', '.join(d.roles)}; tasks {tasks}")


@domain_app.command("list")
def domain_list() -> None:
    """The installed domains (entry points in the group evalsuite.domains) and where each is found."""
    from evalsuite.core.domain_refs import installed, locate

    for name in installed():
        typer.echo(f"{name}\t{locate(name).target}")
