"""`evalsuite run`, `score`, `compare`, `modes` and `leaderboard`: agents scored on releases, and the scores read;
`evalsuite import-run`: trials recorded elsewhere, replayed and regraded into a run folder;
`evalsuite runs repair`: a run folder an older version left with a trial recorded twice, mended."""
from __future__ import annotations

from pathlib import Path

import typer

from evalsuite.cli.common import (
    HOME,
    RESAMPLES,
    RUN_DIR,
    Typer,
    build_errors,
    console,
    one_of,
    print_scorecard,
    run_errors,
)

commands = Typer()
runs_app = Typer(help="Run folders: repair one an older evalsuite left with trials recorded twice.")


def _known_agents(names: list[str]) -> list[str]:
    """Refuse an agent name before any build or trial: a typo should cost nothing."""
    from evalsuite.trials.agents.factory import make_agent

    for name in names:
        try:
            make_agent(name)
        except KeyError as exc:
            raise typer.BadParameter(exc.args[0]) from exc
        except ValueError as exc:  # openai: without a model, mcp: without a command
            raise typer.BadParameter(str(exc)) from exc
    return names


def _modes(value: str | None) -> str | None:
    from evalsuite.scoring.modes import MODES

    return one_of(MODES)(value)


def _sorts(value: str) -> str:
    from evalsuite.pipeline.stages.leaderboard import SORTS

    return one_of(SORTS)(value)


MODEL_PANEL = "Model and external agents"


@commands.command("run")
def run(
    source: Path = typer.Argument(..., metavar="SOURCE", help="a release folder (with manifest.json) or a suite spec "
                                                               "(.yaml)"),
    agent: list[str] = typer.Option(..., "--agent", metavar="AGENT", callback=_known_agents,
                                    help="agent to score: reference, noop, adversary, workflow, openai:MODEL, "
                                         "workflow:MODEL or mcp:COMMAND; repeat for several"),
    trials: int = typer.Option(None, min=1, metavar="N", help="trials per task (default: each task's trial protocol)"),
    out: Path = typer.Option(None, metavar="FOLDER", help="run folder (default: runs/<suite>/<version>); rerunning "
                                                          "resumes it"),
    workers: int = typer.Option(None, min=1, metavar="N", help="worker processes (default: all cores; 1 runs in this "
                                                               "process)"),
    seed: int = typer.Option(0, metavar="N", help="run seed; per-trial seeds derive from it"),
    resamples: int = RESAMPLES,
    progress: bool = typer.Option(True, help="show a progress bar on stderr"),
    mode: str = typer.Option(None, metavar="MODE", callback=_modes,
                             help="trial mode of a conversational suite: default, no_user or oracle_plan (another "
                                  "task set; default run folder runs/<suite>/<version>-<mode>)"),
    max_in_flight: int = typer.Option(None, min=1, metavar="N", rich_help_panel=MODEL_PANEL,
                                      help="trials at once per model or external agent (default: 32 for openai)"),
    max_connections: int = typer.Option(None, min=1, metavar="N", rich_help_panel=MODEL_PANEL,
                                        help="requests in flight to the model endpoint at once (default 32)"),
    rpm: float = typer.Option(None, min=0.001, metavar="N", rich_help_panel=MODEL_PANEL,
                              help="the endpoint's request-rate limit, requests per minute"),
    tpm: float = typer.Option(None, min=1, metavar="N", rich_help_panel=MODEL_PANEL,
                              help="the endpoint's token-rate limit, tokens per minute"),
    max_cost: float = typer.Option(None, min=0.000001, metavar="X", rich_help_panel=MODEL_PANEL,
                                   help="run cap: start no trial once the run has cost X (prices.yaml currency)"),
    max_tokens: int = typer.Option(None, min=1, metavar="N", rich_help_panel=MODEL_PANEL,
                                   help="run cap: start no trial once the run has used N tokens"),
    trial_seconds: float = typer.Option(None, min=0.001, metavar="S", rich_help_panel=MODEL_PANEL,
                                        help="per-trial limit: wall seconds (then budget_exhausted)"),
    trial_calls: int = typer.Option(None, min=1, metavar="N", rich_help_panel=MODEL_PANEL,
                                    help="per-trial limit: model calls"),
    trial_tokens: int = typer.Option(None, min=1, metavar="N", rich_help_panel=MODEL_PANEL,
                                     help="per-trial limit: tokens in + out"),
    trial_cost: float = typer.Option(None, min=0.000001, metavar="X", rich_help_panel=MODEL_PANEL,
                                     help="per-trial limit: cost"),
    cache: bool = typer.Option(False, "--cache", rich_help_panel=MODEL_PANEL,
                               help="answer repeated model requests from the response cache (development: the run's "
                                    "identity says it used one)"),
) -> None:
    """Score agents on a release: traces, summary and scorecard go to the run folder; a killed run resumes."""
    from evalsuite.pipeline.driver import run_source
    from evalsuite.trials.settings import engine_options

    with run_errors():
        agents, engine = engine_options(agent, max_in_flight=max_in_flight, max_connections=max_connections, rpm=rpm,
                                        tpm=tpm, max_cost=max_cost, max_tokens=max_tokens, trial_seconds=trial_seconds,
                                        trial_calls=trial_calls, trial_tokens=trial_tokens, trial_cost=trial_cost,
                                        cache=cache)
        card, out = run_source(source, agents, out, trials=trials, workers=workers, seed=seed, progress=progress,
                               resamples=resamples, mode=mode, engine=engine)
    print_scorecard(card, out)


