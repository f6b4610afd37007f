"""The evidence site: built from a real release and run, checked in headless chromium, refused when it would leak."""
from __future__ import annotations

import functools
import html
import http.server
import json
import re
import shutil
import threading
from pathlib import Path

import pandas as pd
import pytest
from browser_support import browser_page
from site_support import AGENTS, edit_first, first_noop_task, plant, site_files, solution_of
from suite_support import DEMO_KEY, copy_suite
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages import suite_release as stage_release
from evalsuite.releases.release import Release
from evalsuite.releases.runs import run_release
from evalsuite.scoring.runlog import TRACES
from evalsuite.site.answers import CODE_WORD
from evalsuite.site.build import build_site
from evalsuite.site.inputs import collect
from evalsuite.site.sanitize import SiteError, load_originals
from evalsuite.sourcing.spec import SpecError, load_spec
from evalsuite.trials.tracelog import read_traces


def _serve(folder: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # the test records requests in the browser instead
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_pages_render_a_trace_replays_to_its_verdict_and_nothing_outside_the_site_is_requested(published):
    release, run, site, summary, _ = published
    records = {(r.agent, r.task_id): r for r in read_traces(run / TRACES).records}
    held = {t.task_id for t in release.tasks() if t.split == "held_out"}
    shown = next(r for (a, t), r in records.items() if a == "noop" and r.trace)  # the trial that looked and talked
    ref = records[("reference", shown.task_id)]
    server = _serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    requests, errors = [], []
    try:
        with browser_page(1300, 900) as page:
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + "index.html")
            page.click(f"#releases a:text('{release.manifest.version}')")
            for section in ("Sources and license decision", "De-identification", "Acceptance", "Quarantined tasks",
                            "Policy versions", "Hashes"):
                assert page.locator("h2", has_text=section).count() == 1, section
            assert release.manifest.task_set_sha256 in page.content()
            assert "vendor_master.contact_name (surrogate)" in page.inner_text("#deid ~ ul.cols")
            assert "No reference solution, reference answer or goal state" in page.inner_text("#answers")
            page.goto(base + "index.html")
            page.click("#scorecards a")
            assert page.locator("#passk-table tr").count() == 1 + len(AGENTS)
            assert page.eval_on_selector("#passk-plot", "img => img.complete && img.naturalWidth > 0")
            assert page.locator("#agent-configs tr").count() == 1 + len(AGENTS)
            assert "no simulated user" in page.inner_text("body")
            # the no-op trial replays call by call; the reference's trial (it acts out the answer key on a task
            # whose answers are not published) shows only that it passed, its call count and its checks
            for record, word, mark, steps in ((shown, "failed", "✗ failed", len(shown.trace)), (ref, "passed",
                                                                                               "✓ passed", 0)):
                page.click(f"#trial-list tr:has(td:text-is('{record.agent}')):has(td:text-is('{record.task_id}')) a")
                # the step buttons answer once replay.js has run (its last act names the start); a click before
                # that, on a loaded machine, would be lost
                page.wait_for_selector("#position:text-is('start: the task as the agent received it')")
                assert page.locator("#verdict").is_hidden()
                clicks = 0
                while page.locator("#verdict").is_hidden():
                    page.click("#next")
                    clicks += 1
                    assert clicks <= len(record.trace) + 2
                assert clicks == steps + 2  # every tool call shown, the final message (or what was withheld), verdict
                verdict = page.locator("#verdict")
                assert f"Verdict: {word}" in verdict.inner_text()
                assert verdict.locator("tr").count() == 1 + len(record.verdict.checks)
                assert verdict.locator("td.check-result", has_text=mark).count() >= 1
                shown_tools = page.locator("#steps > li.step > .head > .tool").all_inner_texts()
                assert [t.split(" ")[0] for t in shown_tools] == [e.tool for e in record.trace][:steps]
                if record is shown:  # the user's message reads as what the user said
                    said = page.inner_text("#steps > li.actor-user .user-message")
                    assert said == "Please confirm the hold before noon."
                else:
                    assert f"{len(ref.trace)} call(s) and the final message withheld" in page.inner_text("#steps")
                    assert ref.final_message not in page.content()
                page.go_back()
            row = f"#trial-list tr:has(td:text-is('reference')):has(td:text-is('{ref.task_id}')) a"
            page.goto((site / page.get_attribute(row, "href").removeprefix("../")).as_uri())
            page.click("#all")  # the same replay opened from the disk, as a downloaded copy of the site is
            assert "Verdict: passed" in page.inner_text("#verdict")
        assert not errors, errors  # a CSP violation or a script error would show here
        outside = [u for u in requests if not (u.startswith(base) or u.startswith(site.as_uri() + "/"))]
        assert requests and not outside, outside
    finally:
        server.shutdown()
    assert summary.traces == len([r for r in records.values() if r.task_id not in held])


