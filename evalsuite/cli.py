"""The `evalsuite` command line."""
from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from evalsuite.audit.validation import validate_file
from evalsuite.core.records import TaskRecord
from evalsuite.tasks.taskfile import TaskFileError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Build agent test suites from records and score agents on them.")
task_app = typer.Typer(no_args_is_help=True, help="Task records: validate files, print the schema.")
app.add_typer(task_app, name="task")
console = Console()


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"evalsuite {version('evalsuite')}")
        raise typer.Exit()


@app.callback()
def _main(_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                        help="print the installed version and exit")) -> None:
    """Build agent test suites from records and score agents on them."""


@task_app.command("validate")
def task_validate(files: list[Path]) -> None:
    """Validate JSON/JSONL task files; one line per problem as FILE:TASK_ID:FIELD: message, exit 2 if any.

    A file that cannot be read at all is one line FILE:LINE: message; a task id that repeats within a suite,
    across the files given too, is a problem."""
    lines: list[str] = []
    seen: dict = {}
    for f in files:
        try:
            lines.extend(str(p) for p in validate_file(f, seen))
        except TaskFileError as exc:
            lines.append(str(exc))
    for line in lines:
        typer.echo(line)
    if lines:
        raise typer.Exit(2)
    typer.echo(f"{len(files)} file(s) valid")


@task_app.command("schema")
def task_schema() -> None:
    """Print the JSON Schema of a task record."""
    typer.echo(json.dumps(TaskRecord.model_json_schema(), indent=2))


@app.command("example")
def example(workdir: Path = typer.Option(None, help="where to build the world (default: a temporary folder)")) -> None:
    """Build the AP-exceptions example and run the reference, no-op and adversary agents on every task."""
    from evalsuite.domains.ap_exceptions.example import ap_example
    from evalsuite.trials.agents.factory import make_agent
    from evalsuite.trials.trial import run_trial

    workdir = workdir or Path(tempfile.mkdtemp(prefix="evalsuite-"))
    ex = ap_example(workdir)
    table = Table(title=f"AP exceptions: {len(ex.tasks)} tasks (skipped: {ex.skipped})")
    for col in ("agent", "passed", "failed", "infra errors", "expected"):
        table.add_column(col)
    for name, expect in (("reference", "all pass"), ("noop", "all fail"), ("adversary", "all fail")):
        results = [run_trial(ex.world, t, make_agent(name)) for t in ex.tasks]
        table.add_row(name, str(sum(r.passed for r in results)), str(sum(r.outcome == "fail" for r in results)),
                      str(sum(r.outcome == "infra_error" for r in results)), expect)
    console.print(table)
    console.print(f"world: {ex.world.path}  seed sha256: {ex.world.seed_sha256}")


@app.command("run")
def run(
    source: Path = typer.Argument(..., help="a release folder (with manifest.json) or a suite spec (.yaml)"),
    agent: list[str] = typer.Option(..., "--agent", help="agent to score: reference, noop, adversary, openai:MODEL or "
                                                     "mcp:COMMAND; repeat for several"),
    trials: int = typer.Option(None, min=1, help="trials per task (default: each task's trial protocol)"),
    out: Path = typer.Option(None, help="run folder (default: runs/<suite>/<version>); rerunning resumes it"),
    workers: int = typer.Option(None, min=1, help="worker processes (default: all cores; 1 runs in this process)"),
    seed: int = typer.Option(0, help="run seed; per-trial seeds derive from it"),
    resamples: int = typer.Option(2000, min=1, help="task-bootstrap resamples for intervals"),
    progress: bool = typer.Option(True, help="show a progress bar on stderr"),
    mode: str = typer.Option(None, help="trial mode of a conversational suite: default, no_user or oracle_plan "
                                        "(another task set; default run folder runs/<suite>/<version>-<mode>)"),
) -> None:
    """Score agents on a release: traces, summary and scorecard go to the run folder; a killed run resumes."""
    from evalsuite.pipeline.driver import resolve_release
    from evalsuite.releases.runs import run_release
    from evalsuite.scoring.modes import MODES
    from evalsuite.trials.agents.factory import make_agent

    if mode is not None and mode not in MODES:
        raise typer.BadParameter(f"{mode!r}: expected one of {', '.join(MODES)}", param_hint="--mode")
    for name in agent:  # before any build or trial: a typo should cost nothing
        try:
            make_agent(name)
        except KeyError as exc:
            raise typer.BadParameter(exc.args[0], param_hint="--agent") from exc
        except ValueError as exc:  # openai: without a model, mcp: without a command
            raise typer.BadParameter(str(exc), param_hint="--agent") from exc
    with _run_errors():
        release = resolve_release(source)
        folder = release.manifest.version + (f"-{mode}" if mode else "")
        out = out or Path("runs") / release.manifest.suite / folder
        card = run_release(release, agent, out, trials=trials, workers=workers, seed=seed, progress=progress,
                           resamples=resamples, mode=mode)
    _print_scorecard(card, out)


