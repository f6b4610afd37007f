"""Build the evidence site into a folder: pages from Jinja templates, the data beside them as JSON, plots from
the scorecard's own plot writer, every file checked for leaks before the folder appears (all or nothing)."""
from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from rich.console import Console
from rich.progress import Progress

from evalsuite.core.hashing import file_sha256
from evalsuite.core.io import parse_json, read_text, staged_dir, sweep_staged
from evalsuite.scoring.render import plot_passk, to_markdown, warnings
from evalsuite.site import pages
from evalsuite.site.answers import AnswerKey, answer_keys
from evalsuite.site.inputs import RunSource, Sources, collect, slug
from evalsuite.site.sanitize import (
    Originals,
    SiteError,
    check_folder,
    configured_secrets,
    load_originals,
    suite_work_folder,
)
from evalsuite.tasks.heldout import HELD_OUT
from evalsuite.trials.tracelog import TrialRecord

HERE = Path(__file__).parent
log = logging.getLogger(__name__)
# Pages may load only their own files: no inline script, no request to anything else, no form to submit.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; "
       "form-action 'none'; base-uri 'none'; object-src 'none'; frame-src 'none'")
MARKER = "site.json"  # what tells a folder built by this command from any other folder


@dataclass
class SiteSummary:
    out: Path
    releases: int
    scorecards: int
    traces: int
    files_scanned: int


