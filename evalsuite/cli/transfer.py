"""`evalsuite import`, `export` and the importers' round trips (`tau2-retail`, `tau2-airline`, `tau2-telecom`,
`agentdojo-banking`, `agentdojo-slack`, `agentdojo-travel` and `agentdojo-workspace export-state`)."""
from __future__ import annotations

from pathlib import Path

import typer

from evalsuite.cli.common import PlainGroup, Typer, build_errors

import_app = Typer(help="Import public benchmarks as evalsuite sources and suites.")
tau2_apps = {name: Typer(help=f"τ²-bench {name} round trips.") for name in ("retail", "airline")}
agentdojo_apps = {name: Typer(help=f"AgentDojo {name} round trips.")
                  for name in ("banking", "slack", "travel", "workspace")}
IMPORTED = typer.Argument(..., metavar="IMPORTED", help="an imported folder")
IMPORT_OUT = typer.Option(..., "--out", metavar="FOLDER",
                          help="folder for the source tables, rights, policy, tasks and suite.yaml")


class _ExportGroup(PlainGroup):
    """`evalsuite export RELEASE --purpose …` (no subcommand named) is `evalsuite export tasks RELEASE --purpose …`,
    so the task export keeps its command line beside `evalsuite export inspect`."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args.insert(0, "tasks")
        return super().resolve_command(ctx, args)


export_app = Typer(cls=_ExportGroup, help="A release's tasks for a purpose (JSONL), or as a task other evaluation "
                                          "tools run.")
RELEASE = typer.Argument(..., metavar="RELEASE", help="a release folder")


def _tau2_commands(name: str) -> None:
    """`evalsuite import tau2-<name> FOLDER` and `evalsuite tau2-<name> export-state` for one τ²-bench domain."""

    @import_app.command(f"tau2-{name}", help=f"Import τ²-bench {name}: tables, rights manifest (MIT), versioned "
                                              "policy, tasks with replay-derived goals.")
    def import_tau2(src: Path = typer.Argument(..., metavar="FOLDER",
                                               help="folder with db.json, tasks.json, split_tasks.json, policy.md"),
                    out: Path = IMPORT_OUT) -> None:
        from evalsuite.importers.tau2.importer import Tau2InputError, import_tau2
        from evalsuite.importers.tau2.sources import SOURCES

        with build_errors(Tau2InputError):
            report = import_tau2(SOURCES[name], src, out)
        typer.echo(f"{report.tasks} tasks imported to {out}; {len(report.gold_replay_errors)} gold action(s) raised, "
                   f"the import's audit quarantines {len(report.acceptance.quarantined)} (listed in "
                   f"{out / 'import_report.json'}); suite spec: {out / 'suite.yaml'}")

    @tau2_apps[name].command("export-state")
    def tau2_export_state(out_dir: Path = IMPORTED,
                          task: str = typer.Option(..., "--task", metavar="TASK",
                                                   help="task id whose gold actions to replay"),
                          dest: Path = typer.Option(..., "--out", metavar="FILE",
                                                    help="JSON file in the original nested db.json form")) -> None:
        """Write the world after replaying a task's gold actions, as nested JSON, and print its tau2 hash."""
        from evalsuite.importers.tau2.importer import Tau2InputError, export_state
        from evalsuite.importers.tau2.sources import SOURCES

        with build_errors(Tau2InputError):
            typer.echo(export_state(SOURCES[name], out_dir, task, dest))


for _name in tau2_apps:
    _tau2_commands(_name)


@import_app.command("tau2-telecom")
def import_telecom(src: Path = typer.Argument(..., metavar="FOLDER",
                                              help="folder with db.toml, user_db.toml, tasks.json, split_tasks.json, "
                                                   "the policies and LICENSE"),
                   out: Path = IMPORT_OUT,
                   full: bool = typer.Option(False, "--full", help="also write the whole composed set (the "
                                             "original's --task-set full: tasks_full.jsonl, suite_full.yaml), every "
                                             "task's gold replayed and audited; minutes, and a 156 MB task file")
                   ) -> None:
    """Import τ²-bench telecom (dual control): both worlds, the policies and their variants, the task set composed
    and verified as the original's, written as the 114-task sample (suite.yaml) and with --full whole
    (suite_full.yaml), goals derived by replaying the gold on both worlds."""
    from evalsuite.importers.tau2.importer import Tau2InputError
    from evalsuite.importers.tau2.telecom import import_telecom as run

    with build_errors(Tau2InputError):
        r = run(src, out, whole=full)
    same = "equals" if r.full_equals_source else f"differs from ({len(r.differing_tasks)} tasks)"
    whole = (f", {out / 'suite_full.yaml'} (all {r.full}, the audit quarantines "
             f"{len(r.full_acceptance.quarantined)})" if r.full_acceptance else "")
    typer.echo(f"{r.full} tasks composed ({same} tasks.json), {len(r.verification_failures)} failing verification; "
               f"{r.sampled} sampled ({'the original base split' if r.sample_equals_base else 'NOT the base split'}) "
               f"into {out}; suite specs: {out / 'suite.yaml'}, {out / 'suite_workflow.yaml'} (the sample, the "
               f"import's audit quarantines {len(r.acceptance.quarantined)}){whole}")