@app.command("modes")
def modes(run_dirs: list[Path] = typer.Argument(..., help="run folders of one agent on the same tasks, one per mode"),
          out: Path = typer.Option(..., "--out", help="folder for modes.md and modes.png"),
          resamples: int = typer.Option(2000, min=1, help="task-bootstrap resamples for intervals")) -> None:
    """Put an agent's runs in the three trial modes side by side: pass^k per mode, pass^k by required actions."""
    from evalsuite.scoring.modes import compare_modes, plot, to_markdown
    from evalsuite.scoring.runlog import RunFolderError, read_records, read_run_tasks

    with _run_errors():
        runs, tasks = {}, None
        for folder in run_dirs:
            tasks = read_run_tasks(folder)
            found = {t.trial_protocol.mode or "default" for t in tasks}
            if len(found) != 1 or next(iter(found)) in runs:
                raise RunFolderError(f"{folder}: one run folder per mode, each in one mode (found {sorted(found)})")
            runs[next(iter(found))] = read_records(folder)
        try:
            cmp = compare_modes(runs, tasks, resamples=resamples)
        except ValueError as exc:  # runs of other tasks, agents or modes: the folders given do not fit together
            raise RunFolderError(f"{', '.join(map(str, run_dirs))}: {exc}") from exc
        out.mkdir(parents=True, exist_ok=True)
        (out / "modes.md").write_text(to_markdown(cmp))
        plot(cmp, out / "modes.png")
    typer.echo(to_markdown(cmp))
    typer.echo(f"written to {out / 'modes.md'} and {out / 'modes.png'}")


@app.command("score")
def score(run_dir: Path = typer.Argument(..., help="a run folder written by `evalsuite run`")) -> None:
    """Recompute the scorecard of a run folder from its stored traces; nothing is rerun."""
    from evalsuite.releases.runs import rescore

    with _run_errors():
        card = rescore(run_dir)
    _print_scorecard(card, run_dir)


@app.command("compare")
def compare(
    run_a: Path = typer.Argument(..., help="a run folder written by `evalsuite run`"),
    run_b: Path = typer.Argument(None, help="a second run folder of the same release (default: compare within RUN_A)"),
    agent: list[str] = typer.Option([], "--agent", help="agent A then agent B (A from RUN_A, B from RUN_B if given); "
                                                        "may be left out when each run has one agent, or RUN_A two"),
    k: int = typer.Option(None, min=1, help="k of pass^k (default: the fewest trials of any shared task)"),
    resamples: int = typer.Option(2000, min=1, help="paired task-bootstrap resamples"),
    seed: int = typer.Option(0, help="bootstrap seed: the same seed gives the same interval"),
) -> None:
    """Paired comparison of two agents on the tasks both ran: A - B with a paired task-bootstrap interval and a
    verdict (A better, B better, or not distinguishable with the tasks that would be needed)."""
    from evalsuite.scoring import compare as cmp
    from evalsuite.scoring.runlog import read_records

    with _run_errors():
        records_a = read_records(run_a)
        records_b = read_records(run_b) if run_b else None
        try:
            a, b = cmp.pick_agents(records_a, records_b, agent)
            result = cmp.compare_records(records_a, a, records_b or records_a, b, k=k, resamples=resamples, seed=seed)
        except ValueError as exc:  # CompareError, or a k beyond the trials of a task
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
    console.print(cmp.console_table(result))
    console.print(f"paired task bootstrap, {resamples} resamples, seed {seed}; tasks needed: {result.needed_method}")


users_app = typer.Typer(no_args_is_help=True, help="Human review of LLM-simulated users: sample a run's "
                                                  "conversations into a sheet, tally the filled sheet.")
