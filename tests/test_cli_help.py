"""Every command's --help reads in plain labels: SPEC, RELEASE, AGENT, N, FOLDER, never typer's {spec}, <bool> or
<list[str]>; and each argument in the usage line is named as the help's table names it."""
from __future__ import annotations

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from evalsuite.cli import app

RUNNER = CliRunner()


def command_paths(group=None, path=()) -> list[tuple[str, ...]]:
    """Every command and group of the app, as the words a user types before --help."""
    group = group or get_command(app)
    out = [path]
    for name, cmd in getattr(group, "commands", {}).items():
        out += command_paths(cmd, (*path, name)) if hasattr(cmd, "commands") else [(*path, name)]
    return out


PATHS = command_paths()


def test_every_command_is_reached():
    assert len([p for p in PATHS if p]) >= 34  # 25 commands and 9 groups at the least
    assert ("review", "sign") in PATHS and ("export", "inspect") in PATHS and ("site",) in PATHS


@pytest.mark.parametrize("words", PATHS, ids=lambda p: " ".join(p) or "evalsuite")
def test_help_shows_plain_labels(words):
    shown = RUNNER.invoke(app, [*words, "--help"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    for typer_label in ("{", "<bool>", "<list[", "<path>", "<str>", "<int"):
        assert typer_label not in shown.output, (typer_label, shown.output)


def test_the_usage_line_names_arguments_as_the_table_does():
    shown = RUNNER.invoke(app, ["review", "sign", "--help"], terminal_width=200).output
    assert "review sign [OPTIONS] SPEC " in shown
    assert "--reviewer" in shown and "NAME" in shown and "--task" in shown and "TASK" in shown
    run = RUNNER.invoke(app, ["run", "--help"], terminal_width=200).output
    assert "[OPTIONS] SOURCE" in run and "AGENT" in run and "--progress" in run
    compare = RUNNER.invoke(app, ["compare", "--help"], terminal_width=200).output
    assert "[OPTIONS] RUN_A [RUN_B]" in compare
    site = RUNNER.invoke(app, ["site", "--help"], terminal_width=200).output
    assert "[OPTIONS] SOURCE..." in site


def test_a_missing_argument_is_named_by_its_label():
    missing = RUNNER.invoke(app, ["releases", "list"])
    assert missing.exit_code == 2 and "Missing argument 'SUITE'" in missing.output