def _agentdojo_commands(name: str) -> None:
    """`evalsuite import agentdojo-<name> [FOLDER]` and `evalsuite agentdojo-<name> export-state` for one suite."""

    @import_app.command(f"agentdojo-{name}", help=f"Import AgentDojo {name}: tables, rights manifest (MIT), authored "
                                                   "policy, its tasks with replay-derived goals, each user task "
                                                   "under each injection task.")
    def import_agentdojo(src: Path | None = typer.Argument(
                             None, metavar="[FOLDER]", help="folder with environment.yaml (and the files it "
                                                            "includes), injection_vectors.yaml, LICENSE (default: "
                                                            "the files of the agentdojo==0.1.35 package that "
                                                            "`make peers` installs)"),
                         out: Path = IMPORT_OUT) -> None:
        from evalsuite.importers.agentdojo.importer import AgentDojoInputError, import_agentdojo_suite

        with build_errors(AgentDojoInputError):
            report = import_agentdojo_suite(name, src, out)
        passing = sorted(t for t, ok in report.peer_check_on_noop.items() if ok)
        typer.echo(f"{report.tasks} tasks and {report.attack_pairs} attack pairs imported to {out}; the peer's own "
                   f"check passes a no-op on {len(passing)} ({', '.join(passing) or 'none'}; see "
                   f"{out / 'import_report.json'}); suite spec: {out / 'suite.yaml'}")

    @agentdojo_apps[name].command("export-state")
    def agentdojo_export_state(out_dir: Path = IMPORTED,
                               task: str | None = typer.Option(None, "--task", metavar="TASK",
                                                               help="task id whose reference solution to replay"),
                               initial: bool = typer.Option(False, "--initial",
                                                            help="the environment before any task instead"),
                               dest: Path = typer.Option(..., "--out", metavar="FILE",
                                                         help="JSON file: the environment as the peer dumps it")
                               ) -> None:
        """Write the environment after a task's reference solution (or, with --initial, before any task) in the
        peer's JSON form."""
        from evalsuite.importers.agentdojo.importer import SUITES, AgentDojoInputError, export_state

        with build_errors(AgentDojoInputError):
            if initial == (task is not None):
                raise AgentDojoInputError("export-state: give exactly one of --task TASK and --initial")
            export_state(out_dir, task, dest, SUITES[name])
        typer.echo(str(dest))


for _name in agentdojo_apps:
    _agentdojo_commands(_name)


@export_app.command("tasks")
def export(release_dir: Path = RELEASE,
           purpose: str = typer.Option(..., metavar="PURPOSE", help="evaluation, review, training or prompt_tuning"),
           out: Path = typer.Option(..., "--out", metavar="FILE", help="JSONL file to write")) -> None:
    """Export a release's tasks for a purpose; training and prompt tuning never receive held-out tasks."""
    from evalsuite.releases.release import export_release

    with build_errors():
        tasks = export_release(release_dir, purpose, out)
    typer.echo(f"{len(tasks)} task(s) written to {out}")


@export_app.command("inspect")
def export_inspect(release: Path = RELEASE,
                   out: Path = typer.Option(..., "--out", metavar="FOLDER", help="the folder to write task.py into")
                   ) -> None:
    """An Inspect AI task of the release: samples from its tasks, the role's tools on a freshly reset world per
    sample, our grader as the scorer, its trials as epochs. Run it with `inspect eval DIR/task.py --model ...`."""
    try:
        from evalsuite.exporters.inspect_export import export_inspect as write_task
    except ModuleNotFoundError as exc:  # an optional extra: say which package is missing, in one line
        typer.echo(f"error: {exc.name} is not installed (pip install 'evalsuite[dev]' or inspect-ai)", err=True)
        raise typer.Exit(2) from exc
    with build_errors():
        x = write_task(release, out)
    typer.echo(f"{x.task_file}: task {x.task_name}, {x.samples} sample(s), {x.left_out} left out (held-out or "
               f"conversational), {x.epochs} epoch(s)\nrun: inspect eval {x.task_file}@{x.task_name} "
               "--model PROVIDER/MODEL (mockllm/model runs it without a provider)")
