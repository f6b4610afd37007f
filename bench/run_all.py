"""`make bench`: run every benchmark that follows the convention, write bench/results.json and the docs' table.

    .venv/bin/python bench/run_all.py [--only NAME,...] [--timeout 900] [--no-page]

A benchmark follows the convention (bench/benchlib.py) when it is a bench/bench_*.py that takes `--json PATH`
(declares the option, or builds its parser with `benchlib.parser`) and writes its result document there. Each
runs in its own process with its defaults, one after another (two at once would measure each other). A script
that fails or times out is recorded with the tail of its output, the others still run, and the exit status is 1.
The table goes between the `bench:table` markers of the scaling page of the docs (docs/scaling/index.md): first
every figure with a target (met or missed, by how much), then all figures.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import benchlib
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results.json"
PAGE = ROOT / "docs" / "scaling" / "index.md"  # the docs' scaling page holds the table
START, END = "<!-- bench:table:start -->", "<!-- bench:table:end -->"
FULL_RUN = ("finished", "total_seconds", "load_average_before", "load_average_after")  # of the last whole run


def discover() -> tuple[list[Path], dict[str, str]]:
    """(scripts following the convention, {skipped script: why})."""
    run, skipped = [], {}
    for path in sorted(BENCH.glob("bench_*.py")):
        text = path.read_text(encoding="utf-8")
        if "benchlib.parser(" in text or re.search(r"""["']--json["']""", text):
            run.append(path)
        else:
            skipped[path.name] = "takes no --json (not part of make bench)"
    return run, skipped


def run_one(path: Path, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-json-") as tmp:
        out = Path(tmp) / "result.json"
        start = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, str(path), "--json", str(out)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            return {"seconds": time.perf_counter() - start, "returncode": None,
                    "error": f"timed out after {timeout:.0f} s", "output_tail": _tail(exc.stdout, exc.stderr)}
        entry: dict[str, Any] = {"seconds": time.perf_counter() - start, "returncode": proc.returncode}
        if proc.returncode != 0 or not out.is_file():
            entry.update(error=f"exit status {proc.returncode}" + ("" if out.is_file() else ", no result written"),
                         output_tail=_tail(proc.stdout, proc.stderr))
        else:
            entry["result"] = json.loads(out.read_text())
        return entry


def _tail(*texts: Any) -> str:
    joined = "\n".join(t.decode() if isinstance(t, bytes) else (t or "") for t in texts)
    return joined[-3000:]


def _cell(row: dict[str, Any]) -> tuple[str, str]:
    f = benchlib.fmt
    spread = f"{f(row['min'])}–{f(row['max'])}" if row["n"] > 1 else "one sample"
    return f"{f(row['median'])} {row['unit']}", spread


def table(results: dict[str, Any]) -> str:
    """The Markdown the scaling page shows: targets first, then every figure, each with its command and load."""
    targets, everything = [], []
    for name, entry in results["scripts"].items():
        doc = entry.get("result")
        if doc is None:
            everything.append(f"| {name} | **failed: {entry['error']}** | | | |")
            continue
        load = f"{doc['load_average_before'][0]:.1f}→{doc['load_average_after'][0]:.1f}"
        for row in doc["rows"]:
            median, spread = _cell(row)
            note = row["note"]
            everything.append(f"| {row['what']} | {median} | {spread} | {load} | {note} |")
            if row["target"]:
                verdict = "met" if row["met"] else "**missed**"
                targets.append(f"| {row['what']} | {median} | {spread} | {row['target']} | {verdict} | {note} |")
    commands = "\n".join(f"- `{e['result']['command']}` ({e['seconds']:.0f} s)" for e in results["scripts"].values()
                         if e.get("result"))
    skipped = "; ".join(f"`{k}` {v}" for k, v in results["skipped"].items())
    full = results.get("full_run") or {k: results[k] for k in FULL_RUN}
    reruns = "".join(f" Rerun since with `--only` on {r['finished']} (load {r['load_average_before'][0]:.1f}): "
                     f"{', '.join(r['scripts'])}." for r in results.get("reruns", []))
    return "\n".join([
        f"Measured by `make bench` on {full['finished']} in {full['total_seconds'] / 60:.1f} min; "
        f"{results['machine']['cpus']} CPUs, 1-minute load average {full['load_average_before'][0]:.1f} "
        f"before and {full['load_average_after'][0]:.1f} after (the machine is shared: wall times grow with "
        f"the load, CPU-time rows do not).{reruns} Medians with min–max over the samples named in "
        "`bench/results.json`.",
        "", "| what | median | min–max | target | verdict | note |", "|---|---:|---|---|---|---|", *targets,
        "", "<details markdown><summary>Every figure</summary>", "",
        "| what | median | min–max | load | note |", "|---|---:|---|---|---|", *everything, "", "</details>", "",
        "Reproduce one figure with its script:", "", commands, "", f"Not run: {skipped}." if skipped else ""])


def write_page(markdown: str) -> None:
    text = PAGE.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1:
        raise SystemExit(f"{PAGE}: expected one {START} and one {END} marker")
    head, rest = text.split(START)
    _, tail = rest.split(END)
    PAGE.write_text(f"{head}{START}\n{markdown}\n{END}{tail}", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated script names (bench_trial,...): rerun these, keep the rest")
    ap.add_argument("--timeout", type=float, default=1500, help="seconds per script")
    ap.add_argument("--no-page", action="store_true", help="write bench/results.json only, not the docs' table")
    args = ap.parse_args()
    scripts, skipped = discover()
    if args.only:
        wanted = {n.removesuffix(".py") for n in args.only.split(",")}
        scripts = [p for p in scripts if p.stem in wanted]
    started = time.perf_counter()
    results: dict[str, Any] = {
        "command": "make bench", "machine": benchlib.Result("", "").doc["machine"],
        "load_average_before": list(os.getloadavg()), "scripts": {}, "skipped": skipped}
    if args.only and RESULTS.is_file():  # a partial run replaces only its scripts' entries and says so
        previous = json.loads(RESULTS.read_text(encoding="utf-8"))
        results["scripts"] = previous["scripts"]
        results["full_run"] = previous.get("full_run") or {k: previous[k] for k in FULL_RUN}
        results["reruns"] = previous.get("reruns", [])
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn()) as progress:
        bar = progress.add_task("bench", total=len(scripts))
        for path in scripts:
            progress.update(bar, description=f"bench: {path.name}")
            entry = results["scripts"][path.stem] = run_one(path, args.timeout)
            if "error" in entry:
                progress.console.print(f"[red]{path.name} failed: {entry['error']}[/red]\n{entry['output_tail']}")
            progress.advance(bar)
    results["load_average_after"] = list(os.getloadavg())
    results["total_seconds"] = time.perf_counter() - started
    results["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.only:
        results["reruns"].append({"scripts": [p.stem for p in scripts], "finished": results["finished"],
                                  "load_average_before": results["load_average_before"]})
    else:
        results["full_run"] = {k: results[k] for k in FULL_RUN}
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    markdown = table(results)
    if not args.no_page:
        write_page(markdown)
    print(markdown)
    return 1 if any("error" in e for e in results["scripts"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
