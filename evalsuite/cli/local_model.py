"""`evalsuite local-model`: an OpenAI-compatible endpoint on 127.0.0.1 that solves a release's tasks, for trying
model agents, their concurrency and limits without a hosted model; the endpoint itself is trials.local_model's."""
from __future__ import annotations

from pathlib import Path

import typer

from evalsuite.cli.common import HOME, Typer, build_errors

commands = Typer()


@commands.command("local-model")
def local_model(
    release: str = typer.Argument(..., metavar="RELEASE", help="a release folder, or a suite by its name or spec "
                                                                "(its newest release in the home)"),
    max_requests: int = typer.Option(..., "--max-requests", min=1, metavar="N",
                                     help="completions to answer; then it refuses requests and stops"),
    latency_ms: float = typer.Option(400.0, "--latency-ms", min=0, metavar="MS", help="median latency per request"),
    sigma: float = typer.Option(0.25, min=0, metavar="S", help="spread of the latency (sigma of its log)"),
    seed: int = typer.Option(0, metavar="N", help="seed of the latency draws"),
    turns: int = typer.Option(3, min=0, metavar="N", help="tool turns for a conversation that is not a task's"),
    port: int = typer.Option(8471, min=0, max=65535, metavar="PORT", help="port on 127.0.0.1 (0: any free port)"),
    home: Path = HOME,
) -> None:
    """Serve a model on 127.0.0.1 that answers each task by its reference solution, one tool call per request."""
    from evalsuite.releases.history import named_release
    from evalsuite.trials.local_model import LocalModelSettings, loopback_listener, serve

    with build_errors():
        tasks = named_release(release, home).tasks("local model")
    settings = LocalModelSettings(max_requests=max_requests, median_ms=latency_ms, sigma=sigma, seed=seed,
                                  turns=turns)
    try:
        sock = loopback_listener(port)
    except OSError as exc:
        typer.echo(f"error: port {port} on 127.0.0.1: {exc.strerror}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"evalsuite local-model: OPENAI_BASE_URL=http://127.0.0.1:{sock.getsockname()[1]}/v1  "
               f"({len(tasks)} task(s); {max_requests} request(s), then it stops; Ctrl-C stops it sooner)")
    serve(tasks, settings, sock)