@commands.command("import-run")
def import_run(
    recording: Path = typer.Argument(..., metavar="RECORDING",
                                     help="a τ²-bench results file, a τ-bench trajectory log, or trials of "
                                          "OpenAI-format messages (task_id, trial, reward, messages; JSON or JSON "
                                          "lines)"),
    source: Path = typer.Argument(..., metavar="SOURCE", help="the release (folder) or suite spec (.yaml) the "
                                                               "recorded tasks are in"),
    out: Path = typer.Option(None, metavar="FOLDER", help="run folder (default: <home>/runs/<suite>/<version>/agents/"
                                                          "<agent>, where the Dagster graph finds it)"),
    agent: str = typer.Option(None, metavar="NAME", help="the run's agent name (default: recorded:<model>)"),
    model: str = typer.Option(None, metavar="MODEL", help="the model that produced the recording (default: as the "
                                                          "file says; a τ-bench log says not)"),
    origin: str = typer.Option(None, "--from", metavar="WHERE", help="where the recording was published (default: "
                                                                      "its file)"),
    license_: str = typer.Option(None, "--license", metavar="TEXT", help="the recording's licence (default: from a "
                                                                          "LICENSE file beside it)"),
    resamples: int = RESAMPLES,
) -> None:
    """Import recorded trials as a run folder of a release: each trial's tool calls replayed on a freshly reset world
    (open loop), every call answered differently now reported, the end state graded by evalsuite, pass^k beside the
    recorded rewards' and every disagreement listed with its reason."""
    from evalsuite.importers.recorded.formats import RecordingError
    from evalsuite.importers.recorded.run import Origin, import_run
    from evalsuite.pipeline.driver import resolve_release
    from evalsuite.scoring.render import recording_section

    with run_errors(RecordingError):
        release = resolve_release(source)
        card, out = import_run(recording, release, out, Origin(source=origin, license=license_, model=model), agent,
                               resamples=resamples)
    typer.echo("\n".join(recording_section(card.recording)))
    print_scorecard(card, out)