def test_every_page_is_static_and_locked_to_its_own_files(published):
    _, _, site, _, _ = published
    files = site_files(site)
    pages = [f for f in files if f.endswith(".html")]
    assert len(pages) > 3
    for name in pages:
        head = html.unescape(files[name].split("</head>")[0])
        assert '<meta http-equiv="Content-Security-Policy" content="default-src \'self\';' in head, name
        assert "connect-src 'none'" in head and "form-action 'none'" in head, name
    for name, text in files.items():
        if name.endswith((".json", ".md")):
            continue  # data, never loaded as markup or code
        for forbidden in ("<form", "fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon", "import(",
                          'src="http', 'href="http', "url(", "<iframe", "<object", "<embed"):
            assert forbidden not in text, (name, forbidden)


def test_held_out_tasks_are_counted_and_never_shown(published):
    release, _, site, _, _ = published
    tasks = release.tasks()
    held = [t for t in tasks if t.split == "held_out"]
    shown = [t for t in tasks if t.split != "held_out"]
    assert held and shown
    text = "\n".join(site_files(site).values())
    names = "\n".join(str(p) for p in site.rglob("*"))
    for t in held:
        assert t.task_id not in text and t.task_id not in names
        assert t.trigger.text not in text
        assert t.provenance.source_record not in text
    assert all(t.task_id in text for t in shown)
    release_page = next(site.glob("releases/*.html")).read_text()
    assert f"The {len(held)} held-out task(s) are counted only" in release_page
    log = [json.loads(line) for line in (site.parent / "reader" / "access_log.jsonl").read_text().splitlines()]
    reads = [sorted(e["held_out_tasks"]) for e in log if e["purpose"] == "publication"]
    assert reads == [sorted(t.task_id for t in held)] * 2  # the release's tasks, and the run's copy of them


def _original(home: Path, table: str, column: str) -> str:
    values = pd.read_parquet(home / "suites" / "ap_exceptions" / "seed" / f"{table}.parquet")[column].dropna()
    return next(v for v in values if len(str(v)) >= 6)


