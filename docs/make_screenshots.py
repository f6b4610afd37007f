"""Make the docs' screenshots: docs/img/play_task.png and docs/img/scorecard_human.png of `evalsuite play` (on the
people page), and docs/img/blocked_not_run.png of the Dagster UI after a gate blocked a build (the pipeline page).

Builds the bundled AP suite into a temporary home, runs the reference and
no-op agents, then plays the part of two people in headless chromium on a
sample of six tasks: Ada follows each task's reference solution, Grace holds
every invoice for a price variance whatever its exception. The people are
scripted by this file, not real staff; the screenshots show the page and the
scorecard, not a measured human baseline. Then it builds a copy of the suite
whose license has expired through Dagster and shows an asset below the gate.
Run: .venv/bin/python docs/make_screenshots.py
"""
from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

from evalsuite.deid.keys import DEMO_KEY

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "evalsuite_dagster")]
from browser_support import CHROMIUM, fill_tool_form  # noqa: E402  (the tests' way of filling a tool's form)

IMG = ROOT / "docs" / "img"
WRONG_HOLD = {"reason": "price_variance"}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="evalsuite-shots-") as tmp:
        make(Path(tmp))
    for name in ("play_task.png", "scorecard_human.png", "blocked_not_run.png"):
        print(f"{IMG / name}: {(IMG / name).stat().st_size // 1024} KB")


def make(tmp: Path) -> None:
    os.environ["EVALSUITE_HOME"] = str(tmp / "home")  # nothing lands in the checkout or the user's home
    os.environ.setdefault("EVALSUITE_DEID_KEY", DEMO_KEY)
    from playwright.sync_api import sync_playwright

    from evalsuite.pipeline.driver import resolve_release
    from evalsuite.releases.runs import play_desk, rescore, run_release
    from evalsuite.trials.play import play_app, serving

    release = resolve_release(ROOT / "suites" / "ap_exceptions.yaml")
    run = tmp / "run"
    run_release(release, ["reference", "noop"], run, trials=2, workers=1)
    desk = play_desk(release, run, sample=6)
    IMG.mkdir(parents=True, exist_ok=True)
    with serving(play_app(desk, run)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            shot_task(page, url, desk.tasks[1])
            for name, right in (("Ada", True), ("Grace", False)):
                play_person(browser.new_page(), url, name, desk.tasks[2:] if right else desk.tasks, right)
            card = rescore(run)
            shot_scorecard(browser.new_page(viewport={"width": 900, "height": 400}), card)
        finally:
            browser.close()
    shot_blocked(tmp / "blocked")


def shot_blocked(tmp: Path) -> None:
    """The derived_tasks asset after a build whose license gate blocked: not run, the gate's reason beside it."""
    import dagster_driver as driver
    from pipeline_support import open_project_instance
    from playwright.sync_api import sync_playwright
    from suite_support import SUITE, copy_suite, expire_license
    from webserver_support import get, serve

    from evalsuite_dagster.definitions import build_defs
    from evalsuite_dagster.suite.graph import build_suite_graph

    spec = copy_suite(tmp / "suite")
    expire_license(spec)
    graph = build_suite_graph(spec)
    with open_project_instance(tmp / "dagster") as instance:
        driver.build(build_defs([graph], home=tmp / "home"), graph, instance)
    with serve(tmp / "dagster", spec, tmp / "home", tmp / "webserver.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            page.goto(f"{base}/assets/{SUITE}/derived_tasks")
            if get(f"{base}/graphql", {"query": "{ shouldShowNux }"})["data"]["shouldShowNux"]:
                page.get_by_role("button", name="Skip").click(timeout=60_000)  # "Join the Dagster community"
            page.get_by_text("gate rights_cleared blocked").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)
            save(page.screenshot(), IMG / "blocked_not_run.png")
        finally:
            browser.close()


def sign_in(page, url: str, name: str) -> None:
    page.goto(url)
    page.fill("#name", name)
    page.get_by_role("button", name="Start").click()


def shot_task(page, url: str, task) -> None:
    """The task page of an attempt in progress (two calls made, the next one's form open), then the attempt
    finished as the reference solution would."""
    sign_in(page, url, "Ada")
    page.click(f"#open-{task.task_id}")
    calls = task.solution_calls()
    for i, c in enumerate(calls):
        if i == 2:
            page.locator(f"details:has(#tool-{c.tool}) > summary").click()
            save(page.screenshot(), IMG / "play_task.png")
        fill_tool_form(page, c.tool, c.arguments)
    page.fill("#message", task.reference_answer or "")
    page.get_by_role("button", name="Submit and end the attempt").click()


def play_person(page, url: str, name: str, tasks, right: bool) -> None:
    sign_in(page, url, name)
    for task in tasks:
        page.click(f"#open-{task.task_id}")
        for c in task.solution_calls():
            wrong = not right and c.tool == "hold_invoice"
            fill_tool_form(page, c.tool, {**c.arguments, **WRONG_HOLD} if wrong else c.arguments)
        page.fill("#message", task.reference_answer or "")
        page.get_by_role("button", name="Submit and end the attempt").click()


def shot_scorecard(page, card) -> None:
    """`evalsuite score`'s terminal table, as rich exports it to HTML."""
    from rich.console import Console

    from evalsuite.scoring.render import console_table

    console = Console(record=True, width=100, file=io.StringIO())
    console.print(console_table(card))
    page.set_content(console.export_html(inline_styles=True))
    save(page.locator("pre").screenshot(), IMG / "scorecard_human.png")


def save(png: bytes, path: Path) -> None:
    """Written as a 64-colour PNG: text on flat colours loses nothing visible and the file stays small."""
    from PIL import Image

    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=64).save(path, optimize=True)


if __name__ == "__main__":
    main()
