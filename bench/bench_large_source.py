"""Wall time per build stage and peak memory of the bundled AP suite with one source table grown to N rows.

    .venv/bin/python bench/bench_large_source.py [--rows 1000000] [--repeats 3] [--keep DIR] [--json PATH]

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
is done (peaks only grow, so the stage where it jumps is the one that needs the memory).

Beside each build, in a fresh process of its own, runs the floor (`floor_worker`): pyarrow reads every source
CSV, the ruled columns are de-identified by bench_deid.py's floor (the same pseudonyms and surrogates, free text
scrubbed by the library's scrub; a digest of the de-identified columns must equal the build's), and every table
is loaded into a SQLite file with its primary key: read + de-identify + load, nothing else. The ratios are the
build's process CPU time (user + system, imports included), wall time and peak RSS over the floor's, medians of
the per-repeat ratios; the two run in turn so a shared machine's load weighs on both. The load average is
printed because the machine may be shared. Linux only (/proc/self/status).

`make bench` runs the defaults (1M rows, 3 repeats: about 2 minutes on 2 cores) and reads the `--json` document
(bench/benchlib.py): both CPU times, the CPU ratio against its target of at most 3x the floor, the peak RSS ratio
against under 4x, and the wall time of each stage (its run and its gates).
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
import numpy as np
import pandas as pd
import yaml

from evalsuite.deid.keys import DEMO_KEY

ROOT = Path(__file__).resolve().parents[1]
SUITE = "ap_exceptions"
KEY = DEMO_KEY
CPU_TARGET, RSS_TARGET = 3.0, 4.0  # issue 41: CPU at most 3x the floor's, peak RSS under 4x


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


def peak_kib() -> int:
    """This process's own high-water mark (VmHWM); ru_maxrss would also count the parent's memory at fork, which
    Linux carries across execve."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))