app.add_typer(users_app, name="users")


@users_app.command("sample")
def users_sample(run_dir: Path = typer.Argument(..., help="a run folder written by `evalsuite run`"),
                 out: Path = typer.Option(..., "--out", help="the review sheet to write (JSON lines)"),
                 n: int = typer.Option(20, "--n", min=1, help="conversations to sample"),
                 seed: int = typer.Option(0, help="sampling seed: the same seed gives the same sheet"),
                 scripted: bool = typer.Option(False, "--scripted", help="sample scripted users' conversations too")
                 ) -> None:
    """Write a seeded sample of the run's conversations with an LLM user, one per line, each with its transcript
    and an empty `error_class` (none, benign, task-critical) and `note` for the reviewer to fill in."""
    from evalsuite.audit.user_review import conversations, sample_sheet
    from evalsuite.scoring.runlog import RunFolderError, read_records, read_run_tasks

    with _run_errors():
        items = conversations(read_records(run_dir), read_run_tasks(run_dir), llm_only=not scripted)
        if not items:
            raise RunFolderError(f"{run_dir}: no conversation with an LLM user to review (--scripted for all)")
        chosen = sample_sheet(items, n, seed, out)
    typer.echo(f"{out}: {len(chosen)} of {len(items)} conversation(s); set each line's error_class to none, "
               "benign or task-critical, and run `evalsuite users tally` on it")


@users_app.command("tally")
def users_tally(sheet: Path = typer.Argument(..., help="a review sheet written by `evalsuite users sample`")) -> None:
    """Count the error classes of a filled review sheet; the task-critical rate with its Wilson interval."""
    from evalsuite.audit.user_review import ReviewError, read_sheet, tally

    with _build_errors(ReviewError):
        t = tally(read_sheet(sheet))
    typer.echo(t.model_dump_json(indent=2))