@commands.command("modes")
def modes(run_dirs: list[Path] = typer.Argument(..., metavar="RUN",
                                                help="run folders of one agent on the same tasks, one per mode"),
          out: Path = typer.Option(..., "--out", metavar="FOLDER", help="folder for modes.md and modes.png"),
          agent: str = typer.Option(None, "--agent", metavar="AGENT",
                                    help="the agent to compare, where the runs scored several"),
          resamples: int = RESAMPLES) -> None:
    """Put an agent's runs in the three trial modes side by side: pass^k per mode, and by required actions, intent
    and persona."""
    from evalsuite.scoring.modes import compare_mode_runs, to_markdown

    with run_errors():
        cmp = compare_mode_runs(run_dirs, out, resamples, agent)
    typer.echo(to_markdown(cmp))
    typer.echo(f"written to {out / 'modes.md'} and {out / 'modes.png'}")


@commands.command("score")
def score(run_dir: Path = RUN_DIR) -> None:
    """Recompute the scorecard of a run folder from its stored traces; nothing is rerun."""
    from evalsuite.releases.runs import rescore

    with run_errors():
        card = rescore(run_dir)
    print_scorecard(card, run_dir)


@runs_app.command("repair")
def repair(run_dir: Path = RUN_DIR) -> None:
    """Keep the first record of each trial in the folder's traces (drop exact and conflicting duplicates and a
    truncated final line) and rewrite its summary, under the folder's lock; then `evalsuite score RUN`."""
    from evalsuite.scoring.runlog import repair_run

    with run_errors():
        done = repair_run(run_dir)
    typer.echo(done.describe())
    if done.changed:
        typer.echo(f"summary rewritten; score it with `evalsuite score {run_dir}`")


@commands.command("compare")
def compare(
    run_a: Path = typer.Argument(..., metavar="RUN_A", help="a run folder written by `evalsuite run`"),
    run_b: Path = typer.Argument(None, metavar="RUN_B", help="a second run folder of the same release (default: "
                                                              "compare within RUN_A)"),
    agent: list[str] = typer.Option([], "--agent", metavar="AGENT",
                                    help="agent A then agent B (A from RUN_A, B from RUN_B if given); may be left out "
                                         "when each run has one agent, or RUN_A two"),
    k: int = typer.Option(None, min=1, metavar="K", help="k of pass^k (default: the fewest trials of any shared task)"),
    resamples: int = typer.Option(2000, min=1, metavar="N", help="paired task-bootstrap resamples"),
    seed: int = typer.Option(0, metavar="N", help="bootstrap seed: the same seed gives the same interval"),
    variants: bool = typer.Option(False, "--variants", help="RUN_A and RUN_B ran two variants of one suite (a "
                                                            "dossier customization): pair their tasks by id"),
) -> None:
    """Paired comparison of two agents on the tasks both ran: A - B with a paired task-bootstrap interval and a
    verdict (A better, B better, or not distinguishable with the tasks that would be needed), then each separate
    measure (outcome, grounding, authority violations, handoff, latency, resources) with its paired interval."""
    from evalsuite.scoring.compare import CompareError, compare_runs, console_table

    with run_errors(CompareError):
        result = compare_runs(run_a, run_b, agent, k=k, resamples=resamples, seed=seed, variants=variants)
    console.print(console_table(result))
    console.print(f"paired task bootstrap, {resamples} resamples, seed {seed}; tasks needed: {result.needed_method}")


@commands.command("leaderboard")
def leaderboard_cmd(spec: Path = typer.Argument(..., metavar="SPEC",
                                                help="a suite spec (YAML) with releases scored in Dagster"),
                    home: Path = HOME,
                    sort_by: str = typer.Option("pass_k", "--sort-by", metavar="ORDER", callback=_sorts,
                                                help="pass_k (best first), cost_per_trial or cost_per_success "
                                                     "(cheapest first; agents without a price last)")) -> None:
    """Every agent on every scored release of a suite, newest release first, with cost per trial and per success
    and ties the paired comparison cannot separate; writes leaderboard.md/.json/.png beside the scorecards."""
    from evalsuite.pipeline.stages.leaderboard import for_spec

    with build_errors():
        out = for_spec(spec, home, sort_by)
    typer.echo(f"{out.metadata['leaderboard']}\n\nleaderboard: {out.metadata['file']}  plot: {out.metadata['plot']}")