def build_site(paths: list[Path], out: Path, originals: Mapping[str, Originals] | None = None,
               environ: Mapping[str, str] | None = None, progress: bool = False) -> SiteSummary:
    """Publish releases and runs into out. originals: per suite, the values that must not appear (default: read
    from each release's home, see sanitize.suite_work_folder). The pages are written into a staging folder beside
    out, scanned, and only then renamed into place; a leak raises SiteError and writes nothing, and what a killed
    build left there is swept first (core.io.sweep_staged: not while its build still runs).
    progress: a bar on stderr over the trace pages written and the files scanned."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise SiteError(f"{out}: exists and is not an evidence site; give a new or empty folder")
    for left in sweep_staged(out):  # a killed build's pages: never scanned, so never to be served
        log.warning("removed %s, left by a site build that was stopped before its leak scan", left)
    sources = collect(paths)
    found = dict(originals or {})
    for suite, release_path in _release_paths(sources).items():
        if suite not in found:
            work = suite_work_folder(release_path, suite)
            found[suite] = load_originals(suite, work / "seed", work / "deid.json")
    keys = answer_keys(sources)  # a trial that is an answer stops the build here, before any file is written
    with staged_dir(out) as tmp, Progress(console=Console(stderr=True), disable=not progress) as bar:
        pages_task = bar.add_task("trace pages", total=sum(len(r.records) for r in sources.runs))
        summary = _write(sources, tmp, found, keys, lambda: bar.advance(pages_task))
        scan_task = bar.add_task("leak scan", total=sum(1 for p in tmp.rglob("*") if p.is_file()))
        scanned = check_folder(tmp, found.values(), configured_secrets(environ), lambda: bar.advance(scan_task),
                               answers=[k.values for k in keys.values()])
    return SiteSummary(out=out, files_scanned=scanned, **summary)


def _release_paths(sources: Sources) -> dict[str, Path]:
    """A release folder per suite (where its home, and so its seed, is found)."""
    out = {suite: r.path for (suite, _), r in sources.releases.items()}
    for run in sources.runs:
        out.setdefault(run.card.suite, run.release_path)
    return out


class _Site:
    def __init__(self, root: Path):
        self.root = root
        self.env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]),
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)

    def page(self, rel: str, template: str, **context: Any) -> None:
        depth = rel.count("/")
        html = self.env.get_template(template).render(csp=CSP, root="../" * depth, **context)
        self.text(rel, html)

    def data(self, rel: str, body: Any) -> None:
        self.text(rel, json.dumps(body, ensure_ascii=False, sort_keys=True, default=str))  # compact: the C encoder

    def text(self, rel: str, body: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")  # inside the staged folder: it appears whole or not at all


def _write(sources: Sources, root: Path, originals: Mapping[str, Originals], keys: Mapping[tuple[str, str], AnswerKey],
           tick: Callable[[], None]) -> dict[str, int]:
    site = _Site(root)
    shutil.copytree(HERE / "static", root / "static")
    releases, cards, traces = [], [], 0
    for (suite, version), release in sorted(sources.releases.items()):
        work = suite_work_folder(release.path, suite)
        rights_file = work / "rights.json"
        rights = (parse_json(read_text(rights_file, SiteError), str(rights_file), SiteError)
                  if rights_file.is_file() else None)
        body = pages.release_page(release, keys[suite, version].release_tasks, originals.get(suite), rights)
        name = f"{suite}-{version}"
        site.data(f"data/releases/{name}.json", body)
        site.page(f"releases/{name}.html", "release.html", title=f"Release {suite} {version}", r=body,
                  data_href=f"../data/releases/{name}.json")
        releases.append({"suite": suite, "version": version, "href": f"releases/{name}.html", "tasks": body["n_tasks"]})
    for run in sources.runs:
        traces += _write_run(site, run, sources, keys[run.card.suite, run.card.suite_version], tick)
        cards.append({"suite": run.card.suite, "version": run.card.suite_version, "folder": run.folder.name,
                      "agents": ", ".join(a.agent for a in run.card.agents), "href": f"scorecards/{run.slug}.html"})
    site.page("index.html", "index.html", title="Evidence", releases=releases, cards=cards)
    _manifest(root)
    return {"releases": len(releases), "scorecards": len(cards), "traces": traces}


def _write_run(site: _Site, run: RunSource, sources: Sources, key: AnswerKey, tick: Callable[[], None]) -> int:
    tasks = {t.task_id: t for t in run.tasks}

    def href(r: TrialRecord) -> str:
        return f"../traces/{run.slug}/{slug(r.agent)}/{slug(r.task_id)}-{r.trial}.html"

    card, held_rows = pages.public_scorecard(run, key.release_tasks)
    body = pages.scorecard_page(run, card, held_rows, href)
    release = (f"../releases/{run.card.suite}-{run.card.suite_version}.html"
               if (run.card.suite, run.card.suite_version) in sources.releases else None)
    site.data(f"data/scorecards/{run.slug}.json", card.model_dump(mode="json") | {
        "warnings": warnings(card), "held_out_rows": held_rows})  # what the page says first, and what it counts only
    site.text(f"scorecards/{run.slug}.md", to_markdown(card, held_rows))  # as `evalsuite score` writes it
    plot_passk(card, site.root / "scorecards" / f"{run.slug}.png")
    site.page(f"scorecards/{run.slug}.html", "scorecard.html", title=f"Scorecard {run.card.suite} "
              f"{run.card.suite_version} ({run.folder.name})", s=body, release_href=release, slug=run.slug)
    notes = {(n.task_id, n.trial): n for n in run.recording.notes} if run.recording else {}
    shown = [r for r in run.records if tasks[r.task_id].split != HELD_OUT]
    for _ in range(len(run.records) - len(shown)):
        tick()  # a held-out trial: counted on the bar, never written
    for r in shown:
        tick()
        data = pages.trace_data(r, tasks[r.task_id], key.settings, notes.get((r.task_id, r.trial)))
        if notes and _shows_answer(data, key):  # a recording, not ours to redact: its calls as a summary
            data = pages.trace_data(r, tasks[r.task_id], key.settings, notes.get((r.task_id, r.trial)),
                                    withhold="this recorded trial's replay prints a value of the task's hidden "
                                             "answers")
        rel = href(r).removeprefix("../")
        site.data("data/" + rel.removesuffix(".html") + ".json", data)
        site.page(rel, "trace.html", title=f"Trace {r.task_id} · {r.agent} · trial {r.trial}", t=data,
                  scorecard_href=f"{'../' * 3}scorecards/{run.slug}.html")
    return len(shown)


def _shows_answer(data: dict, key: AnswerKey) -> bool:
    return next(key.values.index.finditer(json.dumps(data, ensure_ascii=False, default=str)), None) is not None


def _manifest(root: Path) -> None:
    """site.json: every file shipped with its sha256, so a copy of the site can be checked file by file."""
    files = {str(p.relative_to(root)): file_sha256(p) for p in sorted(root.rglob("*")) if p.is_file()}
    (root / MARKER).write_text(json.dumps({"generator": "evalsuite site", "files": files}, indent=1, sort_keys=True),
                               encoding="utf-8")


def site_folder(home: Path, suite: str, version: str) -> Path:
    """Where the Dagster graph publishes a release's site: `<home>/sites/<suite>/<version>`."""
    return Path(home) / "sites" / suite / version


def asset_files_digest() -> dict[str, str]:
    """sha256 of every template and static file: part of the site asset's code version beside its modules."""
    return {str(p.relative_to(HERE)): file_sha256(p) for d in ("templates", "static")
            for p in sorted((HERE / d).rglob("*")) if p.is_file()}
