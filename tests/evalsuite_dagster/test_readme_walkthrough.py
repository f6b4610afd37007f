"""The walkthrough "Build a suite from your own records" (docs/build-a-suite.md), run exactly as written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from docs_support import code_blocks, page
from suite_support import DEMO_KEY

from evalsuite.scoring.runlog import SCORECARD_JSON


def walkthrough_commands() -> list[str]:
    text = page("build-a-suite.md")
    assert text.startswith("# Build a suite from your own records\n")
    return code_blocks(text, "bash")


def test_walkthrough_builds_releases_and_scores(tmp_path):
    blocks = walkthrough_commands()
    assert len(blocks) >= 6
    script = "set -euo pipefail\n" + "\n".join(blocks)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSUITE_", "DAGSTER_"))}
    env |= {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "EVALSUITE_DEID_KEY": DEMO_KEY}
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    built = json.loads((tmp_path / "build.json").read_text())
    release = Path(built["release"])
    assert release.parent == tmp_path / "my_home" / "releases" / "my_suite" and (release / "manifest.json").is_file()
    assert built["accepted"] > 0
    card = json.loads((tmp_path / "my_run" / SCORECARD_JSON).read_text())
    assert card["suite"] == "my_suite" and {a["agent"] for a in card["agents"]} == {"reference", "noop", "adversary"}
    # The Dagster build of the same inputs released the same version: still one folder.
    assert [p.name for p in release.parent.iterdir()] == [built["version"]]
    assert "RUN_SUCCESS" in run.stdout + run.stderr
    # the instance is configured (telemetry off), not Dagster's defaults with a warning that no file was found
    assert "No dagster instance configuration file" not in run.stdout + run.stderr