def cpu_seconds() -> float:
    """User + system CPU of this process and of the children it waited for (a trial pool's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def build_worker(spec_path: str) -> dict:
    """The full build (`evalsuite build`'s code path), timed per stage; the digest of what de-identification made."""
    from evalsuite.pipeline import driver
    from evalsuite.pipeline.paths import Paths
    from evalsuite.sourcing.spec import load_spec

    marks = []  # (stage, seconds into the build when its run ended, when its gates ended, peak RSS KiB then)
    start, plain_require = time.perf_counter(), driver.require

    def timed_require(stage, spec, paths):
        ran = time.perf_counter() - start
        plain_require(stage, spec, paths)
        marks.append((stage.name, ran, time.perf_counter() - start, peak_kib()))

    driver.require = timed_require
    built = driver.build(spec_path)
    total, cpu, peak = time.perf_counter() - start, cpu_seconds(), peak_kib()
    stages, prev = [], 0.0
    for name, ran, judged, at in marks:
        stages.append({"stage": name, "run_s": ran - prev, "gates_s": judged - ran, "peak_mib": at / 1024})
        prev = judged
    # Worker processes of the trial pool, if any ran: the largest of them.
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    deid = Paths(load_spec(spec_path)).deid
    made = {p.stem: pd.read_parquet(p) for p in deid.glob("*.parquet")}
    return {"total_s": total, "cpu_s": cpu, "peak_mib": max(peak, children) / 1024, "stages": stages,
            "version": built.version, "accepted": built.accepted, "quarantined": built.quarantined,
            "digest": deid_digest(made, ruled_columns(Path(spec_path)))}


def ruled_columns(spec: Path) -> dict[str, list[str]]:
    """The columns de-identification rewrites (keyed rules and free text), by table."""
    rules = yaml.safe_load((spec.parent / SUITE / "deid.yaml").read_text())["tables"]
    return {t: sorted([*r.get("columns", {}), *r.get("free_text", [])]) for t, r in sorted(rules.items())}


def deid_digest(tables: dict[str, pd.DataFrame], ruled: dict[str, list[str]]) -> str:
    """sha256 of the de-identified columns' values in row order: equal digests, the same de-identification."""
    h = hashlib.sha256()
    for table, columns in ruled.items():
        for column in columns:
            h.update(f"{table}.{column}\x1e".encode())
            h.update("\x1f".join(map(str, tables[table][column].tolist())).encode())
    return h.hexdigest()


def floor_worker(spec_path: str) -> dict:
    """The floor: pyarrow reads every source CSV (text as delivered), the ruled columns are de-identified as
    bench_deid's floor does (the same pseudonyms and surrogates, free text scrubbed by evalsuite.deid.text.scrub),
    and every table is loaded into a SQLite file with its primary key. No checks, snapshots, hashes or tasks."""
    import sqlite3

    import pyarrow as pa
    import pyarrow.csv as pa_csv
    from bench_deid import floor_columns

    from evalsuite.core.pii import ValueIndex
    from evalsuite.deid.text import scrub

    start, spec = time.perf_counter(), Path(spec_path)
    raw = yaml.safe_load(spec.read_text())
    deid = yaml.safe_load((spec.parent / SUITE / "deid.yaml").read_text())["tables"]
    keys = yaml.safe_load((spec.parent / SUITE / "quality.yaml").read_text())
    tables: dict[str, pa.Table] = {}
    for name, src in raw["sources"]["tables"].items():
        path = spec.parent / src["path"]
        with open(path, newline="", encoding="utf-8") as fh:
            header = next(csv.reader(fh))
        tables[name] = pa_csv.read_csv(path, convert_options=pa_csv.ConvertOptions(  # as the build reads it
            column_types={c: pa.string() for c in header}, strings_can_be_null=True, null_values=[""],
            quoted_strings_can_be_null=True))
    frames = {n: tables[n].to_pandas() for n in deid}  # only the small ruled tables become pandas
    kinds = {t: {c: ("pseudonym", r["prefix"], r["length"]) if r["rule"] == "pseudonym" else ("surrogate", r["kind"])
                 for c, r in rules.get("columns", {}).items()} for t, rules in deid.items()}
    new = floor_columns(frames, kinds, KEY)
    index = ValueIndex(disguised=True)  # originals -> their stand-ins, for the free text, as deidentify keeps them
    for t, columns in sorted(new.items()):
        for c in sorted(columns):
            for old, made in dict(zip(frames[t][c], new[t][c])).items():
                if isinstance(old, str):
                    index.add(old, made, f"{t}.{c}")
    index.freeze()
    for t, rules in deid.items():
        for c in rules.get("free_text", []):
            codes, uniques = pd.factorize(frames[t][c])
            new.setdefault(t, {})[c] = np.array([scrub(u, index)[0] for u in uniques] + [None], dtype=object)[codes]
    for t, columns in new.items():
        tables[t] = pa.Table.from_pandas(frames[t].assign(**columns), preserve_index=False)
    digest = deid_digest({t: tables[t].to_pandas() for t in deid}, ruled_columns(spec))
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        db = sqlite3.connect(Path(tmp) / "world.sqlite")
        for name, table in tables.items():
            pk = ", ".join(keys.get(name, {}).get("primary_key", []))
            db.execute(f"CREATE TABLE {name} ({', '.join(table.column_names)}{f', PRIMARY KEY ({pk})' if pk else ''})")
            insert = f"INSERT INTO {name} VALUES ({', '.join('?' * table.num_columns)})"
            for batch in table.to_batches(50_000):
                db.executemany(insert, zip(*(column.to_pylist() for column in batch.columns)))
        db.commit()
        db.close()
    return {"total_s": time.perf_counter() - start, "cpu_s": cpu_seconds(), "peak_mib": peak_kib() / 1024,
            "digest": digest}


def run_once(spec: Path, floor: bool) -> dict:
    """One build (or the floor's run) in a fresh process and home folder; its timings, CPU and peak RSS."""
    home = Path(tempfile.mkdtemp(prefix="bench-large-home-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSUITE_", "DAGSTER_"))}
    env |= {"EVALSUITE_DEID_KEY": KEY, "EVALSUITE_HOME": str(home)}
    try:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--floor-worker" if floor else "--worker", str(spec)],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"{'floor' if floor else 'build'} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n"
                         f"{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # The process as a whole, as `time` sees it: interpreter start and imports included.
    out["process_s"] = wall
    return out


