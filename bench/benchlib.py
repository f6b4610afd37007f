"""What every `make bench` script shares: the `--json PATH` convention, medians with min and max, the load average.

The convention (bench/run_all.py runs every bench/bench_*.py that follows it):

- the script accepts `--json PATH` and, when given, writes one result document there (`Result.write`);
- its defaults are what `make bench` runs, sized to keep the whole run within about 15 minutes on 2 cores;
- a figure is a row: what was measured, its unit, the median over repeats with min and max and the number of
  samples, and where the issue sets one, the target and whether it was met (with a note saying by how much).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser carrying the convention's `--json PATH`."""
    ap = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0] if doc else None)
    ap.add_argument("--json", type=Path, help="write the result document here (bench/run_all.py reads it)")
    return ap


def summary(samples: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "n": len(samples)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(wall milliseconds, result) of one call."""
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000, out


def timed_cpu(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall ms, this thread's CPU ms, result) of one call: on a shared machine the wall time swells with the
    load, the CPU time is the work itself."""
    cpu, start = time.thread_time(), time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000, (time.thread_time() - cpu) * 1000, out


class Result:
    """One script's figures and the conditions they were measured under."""

    def __init__(self, name: str, command: str):
        self.doc: dict[str, Any] = {
            "name": name, "command": command, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "sqlite": sqlite3.sqlite_version},
            "load_average_before": list(os.getloadavg()), "rows": [], "notes": []}

    def add(self, what: str, samples: Sequence[float], unit: str, *, target: str | None = None,
            met: bool | None = None, note: str = "") -> dict[str, Any]:
        row = {"what": what, "unit": unit, **summary(samples), "target": target, "met": met, "note": note}
        self.doc["rows"].append(row)
        return row

    def note(self, text: str) -> None:
        self.doc["notes"].append(text)

    def write(self, path: Path | None) -> None:
        """Print the table; write the document when `--json` was given."""
        self.doc["load_average_after"] = list(os.getloadavg())
        print(f"{self.doc['name']}: load average {self.doc['load_average_before'][0]:.2f} -> "
              f"{self.doc['load_average_after'][0]:.2f} on {os.cpu_count()} CPUs")
        for r in self.doc["rows"]:
            verdict = "" if r["met"] is None else ("  met" if r["met"] else "  MISSED")
            target = f"  target {r['target']}" if r["target"] else ""
            print(f"  {r['what']:60} {fmt(r['median'])} {r['unit']} (min {fmt(r['min'])}, max {fmt(r['max'])}, "
                  f"n={r['n']}){target}{verdict}")
        for text in self.doc["notes"]:
            print(f"  note: {text}")
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.doc, indent=1) + "\n")


def fmt(x: float) -> str:
    """Three significant figures, no exponent for ordinary magnitudes."""
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def command_line() -> str:
    """The command that reproduces this run, without the `--json` destination."""
    args, skip = [], False
    for a in sys.argv:
        if skip or a.startswith("--json"):
            skip = a == "--json" and not skip
            continue
        args.append(a)
    root = str(Path(__file__).resolve().parents[1]) + "/"
    return " ".join([".venv/bin/python", *(a.replace(root, "") for a in args)])


def require_redis(bench: str) -> None:
    """Exit 2 naming it when no Redis answers on 127.0.0.1:6379 (the Celery benches' broker)."""
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError as exc:
        raise SystemExit(f"error: no Redis on 127.0.0.1:6379 ({exc}); {bench} needs it as the Celery broker") from None
