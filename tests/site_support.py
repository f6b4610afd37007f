"""The evidence site of the bundled AP suite for the tests of tests/site: built once per test process (the
`published` fixture of tests/site/conftest.py), and the ways tests plant into a copy of its run what an agent could
record."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from suite_support import DEMO_KEY

from evalsuite.releases.release import latest_release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.runlog import TRACES
from evalsuite.site.build import build_site
from evalsuite.tasks.taskfile import read_tasks

AGENTS = ["reference", "noop", "adversary"]  # the baselines of `make demo`


def publish(built, tmp_path_factory):
    """The built AP release, a run of the three baselines on it (one no-op trial given a read call and a user's
    message, as an agent that looked and talked would have), and the site of both, built with the
    de-identification key set as a real build is: the key is a configured secret the scan looks for."""
    spec, home = built
    release = latest_release(home / "releases", "ap_exceptions")
    tmp = tmp_path_factory.mktemp("site")
    run_release(release, AGENTS, tmp / "run", trials=1)
    edit_first(tmp / "run", "noop", looked_and_user_said)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
        mp.setenv("EVALSUITE_HOME", str(tmp / "reader"))  # the held-out read goes to an access log of its own
        summary = build_site([release.path, tmp / "run"], tmp / "site")
    return release, tmp / "run", tmp / "site", summary, home


def site_files(site: Path) -> dict[str, str]:
    return {str(p.relative_to(site)): p.read_text(encoding="utf-8") for p in site.rglob("*")
            if p.is_file() and p.suffix != ".png"}


def edit_first(run: Path, agent: str, edit) -> None:
    """Apply edit(record) to the first recorded trial of agent on a published (not held-out) task."""
    held = {t.task_id for t in read_tasks(run / "tasks.jsonl") if t.split == "held_out"}
    path = run / TRACES
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    edit(next(r for r in lines if r["task_id"] not in held and r["agent"] == agent))
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))


def plant(run: Path, text: str) -> None:
    """Put text into a published trial's final message, as an agent that echoed a record would (the no-op's: the
    reference's final message is not published)."""
    edit_first(run, "noop", lambda r: r.update(final_message=f"Resolved; contact {text} informed."))


def looked_and_user_said(record: dict) -> None:
    """A read of a paid invoice of the world, and a user's message recorded in the trace, as conversational trials
    record what the simulated user does."""
    record["trace"].append({"seq": 1, "actor": "agent", "tool": "get_invoice", "arguments": {"invoice_id": "INV-40000"},
                            "permitted": True, "outcome": "ok", "kind": "read",
                            "result": {"invoice_id": "INV-40000", "status": "paid"}})
    record["trace"].append({"seq": 2, "actor": "user", "tool": "send_message",
                            "arguments": {"message": "Please confirm the hold before noon."}, "permitted": True,
                            "outcome": "ok", "result": "delivered"})


def solution_of(run: Path, task_id: str) -> list[dict]:
    return next(json.loads(line)["trace"] for line in (run / TRACES).read_text().splitlines()
                if json.loads(line)["task_id"] == task_id and json.loads(line)["agent"] == "reference")


def first_noop_task(run: Path):
    held = {t.task_id for t in read_tasks(run / "tasks.jsonl") if t.split == "held_out"}
    first = next(json.loads(line) for line in (run / TRACES).read_text().splitlines()
                 if json.loads(line)["agent"] == "noop" and json.loads(line)["task_id"] not in held)
    return next(t for t in read_tasks(run / "tasks.jsonl") if t.task_id == first["task_id"])