def report(runs: list[dict], floors: list[dict], rows: int, size: int, loads: list[tuple]) -> None:
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
                  f"{runs[0]['quarantined']}")
    side = Table(title="the build beside its floor (read + de-identify + SQLite load), each a fresh process")
    for col in ("", "build", "floor", "ratio", "target"):
        side.add_column(col, justify="left" if not col else "right")
    for what, key, target in (("CPU s (process)", "cpu_s", f"≤ {CPU_TARGET:g}×"), ("wall s (process)", "process_s", ""),
                              ("peak RSS MiB", "peak_mib", f"< {RSS_TARGET:g}×")):
        ratio = med(r[key] / f[key] for r, f in zip(runs, floors))
        verdict = target and f"{target}: {'met' if met(key, ratio) else 'MISSED'}"
        side.add_row(what, f"{med(r[key] for r in runs):,.1f}", f"{med(f[key] for f in floors):,.1f}",
                     f"{ratio:.2f}×", verdict)
    console.print(side)
    console.print("per repeat (build | floor): " + "; ".join(
        f"{r['cpu_s']:.1f} s CPU, {r['process_s']:.1f} s, {r['peak_mib']:,.0f} MiB | "
        f"{f['cpu_s']:.1f} s CPU, {f['process_s']:.1f} s, {f['peak_mib']:,.0f} MiB" for r, f in zip(runs, floors)))
    console.print("load average (1, 5, 15 min) before each repeat: "
                  + "; ".join(" ".join(f"{x:.2f}" for x in load) for load in loads) + f"; cores: {os.cpu_count()}")


def met(key: str, ratio: float) -> bool:
    return ratio <= CPU_TARGET if key == "cpu_s" else ratio < RSS_TARGET


def result(res: benchlib.Result, runs: list[dict], floors: list[dict], rows: int) -> benchlib.Result:
    """The make-bench document (begun before the runs, so its load average before is theirs): CPU and peak RSS of
    the build and its floor, their ratios against the issue's targets, and each stage's wall time."""
    what = f"build of the AP suite, payments grown to {rows:,} rows"
    ratio = {k: [r[k] / f[k] for r, f in zip(runs, floors)] for k in ("cpu_s", "peak_mib")}
    cpu, rss = statistics.median(ratio["cpu_s"]), statistics.median(ratio["peak_mib"])
    res.add(f"{what}: CPU s (process, imports included)", [r["cpu_s"] for r in runs], "s")
    res.add(f"{what}: the floor's CPU s (read + de-identify + SQLite load)", [f["cpu_s"] for f in floors], "s")
    over = statistics.median(r["cpu_s"] - CPU_TARGET * f["cpu_s"] for r, f in zip(runs, floors))
    res.add(f"{what}: CPU / the floor's", ratio["cpu_s"], "×", target=f"≤ {CPU_TARGET:g}× the floor",
            met=met("cpu_s", cpu), note=f"{'met' if met('cpu_s', cpu) else 'missed'} by {abs(over):.1f} s of CPU "
                                        f"{'under' if over <= 0 else 'over'} {CPU_TARGET:g}× the floor")
    res.add(f"{what}: peak RSS", [r["peak_mib"] for r in runs], "MiB")
    floor_peak = statistics.median(f["peak_mib"] for f in floors)
    res.add(f"{what}: peak RSS / the floor's", ratio["peak_mib"], "×", target=f"< {RSS_TARGET:g}× the floor",
            met=met("peak_mib", rss), note=f"the floor peaks at {floor_peak:,.0f} MiB")
    for i, stage in enumerate(runs[0]["stages"]):
        res.add(f"{what}: stage {stage['stage']} wall (run + gates)",
                [r["stages"][i]["run_s"] + r["stages"][i]["gates_s"] for r in runs], "s")
    return res


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] in ("--worker", "--floor-worker"):
        work = build_worker if sys.argv[1] == "--worker" else floor_worker
        print(json.dumps(work(sys.argv[2])))
        return
    ap = benchlib.parser(__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of payments.csv after growing it")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", metavar="DIR", help="build in DIR (kept, reused if there) instead of a temporary folder")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-large-"))
    try:
        spec = work / f"{SUITE}.yaml" if (work / f"{SUITE}.yaml").is_file() else copy_suite(work)
        size = grow_payments(work / SUITE / "source", args.rows)
        res, runs, floors, loads = benchlib.Result("large_source", benchlib.command_line()), [], [], []
        for i in range(args.repeats):
            # Interleaved: the load of a shared machine weighs on both alike.
            loads.append(os.getloadavg())
            runs.append(run_once(spec, floor=False))
            floors.append(run_once(spec, floor=True))
            r, f = runs[-1], floors[-1]
            print(f"repeat {i + 1}: build {r['cpu_s']:.1f} s CPU, {r['process_s']:.1f} s, {r['peak_mib']:,.0f} MiB; "
                  f"floor {f['cpu_s']:.1f} s CPU, {f['process_s']:.1f} s, {f['peak_mib']:,.0f} MiB", flush=True)
            if r["digest"] != f["digest"]:
                raise SystemExit("error: the floor's de-identified columns differ from the build's; not the same work")
        report(runs, floors, args.rows, size, loads)
        result(res, runs, floors, args.rows).write(args.json)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
