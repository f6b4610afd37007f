"""The docs as a reader meets them: a short README, every page in the site's nav, every repository path a page
names present, and the copy-paste blocks of the pages doing what the pages say."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from docs_support import DOCS, ROOT, code_blocks, nav_pages, page, section
from suite_support import DEMO_KEY, SUITE, copy_suite

from evalsuite.core import sandbox
from evalsuite.scoring.runlog import TRACES

# The repository's own top-level entries: dot-folders other than .ci are made by running things (the home
# .evalsuite, the venvs, caches), so paths below them are examples of output, not files of the repository.
TOP_LEVEL = {p.name for p in ROOT.iterdir() if (p.name == ".ci" or not p.name.startswith(".")) and p.name != "site"}
# a/b/c-like tokens (not inside a longer path, a URL or a $VARIABLE), cut before a trailing "=" (a tag such as
# evalsuite/not_run=<gate>) or ":" (FILE:LINE)
REPO_PATH = re.compile(r"(?<![\w./$<:~-])((?:[\w.-]+/)+[\w*.-]*)(?![\w=])")
BUNDLED = {p.stem for p in (ROOT / "suites").glob("*.yaml")}


def pages() -> dict[str, str]:
    """The README and every docs page, by path relative to the repository."""
    files = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return {str(f.relative_to(ROOT)): f.read_text(encoding="utf-8") for f in files}


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines; move sections into docs/"



def test_the_readme_python_example_is_the_one_the_api_page_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (example,) = code_blocks(section(readme, "## From Python"), "python")
    assert example == code_blocks(section(page("python-api.md"), "## In ten lines"), "python")[0]
    assert len(example.splitlines()) <= 12

def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    nav = nav_pages()
    assert sorted(nav) == on_disk
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_every_repository_path_the_pages_name_exists():
    missing = {}
    for name, text in pages().items():
        for m in REPO_PATH.finditer(text):
            path = m.group(1).rstrip(".")
            if path.split("/")[0] in TOP_LEVEL and "*" not in path and not (ROOT / path).exists():
                missing.setdefault(name, []).append(path)
    assert missing == {}


def test_a_bundled_suite_spec_is_named_by_its_folder_suites():
    wrong = [(name, m.group(0)) for name, text in pages().items()
             for m in re.finditer(r"\b([\w.-]+)/(\w+)\.yaml\b", text)
             if m.group(2) in BUNDLED and m.group(1) != "suites"]
    assert wrong == []


def test_the_review_walkthrough_turns_review_on_and_its_first_build_stops_as_shown(tmp_path):
    text = page("review.md")
    (block,) = code_blocks(section(text, "## Turn review on"), "yaml")
    acceptance = yaml.safe_load(block)["acceptance"]
    assert acceptance["require_adjudication"] is True
    spec = copy_suite(tmp_path, **acceptance)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSUITE_", "DAGSTER_"))}
    env |= {"EVALSUITE_HOME": str(tmp_path / "my_home"), "EVALSUITE_DEID_KEY": DEMO_KEY}
    run = subprocess.run([sys.executable, "-m", "evalsuite.cli", "build", spec.name, "--no-progress"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 2, run.stdout + run.stderr
    shown = next(line for line in section(text, "## Sign goal states").splitlines()
                 if line.startswith("error: gate adjudicated"))
    assert run.stderr.strip().splitlines()[-1] == shown


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="bubblewrap is not usable here (the agent's folders are 0700)")
def test_the_connect_command_of_an_external_agent_runs_as_written(built, tmp_path):
    """The block of "Connect an external agent", run from a copy of the project's examples/ folder: the agent
    reaches every trial (no infra error) and passes exactly the task whose reference its plan is."""
    spec, home = built
    (release,) = (home / "releases" / SUITE).iterdir()
    (block,) = code_blocks(section(page("agents/external.md"), "## Connect an external agent"), "bash")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSUITE_", "DAGSTER_"))}
    env |= {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "EVALSUITE_HOME": str(home),
            "release": str(release)}
    run = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "runs" / "mcp" / TRACES).read_text().splitlines()]
    assert [r["outcome"] for r in records if r["outcome"] == "infra_error"] == []
    assert [r["task_id"] for r in records if r["passed"]] == ["ap-exc-02e1240841"]
    assert {r["agent_config"]["boundary"] for r in records} == {"zygote"}