@app.command("play")
def play(
    source: Path = typer.Argument(..., help="a release folder (or a suite spec: its release is built first)"),
    out: Path = typer.Option(..., "--out", help="run folder for the attempts; a run folder of this release puts "
                                               "people beside its agents"),
    port: int = typer.Option(8470, min=0, max=65535, help="port on 127.0.0.1 (0: any free port)"),
    sample: int = typer.Option(None, "--sample", min=1, help="offer N tasks spread over the scorecard's slices "
                                                             "(default: every task people may attempt)"),
) -> None:
    """Serve a page on 127.0.0.1 where staff attempt tasks as the task's role; each attempt is a graded trial."""
    from evalsuite.pipeline.driver import resolve_release
    from evalsuite.releases.runs import play_desk
    from evalsuite.trials.play import loopback_socket, play_app, serve, url_of

    with _run_errors():
        desk = play_desk(resolve_release(source), out, sample=sample)
    try:
        sock = loopback_socket(port)
    except OSError as exc:
        typer.echo(f"error: port {port} on 127.0.0.1: {exc.strerror}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"evalsuite play: {url_of(sock)}  ({len(desk.tasks)} task(s); attempts go to {out}; Ctrl-C stops)")
    serve(play_app(desk, out), sock)


@contextmanager
def _run_errors() -> Iterator[None]:
    """Bad input (a spec, release or run folder): one line on stderr and exit 2, as for a build; a harness that
    failed is one line and exit 1; anything else keeps its traceback."""
    from evalsuite.scoring.runlog import RunFolderError
    from evalsuite.trials.pool import HarnessError
    from evalsuite.trials.tracelog import TraceLogError

    with _build_errors(RunFolderError, TraceLogError):
        try:
            yield
        except HarnessError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc


def _print_scorecard(card, out: Path) -> None:
    from evalsuite.scoring.render import console_table
    from evalsuite.scoring.runlog import PASSK_PNG, SCORECARD_JSON

    console.print(console_table(card))
    console.print(f"scorecard: {Path(out) / SCORECARD_JSON}  (.md, {PASSK_PNG} beside it)")


@app.command("audit")
def audit(spec: Path = typer.Argument(..., help="a suite spec (YAML)"),
          out: Path = typer.Option(..., "--out", help="folder for audit.json and audit.md"),
          probes: bool = typer.Option(True, "--probes/--no-probes",
                                      help="replay each reference with one write argument nudged (grader probes)")) -> None:
    """Run the acceptance checks on any suite: solvable, stable, not trivially passable, resettable; and probe every
    grader with near-miss trajectories (an imported suite's peer grader too)."""
    from evalsuite.importers.peers import peer_grader
    from evalsuite.pipeline.driver import audit as audit_suite

    with _build_errors():
        report = audit_suite(spec, out, probes=probes, peer_of=peer_grader)
    s = report.summary
    typer.echo(f"{s['tasks']} tasks: {s['accepted']} accepted, {s['quarantined']} quarantined, "
               f"{s['gold_replay_errors']} reference call(s) raised, no-op passes {s['noop_passes']}; "
               f"written to {out / 'audit.json'} and {out / 'audit.md'}")


@app.command("gates")
def gates() -> None:
    """List every gate: the stage it guards and what it checks (the one registry the build and Dagster use)."""
    from evalsuite.pipeline.registry import GATES

    table = Table(title="Gates (each blocks every release when it fails)")
    for col in ("gate", "stage", "what it checks"):
        table.add_column(col, overflow="fold")
    for g in GATES.values():
        table.add_row(g.name, g.stage, g.description)
    console.print(table)


class _ExportGroup(TyperGroup):
    """`evalsuite export RELEASE --purpose …` (no subcommand named) is `evalsuite export tasks RELEASE --purpose …`,
    so the task export keeps its command line beside `evalsuite export inspect`."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args.insert(0, "tasks")
        return super().resolve_command(ctx, args)


export_app = typer.Typer(cls=_ExportGroup, no_args_is_help=True,
                         help="A release's tasks for a purpose (JSONL), or as a task other evaluation tools run.")
app.add_typer(export_app, name="export")


@export_app.command("tasks")
def export(release_dir: Path = typer.Argument(..., help="a release folder"),
           purpose: str = typer.Option(..., help="evaluation, review, training or prompt_tuning"),
           out: Path = typer.Option(..., "--out", help="JSONL file to write")) -> None:
    """Export a release's tasks for a purpose; training and prompt tuning never receive held-out tasks."""
    from evalsuite.releases.release import Release
    from evalsuite.tasks.heldout import EXCLUDING_HELD_OUT, export_tasks
    from evalsuite.tasks.taskfile import write_tasks

    if purpose not in EXCLUDING_HELD_OUT | {"evaluation", "review"}:
        typer.echo(f"--purpose: unknown purpose {purpose!r}", err=True)
        raise typer.Exit(2)
    with _build_errors():
        tasks = export_tasks(Release(release_dir).tasks(purpose=purpose), purpose)  # type: ignore[arg-type]
    write_tasks(out, tasks)
    typer.echo(f"{len(tasks)} task(s) written to {out}")


@app.command("build")
def build_cmd(spec: Path = typer.Argument(..., help="a suite spec (YAML)"),
              home: Path = typer.Option(None, help="home folder (default: EVALSUITE_HOME, else ./.evalsuite)"),
              progress: bool = typer.Option(None, "--progress/--no-progress", show_default=False,
                                            help="a bar over the stages and what derivation kept, on stderr "
                                                 "(default: when stderr is a terminal)")) -> None:
    """Build a suite spec into a release; one JSON line. A blocking gate exits 2 naming the gate and its reason."""
    from evalsuite.pipeline.driver import build

    with _build_errors(), _stage_progress(progress, spec) as on_stage:
        built = build(spec, home, on_stage=on_stage)
    typer.echo(built.model_dump_json())


@contextmanager
def _stage_progress(enabled: bool | None, spec: Path) -> Iterator[Callable | None]:
    """A bar over the build stages on stderr (stdout keeps the one JSON line); once tasks are derived, how many
    cases became tasks and why the others did not is printed above it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evalsuite.pipeline.registry import build_stages
    from evalsuite.sourcing.spec import load_spec

    err = Console(stderr=True)
    if not (err.is_terminal if enabled is None else enabled):
        yield None
        return
    names = [s.name for s in build_stages(load_spec(spec))]
    columns = (TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err) as bar:
        task = bar.add_task(names[0], total=len(names))

        def on_stage(name: str, out) -> None:
            if name == "derived_tasks":
                bar.console.print(f"{name}: {out.metadata['summary']}", markup=False, highlight=False)
            following = names[names.index(name) + 1:]
            bar.update(task, advance=1, description=following[0] if following else "built")

        yield on_stage


@contextmanager
def _build_errors(*more: type[Exception]) -> Iterator[None]:
    """A blocking gate: a JSON line on stdout, one line on stderr and exit 2; a bad input file (any of the
    loaders' one-line errors, or `more`): one line `error: FILE: field: what` on stderr and exit 2.
    Anything else is a bug and keeps its traceback."""
    from evalsuite.core.io import YamlModelError
    from evalsuite.deid.rules import DeidError
    from evalsuite.pipeline.locks import LockError
    from evalsuite.pipeline.stage import GateError
    from evalsuite.releases.release import ReleaseError
    from evalsuite.sourcing.policies import PolicyError
    from evalsuite.sourcing.quality import QualityConfigError
    from evalsuite.sourcing.rights import RightsError
    from evalsuite.sourcing.spec import SpecError

    try:
        yield
    except GateError as exc:
        typer.echo(json.dumps({"blocked": exc.gate, "reason": exc.reason}))
        typer.echo(f"error: gate {exc.gate} blocked: {exc.reason}", err=True)
        raise typer.Exit(2) from exc
    except (SpecError, RightsError, DeidError, PolicyError, QualityConfigError, TaskFileError, YamlModelError,
            ReleaseError, LockError, *more) as exc:  # LockError: another build of the suite holds the home
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


review_app = typer.Typer(no_args_is_help=True, help="Review goal states: sign-offs and resolutions, kept in the suite's "
                                                   "review ledger across rebuilds.")
app.add_typer(review_app, name="review")
SUITE_SPEC = typer.Argument(..., help="a suite spec (YAML), built at least once")
HOME = typer.Option(None, help="home folder (default: EVALSUITE_HOME, else ./.evalsuite)")


def _reviewed(spec_path: Path, home: Path | None):
    """(derived tasks by id, the suite's ledger) of a built suite; ReviewError when it has not been built."""
    from evalsuite.audit.reviews import ReviewError
    from evalsuite.core.home import home_dir
    from evalsuite.pipeline.paths import Paths
    from evalsuite.pipeline.stages.acceptance import ledger
    from evalsuite.sourcing.spec import load_spec
    from evalsuite.tasks.taskfile import read_tasks

    spec = load_spec(spec_path)
    root = home_dir(home)
    if not (root / "suites" / spec.name / "tasks.jsonl").is_file():  # checked before Paths, which creates the home
        raise ReviewError(f"suite {spec.name} has not been built in {root} (run `evalsuite build {spec_path}` first)")
    paths = Paths(spec, root)
    return {t.task_id: t for t in read_tasks(paths.tasks)}, ledger(paths), paths


def _review_task(spec_path: Path, home: Path | None, task_id: str):
    """(the named task, the ledger); ReviewError naming the task file when the suite has no such task."""
    from evalsuite.audit.reviews import ReviewError

    tasks, ledger, paths = _reviewed(spec_path, home)
    if task_id not in tasks:
        raise ReviewError(f"{paths.tasks}: --task: no task {task_id!r} in the suite's current tasks")
    return tasks[task_id], ledger


@review_app.command("status")
def review_status(spec: Path = SUITE_SPEC, home: Path = HOME) -> None:
    """Tasks signed by 0, 1 or 2 reviewers on their current goal, disagreements open, and what each task still needs."""
    from evalsuite.audit.reviews import ReviewError, review_counts, review_state

    with _build_errors(ReviewError):
        tasks, ledger, _ = _reviewed(spec, home)
        entries = ledger.entries()
    states = [review_state(t, entries) for t in tasks.values()]
    c = review_counts(states)
    typer.echo(f"{c['tasks']} tasks: signed by 0: {c['signed_by_0']}, 1: {c['signed_by_1']}, 2 or more: "
               f"{c['signed_by_2_or_more']}; disagreements open: {c['disagreements_open']}; resolved: {c['resolved']}; "
               f"adjudicated: {c['adjudicated']}; needs review again: {c['needs_review_again']}")
    for s in states:
        if not s.adjudicated:
            typer.echo(f"{s.task_id}: {s.missing()}")


@review_app.command("show")
def review_show(spec: Path = SUITE_SPEC, task: str = typer.Option(..., "--task", help="task id"),
                home: Path = HOME) -> None:
    """What a reviewer signs: trigger, goal state beside the policy clauses it cites, reference solution, provenance."""
    from evalsuite.audit.reviews import ReviewError, describe, review_state

    with _build_errors(ReviewError):
        record, ledger = _review_task(spec, home, task)
        typer.echo(describe(record, review_state(record, ledger.entries())), nl=False)


@review_app.command("sign")
def review_sign(spec: Path = SUITE_SPEC, task: str = typer.Option(..., "--task", help="task id"),
                reviewer: str = typer.Option(..., "--reviewer", help="your name"),
                decision: str = typer.Option(..., "--decision", help="agree or disagree"),
                note: str = typer.Option("", "--note", help="why, citing the policy text"), home: Path = HOME) -> None:
    """Sign a task's current goal state; signing again replaces your earlier decision on the same goal."""
    from evalsuite.audit.reviews import ReviewError, review_lines

    with _build_errors(ReviewError):
        record, ledger = _review_task(spec, home, task)
        state = ledger.sign(record, reviewer, decision, note)
    typer.echo(f"{task}: {reviewer.strip()} {decision} recorded on goal {state.goal_sha256[:16]}; "
               + review_lines(state)[-1])


@review_app.command("resolve")
def review_resolve(spec: Path = SUITE_SPEC, task: str = typer.Option(..., "--task", help="task id"),
                   by: str = typer.Option(..., "--by", help="who settled it"),
                   resolution: str = typer.Option(..., "--resolution", help="how, citing the policy clause"),
                   home: Path = HOME) -> None:
    """Record how an open disagreement was settled against the policy text; the goal state stands as it is (to
    change a goal, change its derivation or sources and rebuild: the new goal needs fresh sign-offs)."""
    from evalsuite.audit.reviews import ReviewError, review_lines

    with _build_errors(ReviewError):
        record, ledger = _review_task(spec, home, task)
        state = ledger.resolve(record, by, resolution)
    typer.echo(f"{task}: resolution by {by.strip()} recorded on goal {state.goal_sha256[:16]}; "
               + review_lines(state)[-1])


import_app = typer.Typer(no_args_is_help=True, help="Import public benchmarks as evalsuite sources and suites.")
app.add_typer(import_app, name="import")
tau2_app = typer.Typer(no_args_is_help=True, help="τ²-bench retail round trips.")
app.add_typer(tau2_app, name="tau2-retail")


@import_app.command("tau2-retail")
def import_tau2(src: Path = typer.Argument(..., help="folder with db.json, tasks.json, split_tasks.json, policy.md"),
                out: Path = typer.Option(..., "--out", help="folder for the source tables, rights, policy, tasks and suite.yaml")) -> None:
    """Import τ²-bench retail: tables, rights manifest (MIT), versioned policy, tasks with replay-derived goals."""
    from evalsuite.importers.tau2.importer import Tau2InputError, import_tau2_retail

    with _build_errors(Tau2InputError):
        report = import_tau2_retail(src, out)
    typer.echo(f"{report.tasks} tasks imported to {out}; {len(report.gold_replay_errors)} gold action(s) raised "
               f"(listed in {out / 'import_report.json'}); suite spec: {out / 'suite.yaml'}")


@tau2_app.command("export-state")
def tau2_export_state(out_dir: Path = typer.Argument(..., help="an imported folder"),
                      task: str = typer.Option(..., "--task", help="task id whose gold actions to replay"),
                      dest: Path = typer.Option(..., "--out", help="JSON file in the original nested db.json form")) -> None:
    """Write the world after replaying a task's gold actions, as nested JSON, and print its tau2 hash."""
    from evalsuite.importers.tau2.importer import Tau2InputError, export_state

    with _build_errors(Tau2InputError):
        typer.echo(export_state(out_dir, task, dest))


agentdojo_app = typer.Typer(no_args_is_help=True, help="AgentDojo banking round trips.")
app.add_typer(agentdojo_app, name="agentdojo-banking")


@import_app.command("agentdojo-banking")
def import_agentdojo(src: Path = typer.Argument(..., help="folder with environment.yaml, injection_vectors.yaml, LICENSE"),
                     out: Path = typer.Option(..., "--out", help="folder for the source tables, rights, policy, tasks and suite.yaml")) -> None:
    """Import AgentDojo banking: tables, rights manifest (MIT), authored policy, 25 tasks with replay-derived goals."""
    from evalsuite.importers.agentdojo.importer import AgentDojoInputError, import_agentdojo_banking

    with _build_errors(AgentDojoInputError):
        report = import_agentdojo_banking(src, out)
    passing = sorted(t for t, ok in report.peer_check_on_noop.items() if ok)
    typer.echo(f"{report.tasks} tasks imported to {out}; the peer's own check passes a no-op on {len(passing)} "
               f"({', '.join(passing) or 'none'}; see {out / 'import_report.json'}); suite spec: {out / 'suite.yaml'}")


@agentdojo_app.command("export-state")
def agentdojo_export_state(out_dir: Path = typer.Argument(..., help="an imported folder"),
                           task: str = typer.Option(..., "--task", help="task id whose reference solution to replay"),
                           dest: Path = typer.Option(..., "--out", help="JSON file: the environment as the peer dumps it")) -> None:
    """Write the environment after a task's reference solution in the peer's JSON form."""
    from evalsuite.importers.agentdojo.importer import AgentDojoInputError, export_state

    with _build_errors(AgentDojoInputError):
        export_state(out_dir, task, dest)
    typer.echo(str(dest))


trial_app = typer.Typer(no_args_is_help=True, help="Look at single trials: replay given tool calls on a task.")
app.add_typer(trial_app, name="trial")


@trial_app.command("replay")
def trial_replay(
    source: Path = typer.Argument(..., help="a release folder or a suite spec (.yaml, built first)"),
    task: str = typer.Option(..., "--task", help="task id"),
    calls: Path = typer.Option(..., "--calls", help='JSON list of {"tool": ..., "arguments": {...}}'),
    faults: Path = typer.Option(None, "--faults", help="JSON fault plan (name, faults[{tool, call, kind}], deadline_seconds)"),
    message: str = typer.Option("", "--message", help="the final message to grade with"),
) -> None:
    """Run the calls on a freshly reset world as the task's role; print one JSON object: each call's output or
    error, the verdict with every check, and the end-state hash. Any domain."""
    from evalsuite.pipeline.driver import resolve_release
    from evalsuite.trials.replay import ReplayError, find_task, load_calls, load_faults, replay, to_json

    with _build_errors(ReplayError):
        given, plan = load_calls(calls), load_faults(faults) if faults else None
        release = resolve_release(source)
        report = replay(release.open_world(), find_task(release.tasks("replay"), task), given, plan, message)
    typer.echo(to_json(report))


releases_app = typer.Typer(no_args_is_help=True, help="Release history: list a suite's releases, diff two of them.")
app.add_typer(releases_app, name="releases")


def _release_root(spec_path: Path, home: Path | None) -> tuple[Path, str]:
    """(the releases folder, the suite name) for a suite spec."""
    from evalsuite.core.home import home_dir
    from evalsuite.sourcing.spec import load_spec

    return (home_dir(home)) / "releases", load_spec(spec_path).name


@releases_app.command("list")
def releases_list(spec: Path = SUITE_SPEC, home: Path = HOME) -> None:
    """The suite's releases, newest first: created, tasks, quarantined, policy versions, seed hash."""
    from evalsuite.releases.history import releases

    with _build_errors():
        rows = releases(*_release_root(spec, home))
    for r in rows:  # plain lines: a version id must never be cut by a narrow terminal
        typer.echo(f"{r.version}  {r.created} ({r.created_from})  {r.n_tasks} tasks  {r.quarantined} quarantined  "
                   f"policies {', '.join(r.policy_versions)}  seed {r.seed_sha256[:12]}")


@releases_app.command("diff")
def releases_diff(old: str = typer.Argument(..., help="a release folder, or a version of --suite"),
                  new: str = typer.Argument(..., help="a release folder, or a version of --suite"),
                  suite: Path = typer.Option(None, "--suite", help="a suite spec (YAML), to name releases by version"),
                  home: Path = HOME, markdown: bool = typer.Option(False, "--markdown", help="print Markdown")) -> None:
    """Tasks added, removed and changed (field by field), quarantine changes, and identity changes from OLD to NEW."""
    from evalsuite.pipeline.stages.release import diff_markdown
    from evalsuite.releases.history import diff_lines, diff_releases, resolve

    with _build_errors():
        root, name = _release_root(suite, home) if suite else (None, None)
        d = diff_releases(resolve(old, root, name), resolve(new, root, name))
    typer.echo(diff_markdown(d) if markdown else "\n".join(diff_lines(d)))


@app.command("leaderboard")
def leaderboard_cmd(spec: Path = typer.Argument(..., help="a suite spec (YAML) with releases scored in Dagster"),
                    home: Path = HOME,
                    sort_by: str = typer.Option("pass_k", "--sort-by",
                                                help="pass_k (best first), cost_per_trial or cost_per_success "
                                                     "(cheapest first; agents without a price last)")) -> None:
    """Every agent on every scored release of a suite, newest release first, with cost per trial and per success
    and ties the paired comparison cannot separate; writes leaderboard.md/.json/.png beside the scorecards."""
    from evalsuite.core.home import home_dir
    from evalsuite.pipeline.paths import Paths
    from evalsuite.pipeline.stages import leaderboard
    from evalsuite.scoring.runlog import SCORECARD_JSON
    from evalsuite.sourcing.spec import SpecError, load_spec

    with _build_errors():
        if sort_by not in leaderboard.SORTS:
            raise typer.BadParameter(f"expected one of {', '.join(leaderboard.SORTS)}", param_hint="--sort-by")
        suite = load_spec(spec)
        runs = (home_dir(home)) / "runs" / suite.name
        if not any(runs.glob(f"*/{SCORECARD_JSON}")):  # checked before Paths, which creates the home
            raise SpecError(f"{runs}: no scored release of suite {suite.name} (the scorecard asset writes one)")
        out = leaderboard.run(suite, Paths(suite, runs.parent.parent), sort_by)
    typer.echo(f"{out.metadata['leaderboard']}\n\nleaderboard: {out.metadata['file']}  plot: {out.metadata['plot']}")


@app.command("site")
def site(sources: list[Path] = typer.Argument(..., help="release folders, run folders (`evalsuite run`) or a "
                                                       "release's scorecard folder (runs/<suite>/<version>)"),
         out: Path = typer.Option(..., "--out", help="the site folder: new, empty, or an earlier site (replaced whole)"),
         progress: bool = typer.Option(None, help="a progress bar on stderr (default: when stderr is a terminal)")) -> None:
    """The public evidence site: static pages of releases and scorecards and a replay of every published trial.
    Only de-identified values; held-out tasks only as counts; a page holding an original personal value or a
    configured secret stops the build (exit 2) and nothing is written."""
    from evalsuite.scoring.runlog import RunFolderError
    from evalsuite.site.build import build_site
    from evalsuite.site.sanitize import SiteError
    from evalsuite.trials.tracelog import TraceLogError

    with _build_errors(SiteError, RunFolderError, TraceLogError):
        s = build_site(sources, out, progress=Console(stderr=True).is_terminal if progress is None else progress)
    typer.echo(f"site: {s.out.resolve() / 'index.html'}  ({s.releases} release page(s), {s.scorecards} scorecard(s), "
               f"{s.traces} trace replay(s); {s.files_scanned} files checked for original values and secrets)")



@export_app.command("inspect")
def export_inspect(release: Path = typer.Argument(..., help="a release folder"),
                   out: Path = typer.Option(..., "--out", help="the folder to write task.py into")) -> None:
    """An Inspect AI task of the release: samples from its tasks, the role's tools on a freshly reset world per
    sample, our grader as the scorer, its trials as epochs. Run it with `inspect eval DIR/task.py --model ...`."""
    try:
        from evalsuite.exporters.inspect_export import export_inspect as write_task
    except ModuleNotFoundError as exc:  # an optional extra: say which package is missing, in one line
        typer.echo(f"error: {exc.name} is not installed (pip install 'evalsuite[dev]' or inspect-ai)", err=True)
        raise typer.Exit(2) from exc
    with _build_errors():
        x = write_task(release, out)
    typer.echo(f"{x.task_file}: task {x.task_name}, {x.samples} sample(s), {x.left_out} left out (held-out or "
               f"conversational), {x.epochs} epoch(s)\nrun: inspect eval {x.task_file}@{x.task_name} --model PROVIDER/MODEL "
               "(mockllm/model runs it without a provider)")


if __name__ == "__main__":
    app()
