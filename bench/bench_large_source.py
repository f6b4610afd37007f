"""Wall time per build stage and peak memory of the bundled AP suite with one source table grown to N rows.

    .venv/bin/python bench/bench_large_source.py [--rows 1000000] [--table payments] [--repeats 3]

The bundled suite (suites/ap_exceptions) is copied into a temporary folder and its payments export is
grown to --rows rows, as a large ERP export is: payments are the table that grows without bound while
the open exceptions stay few. The extra rows are background rows: payments of invoices that are already
paid, with fresh ids (PAY-B0000001, ...; a prefix no real or tool-assigned id uses), the invoice's
currency, a cent amount and an ISO payment date. They satisfy every quality expectation (unique key,
foreign key into invoices) and pass through de-identification (no personal columns), and they multiply no
task: tasks come from resolved cases, and payments only appear in goal states as a table that must stay
unchanged. So derivation and acceptance do the same work at any N, and the figures measure how the build
carries a large table: reading, quality checks, snapshots, de-identification, the world and its hash.

Each repeat builds in a fresh process and a fresh EVALSUITE_HOME (`evalsuite.pipeline.driver.build`, the
code path of `evalsuite build`), with EVALSUITE_DEID_KEY set to the published demo key. Per stage it
reports the seconds of the stage's run and of its gates, and the process's peak RSS (VmHWM) once the stage
is done (peaks only grow, so the stage where it jumps is the one that needs the memory). The figures are
medians over the repeats; the load average is printed because the machine may be shared. Linux only
(/proc/self/status).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from evalsuite.deid.keys import DEMO_KEY

ROOT = Path(__file__).resolve().parents[1]
SUITE = "ap_exceptions"
KEY = DEMO_KEY


def copy_suite(dest: Path) -> Path:
    """The bundled AP suite in dest, policies pointing back at the project; returns the spec path."""
    shutil.copytree(ROOT / "suites" / SUITE, dest / SUITE)
    raw = yaml.safe_load((ROOT / "suites" / f"{SUITE}.yaml").read_text())
    raw["policies"] = [str((ROOT / "suites" / p).resolve()) for p in raw["policies"]]
    spec = dest / f"{SUITE}.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def grow_payments(source: Path, rows: int, seed: int = 11) -> int:
    """Append background payments of paid invoices until payments.csv has `rows` rows; returns its size in bytes."""
    path = source / "payments.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        have = sum(1 for _ in csv.DictReader(fh))
    extra = rows - have
    if extra > 0:
        invoices = pd.read_csv(source / "invoices.csv", dtype=str, keep_default_na=False)
        paid = invoices[invoices["status"] == "paid"]
        rng = np.random.default_rng(seed)
        pick = rng.integers(0, len(paid), size=extra)
        days = pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 900, size=extra), unit="D")
        cents = rng.integers(1_000, 5_000_000, size=extra)
        frame = pd.DataFrame({
            "payment_id": [f"PAY-B{i:07d}" for i in range(1, extra + 1)],
            "invoice_id": paid["invoice_id"].to_numpy()[pick],
            "amount": [f"{c // 100}.{c % 100:02d}" for c in cents.tolist()],
            "currency": paid["currency"].to_numpy()[pick],
            "paid_on": days.strftime("%Y-%m-%d"),
        })
        frame.to_csv(path, mode="a", header=False, index=False, lineterminator="\n")
    return path.stat().st_size


WORKER = """
import json, resource, sys, time
from evalsuite.pipeline import driver

def peak_kib():
    # VmHWM is this program's own high-water mark; ru_maxrss would also count the parent's memory at fork,
    # which Linux carries across execve.
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))

marks = []  # (stage, seconds into the build when its run ended, when its gates ended, peak RSS KiB then)
start = time.perf_counter()
plain_require = driver.require

def timed_require(stage, spec, paths):
    ran = time.perf_counter() - start
    plain_require(stage, spec, paths)
    marks.append((stage.name, ran, time.perf_counter() - start, peak_kib()))

driver.require = timed_require
built = driver.build(sys.argv[1])
total = time.perf_counter() - start
stages, prev = [], 0.0
for name, ran, judged, peak in marks:
    stages.append({"stage": name, "run_s": ran - prev, "gates_s": judged - ran, "peak_mib": peak / 1024})
    prev = judged
# Worker processes of the trial pool, if any ran: the largest of them.
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"total_s": total, "peak_mib": max(peak_kib(), children) / 1024, "stages": stages,
                  "version": built.version, "accepted": built.accepted, "quarantined": built.quarantined}))
"""


def build_once(spec: Path) -> dict:
    """One full build in a fresh process and home folder; its timings, peak RSS and release."""
    home = Path(tempfile.mkdtemp(prefix="bench-large-home-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSUITE_", "DAGSTER_"))}
    env |= {"EVALSUITE_DEID_KEY": KEY, "EVALSUITE_HOME": str(home)}
    try:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", WORKER, str(spec)], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # The process as a whole, as `time` sees it: interpreter start and imports included.
    out["process_s"] = wall
    return out


def report(runs: list[dict], rows: int, size: int, loads: list[tuple[float, float, float]]) -> None:
    from rich.console import Console
    from rich.table import Table

    med = statistics.median
    table = Table(title=f"build of {SUITE} with payments grown to {rows:,} rows ({size / 2**20:.1f} MiB CSV), "
                        f"medians of {len(runs)}")
    for col in ("stage", "run s", "gates s", "peak RSS after (MiB)"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    for i, stage in enumerate(runs[0]["stages"]):
        per = [r["stages"][i] for r in runs]
        table.add_row(stage["stage"], f"{med(p['run_s'] for p in per):.2f}", f"{med(p['gates_s'] for p in per):.2f}",
                      f"{med(p['peak_mib'] for p in per):,.0f}")
    table.add_row("build (driver.build)", f"{med(r['total_s'] for r in runs):.2f}", "", "", end_section=True)
    table.add_row("process (imports included)", f"{med(r['process_s'] for r in runs):.2f}", "",
                  f"{med(r['peak_mib'] for r in runs):,.0f}")
    console = Console(width=110)
    console.print(table)
    versions = sorted({r["version"] for r in runs})
    console.print(f"release {', '.join(versions)}; tasks accepted {runs[0]['accepted']}, quarantined "
                  f"{runs[0]['quarantined']}; per repeat: "
                  + ", ".join(f"{r['process_s']:.1f} s / {r['peak_mib']:,.0f} MiB" for r in runs))
    console.print("load average (1, 5, 15 min) before each repeat: "
                  + "; ".join(" ".join(f"{x:.2f}" for x in load) for load in loads) + f"; cores: {os.cpu_count()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of payments.csv after growing it")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", metavar="DIR", help="build in DIR (kept) instead of a temporary folder")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-large-"))
    try:
        spec = copy_suite(work)
        size = grow_payments(work / SUITE / "source", args.rows)
        runs, loads = [], []
        for i in range(args.repeats):
            loads.append(os.getloadavg())
            runs.append(build_once(spec))
            print(f"repeat {i + 1}: {runs[-1]['process_s']:.1f} s, peak {runs[-1]['peak_mib']:,.0f} MiB", flush=True)
        report(runs, args.rows, size, loads)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