def test_an_original_personal_value_stops_the_build_and_keeps_the_old_site(published, tmp_path):
    release, run, site, _, home = published
    old = tmp_path / "site"
    shutil.copytree(site, old)
    before = (old / "site.json").read_bytes()
    leaky = tmp_path / "run"
    shutil.copytree(run, leaky)
    name = _original(home, "vendor_master", "contact_name")
    plant(leaky, name)
    result = CliRunner().invoke(app, ["site", str(release.path), str(leaky), "--out", str(old)])
    assert result.exit_code == 2
    line = result.output.strip()
    assert len(line.splitlines()) == 1
    assert line.startswith("error: data/traces/") or line.startswith("error: traces/")
    assert "vendor_master.contact_name" in line and name not in line
    assert (old / "site.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "site"]  # no staged folder left behind


def test_a_configured_secret_stops_the_build_and_writes_nothing(published, tmp_path, monkeypatch):
    release, run, _, _, _ = published
    leaky = tmp_path / "run"
    shutil.copytree(run, leaky)
    plant(leaky, "sk-live-7f3a9c2e11d04b")
    monkeypatch.setenv("ACME_API_TOKEN", "sk-live-7f3a9c2e11d04b")
    with pytest.raises(SiteError, match=r"^\S+: holds the value of the configured secret ACME_API_TOKEN;"):
        build_site([release.path, leaky], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    monkeypatch.delenv("ACME_API_TOKEN")
    assert build_site([leaky], tmp_path / "out").traces > 0  # the same folder publishes once no secret is in it


def test_bad_inputs_are_one_line_and_exit_2(published, tmp_path):
    release, run, _, _, _ = published
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    cases = [([str(tmp_path / "notes"), "--out", str(tmp_path / "a")], "neither a release folder"),
             ([str(run), "--out", str(tmp_path / "notes")], "exists and is not an evidence site")]
    for args, expected in cases:
        result = CliRunner().invoke(app, ["site", *args])
        assert result.exit_code == 2 and expected in result.output and len(result.output.strip().splitlines()) == 1
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"


def test_two_runs_of_one_name_get_pages_of_their_own(published, tmp_path):
    _, run, _, _, _ = published
    for side in ("a", "b"):
        shutil.copytree(run, tmp_path / side / "run")
    found = collect([tmp_path / "a" / "run", tmp_path / "b" / "run", tmp_path / "a" / "run"])
    assert len(found.runs) == 2 and len({r.slug for r in found.runs}) == 2


def test_a_suite_without_de_identification_has_no_originals_and_a_broken_record_is_one_line(tmp_path):
    (tmp_path / "deid.json").write_text(json.dumps({"sha256": "x", "provenance": None}))
    assert len(load_originals("tau2_retail", tmp_path / "seed", tmp_path / "deid.json").index) == 0
    (tmp_path / "deid.json").write_text(json.dumps({"provenance": {"method": "m", "counts": [{"table": "t"}]}}))
    with pytest.raises(SiteError, match=r"deid.json: provenance.counts: not the per-column record"):
        load_originals("s", tmp_path / "seed", tmp_path / "deid.json")
    with pytest.raises(SiteError, match=r"nope.json: no de-identification record for suite s"):
        load_originals("s", tmp_path / "seed", tmp_path / "nope.json")


def _goal_values(task) -> set[str]:
    """The values a task's goal state expects and its reference solution passes, as text."""
    goal = task.goal_state
    values = [v for a in goal.assertions + goal.user_assertions for v in a.expect.values()]
    values += [o.value for o in goal.required_outputs]
    values += [v for c in task.solution_calls() for v in c.arguments.values()]
    return {str(v) for v in values if v is not None and not isinstance(v, bool)}


def test_no_page_holds_a_reference_solution_answer_or_goal_value_of_a_task_it_does_not_publish(published):
    """The demo's site (reference, no-op, adversary; no `site:` setting): not one task's answers, test or train."""
    release, run, site, _, _ = published
    tasks = {t.task_id: t for t in release.tasks()}
    records = {(r.agent, r.task_id, r.trial): r for r in read_traces(run / TRACES).records}
    text = "\n".join(site_files(site).values())
    assert not [t.task_id for t in tasks.values() if t.reference_answer in text]
    pages = sorted((site / "data" / "traces").rglob("*.json"))
    assert {json.loads(p.read_text())["task"]["split"] for p in pages} == {"test", "train"}
    for path in pages:
        data = json.loads(path.read_text())
        task, agent = tasks[data["task"]["task_id"]], data["trial"]["agent"]
        solution = [{"tool": c.tool, "arguments": c.arguments} for c in task.solution_calls()]
        assert [{"tool": s["tool"], "arguments": s["arguments"]} for s in data["steps"]] != solution, path
        if agent != "noop":  # the baselines that act out the answer key: outcome, call count and checks only
            record = records[(agent, task.task_id, data["trial"]["trial"])]
            assert data["steps"] == [] and data["final_message"] is None and data["calls"] == len(record.trace)
            assert [c["name"] for c in data["verdict"]["checks"]] and data["verdict"]["passed"] == record.passed
        page = path.read_text() + (site / str(path.relative_to(site / "data")).replace(".json", ".html")).read_text()
        public = f"{task.trigger.text} {task.category}".lower()
        for value in _goal_values(task):
            if value.lower() not in public:  # a value the trigger or the category spells out is the task itself
                assert not re.search(rf"(?<!\w){re.escape(value)}(?!\w)", page, re.I), (path.name, value)


@pytest.mark.parametrize("plant, why", [
    ("calls", "this trial's writes reproduce the reference solution's effects"),
    ("answer", "this trial's final message carries the reference answer or a required output"),
])
def test_any_agents_trial_that_reproduces_an_answer_is_published_as_a_summary(published, tmp_path, plant, why):
    """A good agent's trial can be the reference solution call for call: its page says that it passed, its call
    count and its checks, as the reference baseline's does, and never the calls or the answer."""
    release, run, _, _, _ = published
    leaky = tmp_path / "run"
    shutil.copytree(run, leaky)
    task = first_noop_task(leaky)
    edits = {"calls": lambda r: r.update(trace=solution_of(leaky, task.task_id)),
             "answer": lambda r: r.update(final_message=task.reference_answer)}
    edit_first(leaky, "noop", edits[plant])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["site", str(release.path), str(leaky), "--out", str(out)])
    assert result.exit_code == 0, result.output
    pages = {p: html.unescape(p.read_text()) for p in out.rglob("*") if p.suffix in (".html", ".json")}
    noop = [text for p, text in pages.items() if why in text]
    assert len(noop) == 1 and "only that it" in noop[0]
    for call in task.solution_calls():
        for value in call.arguments.values():
            if isinstance(value, str) and len(value) >= 12 and not CODE_WORD.fullmatch(value):  # not public vocabulary
                assert not any(value in text for text in pages.values()), value
    assert not any(task.reference_answer in text for text in pages.values())


@pytest.mark.parametrize("plant, expected", [
    ("other_body", "holds an argument of the reference solution of task {other} (test), suite ap_exceptions: an "
                   "answer no public page may show"),
    ("held_out_answer", "holds the reference answer of a held-out task, suite ap_exceptions: an answer no public"),
])
def test_a_page_that_would_publish_an_answer_stops_the_build_and_writes_nothing(published, tmp_path, plant, expected):
    """Any agent's trial, not only the reference's: here the no-op's, planted with what a leaking agent records."""
    release, run, _, _, _ = published
    leaky = tmp_path / "run"
    shutil.copytree(run, leaky)
    task = first_noop_task(leaky)
    tasks = release.tasks()
    other = next(t for t in tasks if t.split == "test" and t.task_id != task.task_id
                 and any(c.tool == "message_vendor" for c in t.solution_calls()))
    body = next(c.arguments["body"] for c in other.solution_calls() if c.tool == "message_vendor")
    held = next(t for t in tasks if t.split == "held_out")
    edits = {"other_body": lambda r: r.update(final_message=f"I wrote to the vendor: {body}"),
             "held_out_answer": lambda r: r.update(final_message=f"Like the other one: {held.reference_answer}")}
    edit_first(leaky, "noop", edits[plant])
    result = CliRunner().invoke(app, ["site", str(release.path), str(leaky), "--out", str(tmp_path / "out")])
    line = result.output.strip()
    assert result.exit_code == 2 and len(line.splitlines()) == 1, result.output
    assert expected.format(other=other.task_id) in line and line.endswith("nothing was written")
    assert held.task_id not in line and held.reference_answer not in line and body not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no site folder, no staged folder


def test_short_or_public_goal_values_do_not_block(published, tmp_path):
    """Values under MIN_ANSWER_CHARS (0, true, USD, open, 13.38), code words (on_hold, price_variance: the domain's
    vocabulary, which tool outputs print on any honest trace) and what the world's rows hold (PO-7000) are on pages by
    chance and publish nothing; each is a goal or solution value of some scored task."""
    release, run, _, _, _ = published
    leaky = tmp_path / "run"
    shutil.copytree(run, leaky)
    plant(leaky, "0, 1, true, USD, EUR, open, buyer, on_hold, price_variance, ap_manager, hold_invoice, PO-7000, "
                  "INV-40000, VEN-d9cc63c81f, 13.38")
    assert build_site([release.path, leaky], tmp_path / "out").traces > 0


def test_train_answers_are_published_only_when_the_suite_spec_says_so(published, tmp_path):
    release, _, site, _, home = published
    default = {t.task_id: t for t in release.tasks() if t.split == "train"}
    for path in (site / "data" / "traces").glob("*/reference/*.json"):
        data = json.loads(path.read_text())
        assert data["steps"] == [] and data["withheld"]  # train too: the spec has no `site:` setting
    with pytest.raises(SpecError, match="site"):
        load_spec(_spec_with(tmp_path / "bad", "site: {show_train_answers: perhaps}\n"))
    with pytest.raises(SpecError, match="site"):
        load_spec(_spec_with(tmp_path / "bad2", "site: {show_answers: true}\n"))
    spec = load_spec(_spec_with(tmp_path / "suite", "site: {show_train_answers: true}\n"))
    assert spec.site.show_train_answers
    shutil.copytree(home, tmp_path / "home")
    shown = Release(stage_release.release(spec, Paths(spec, tmp_path / "home")))
    assert shown.manifest.site.show_train_answers and shown.manifest.version != release.manifest.version
    assert shown.manifest.task_set_sha256 == release.manifest.task_set_sha256  # the same tasks, published further
    out = tmp_path / "site"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
        run_release(shown, ["reference"], tmp_path / "run", trials=1)
        build_site([tmp_path / "run"], out)
    splits = {}
    for path in (out / "data" / "traces").glob("*/reference/*.json"):
        data = json.loads(path.read_text())
        splits.setdefault(data["task"]["split"], []).append(data)
    assert splits["train"] and splits["test"]
    for data in splits["train"]:
        task = default[data["task"]["task_id"]]
        assert [s["tool"] for s in data["steps"]] == [c.tool for c in task.solution_calls()]
        assert data["final_message"] == task.reference_answer and data["withheld"] is None
    assert all(d["steps"] == [] and d["final_message"] is None for d in splits["test"])
    assert "site: {show_train_answers: true}" in html.unescape(next(out.glob("releases/*.html")).read_text())


def _spec_with(dest: Path, line: str) -> Path:
    """A copy of the bundled suite, as the session's build has it, with one line added to its spec."""
    path = copy_suite(dest)
    path.write_text(path.read_text() + line)
    return path
