"""Benchmark de-identification of a large table.

A 1,000,000-row transactions table with three personal columns (customer id ->
pseudonym, name -> surrogate name, email -> surrogate email) over ~100,000
distinct customers, plus amount/currency/status columns that must pass through.

With --notes the table also gets a free-text column in which every row mentions
some customer by name (1,000,000 distinct notes), to measure free-text scrubbing.

Each repeat runs in a fresh process so its peak memory (ru_maxrss) is its own;
the figures printed are medians over the repeats.

The floor (`floor`, --floor, --compare) does the same work and nothing else: the
same HMAC tokens and Faker surrogates per distinct value, redrawn while a draw
holds an original personal value, mapped back to rows with pandas/numpy. Its
surrogates must equal deidentify's (a digest of the three columns is compared).

    python bench/bench_deid.py --repeats 3
    python bench/bench_deid.py --repeats 3 --notes
    python bench/bench_deid.py --repeats 3 --compare   # beside the floor: the same surrogates with nothing else
    python bench/bench_deid.py --json PATH     # make bench: 300,000 rows (unless --rows), both, 3 repeats each
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

KEY = "bench-key-not-secret-0123456789"


def make_table(rows: int, customers: int, seed: int = 7, notes: bool = False) -> pd.DataFrame:
    # Names come from Faker's own name lists but are assembled with numpy, so building
    # the input takes a second and the benchmark measures de-identification only.
    from faker.providers.person.en_US import Provider as Person

    rng = np.random.default_rng(seed)
    first = np.array(list(Person.first_names), dtype=object)
    last = np.array(list(Person.last_names), dtype=object)
    pairs = rng.choice(len(first) * len(last), size=customers, replace=False)
    firsts, lasts = first[pairs // len(last)], last[pairs % len(last)]
    names = firsts + " " + lasts
    emails = np.array(
        [f"{f}.{surname}{i}@mail.test".lower() for i, (f, surname) in enumerate(zip(firsts, lasts))], dtype=object
    )
    ids = np.array([f"C{i:07d}" for i in range(customers)], dtype=object)
    who = rng.integers(0, customers, size=rows)
    columns = {
        "customer_id": ids[who],
        "name": names[who],
        "email": emails[who],
        "amount": rng.integers(100, 1_000_000, size=rows) / 100,
        "currency": rng.choice(np.array(["EUR", "USD", "GBP"], dtype=object), size=rows),
        "status": rng.choice(np.array(["open", "paid", "disputed"], dtype=object), size=rows),
    }
    if notes:
        mentioned = names[rng.integers(0, customers, size=rows)]
        orders = rng.integers(10_000, 10_000_000, size=rows)
        columns["note"] = [f"{n} called about order {o}; please check" for n, o in zip(mentioned, orders)]
    return pd.DataFrame(columns)


PERSONAL = ("customer_id", "name", "email")


def digest(table: pd.DataFrame) -> str:
    """sha256 of the personal columns' values, row by row: equal digests, equal surrogates."""
    h = hashlib.sha256()
    for column in PERSONAL:
        h.update("\x1e".join(table[column].astype(str)).encode())
    return h.hexdigest()


def floor(table: pd.DataFrame) -> pd.DataFrame:
    """The same surrogates with nothing around them: per column, pandas factorize, per distinct value the HMAC token
    (for a surrogate, Faker reseeded from it, drawn again while the draw contains an original personal value, as
    evalsuite.deid.surrogates does, with its index of those values), numpy take back to rows. No rule checks, no
    provenance counts, no copy of the other columns."""
    kinds = {"customer_id": ("pseudonym", "cus_", 16), "name": ("surrogate", "name"), "email": ("surrogate", "email")}
    return table.assign(**floor_columns({"transactions": table}, {"transactions": kinds}, KEY)["transactions"])


def floor_columns(tables: dict[str, pd.DataFrame], kinds: dict[str, dict[str, tuple]], key: str,
                  originals: list[pd.Series] | None = None) -> dict[str, dict[str, np.ndarray]]:
    """floor's work for any tables: kinds[table][column] is ("pseudonym", prefix, length) or ("surrogate", kind)
    with kind one of evalsuite.deid.surrogates' (en_US); `originals` are the personal values no surrogate may hold
    (default: the ruled columns). Returns the new columns by table; pseudonyms and surrogates as deidentify makes
    them, with one cache of surrogates per run as it has."""
    from evalsuite.core.pii import ValueIndex
    from evalsuite.deid.surrogates import SURROGATE_KINDS, faker_generator  # Faker with the stock draws' fast picks

    mac, gen = hmac.new(key.encode(), digestmod=hashlib.sha256), faker_generator("en_US")
    index = ValueIndex(disguised=True)
    for values in originals if originals is not None else [tables[t][c] for t in kinds for c in kinds[t]]:
        for value in pd.unique(values.dropna()):
            index.add(value, "", "")
    index.freeze()

    def token(text: str) -> str:
        m = mac.copy()
        m.update(f"value\x1f{text}".encode())
        return m.hexdigest()

    made: dict[tuple[str, str], str] = {}

    def surrogate(kind: str, text: str) -> str:
        if (kind, text) in made:
            return made[kind, text]
        for attempt in range(50):
            t = token(text if attempt == 0 else f"{text}\x1fredraw{attempt}")
            gen.seed_instance(int(t[:16], 16))
            value = SURROGATE_KINDS[kind](gen, t)
            if next(index.finditer(value), None) is None:
                made[kind, text] = value
                return value
        raise RuntimeError(f"no surrogate for {text!r}")

    def draw(rule: tuple, text: str) -> str:
        return rule[1] + token(text)[:rule[2]] if rule[0] == "pseudonym" else surrogate(rule[1], text)

    out: dict[str, dict[str, np.ndarray]] = {}
    for name, columns in kinds.items():
        for column, rule in columns.items():
            codes, uniques = pd.factorize(tables[name][column])
            mapped = np.array([draw(rule, u) for u in uniques] + [None], dtype=object)
            out.setdefault(name, {})[column] = mapped[codes]  # code -1 (a missing value) takes the None
    return out


def worker(rows: int, customers: int, notes: bool, floor_only: bool = False) -> dict:
    from evalsuite.deid.rules import DeidRules
    from evalsuite.deid.transform import deidentify

    rules = DeidRules.model_validate(
        {
            "tables": {
                "transactions": {
                    "columns": {
                        "customer_id": {"rule": "pseudonym", "prefix": "cus_"},
                        "name": {"rule": "surrogate", "kind": "name"},
                        "email": {"rule": "surrogate", "kind": "email"},
                    },
                    "free_text": ["note"] if notes else [],
                }
            }
        }
    )
    table = make_table(rows, customers, notes=notes)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu_start = time.perf_counter(), time.process_time()
    out = floor(table) if floor_only else deidentify({"transactions": table}, rules, key=KEY).tables["transactions"]
    seconds = time.perf_counter() - start
    # CPU time too: on a shared machine wall time also counts waiting for a core.
    cpu_seconds = time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # before the checks below add their own
    # Sanity: ids and emails are replaced, joins keep their cardinality, amounts pass through.
    # (Compared as sets of distinct values: Series.isin over 1M strings takes longer than the run.)
    for column in ("customer_id", "email"):
        assert not set(out[column].unique()) & set(table[column].unique()), column
    assert out["customer_id"].nunique() == table["customer_id"].nunique()
    assert out["amount"].equals(table["amount"]) and out["status"].equals(table["status"])
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "rows_per_second": rows / seconds,
        # ru_maxrss is in KiB on Linux.
        "peak_rss_mib": peak / 1024,
        "input_rss_mib": rss_before / 1024,
        "digest": digest(out),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--notes", action="store_true", help="add a free-text column to scrub")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor", action="store_true", help="run the floor (same surrogates, nothing else) instead")
    parser.add_argument("--compare", action="store_true", help="run deidentify and the floor in turn, each repeat")
    parser.add_argument("--json", type=Path, help="run without and with --notes; write the result document here")
    args = parser.parse_args()
    if args.json and "--rows" not in sys.argv:  # make bench: 300k rows keeps both variants within a few minutes
        args.rows, args.customers = 300_000, 30_000
    if args.worker:
        print(json.dumps(worker(args.rows, args.customers, args.notes, args.floor)))
        return
    if args.json:
        return write_json(args)
    if args.compare:
        runs, floors = repeat_runs(args, floor_too=True)
        report(args, runs)
        print("the floor (the same surrogates, checked by digest):")
        report(args, floors)
        ratio = statistics.median(r["cpu_seconds"] / f["cpu_seconds"] for r, f in zip(runs, floors))
        print(f"median CPU / the floor's: {ratio:.2f}× (target ≤ 3×: {'met' if ratio <= 3 else 'MISSED'})")
        return
    report(args, repeat_runs(args))


def repeat_runs(args, floor_too: bool = False) -> list[dict] | tuple[list[dict], list[dict]]:
    """Each repeat in a fresh process; with floor_too, the floor's run follows each of ours (interleaved: the load
    of a shared machine weighs on both alike), and the two must give the same surrogates."""
    runs: list[dict] = []
    floors: list[dict] = []
    for i in range(args.repeats):
        for floor_run, into in ((args.floor, runs), *(((True, floors),) if floor_too else ())):
            cmd = [sys.executable, __file__, "--worker", "--rows", str(args.rows)]
            cmd += ["--customers", str(args.customers)]
            cmd += ["--notes"] if args.notes else []
            cmd += ["--floor"] if floor_run else []
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            into.append(json.loads(done.stdout.strip().splitlines()[-1]))
            last = into[-1]
            print(
                f"repeat {i + 1}{' (floor)' if floor_run else ''}: {last['seconds']:.2f} s wall, "
                f"{last['cpu_seconds']:.2f} s cpu, peak {last['peak_rss_mib']:.0f} MiB",
                flush=True,
            )
    if floor_too and {r["digest"] for r in runs} != {r["digest"] for r in floors}:
        raise SystemExit("error: the floor's surrogates differ from deidentify's; it is not the same work")
    return (runs, floors) if floor_too else runs


def report(args, runs: list[dict]) -> None:
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "digest"}
    print(
        f"rows={args.rows:,} distinct_customers={args.customers:,} personal_columns=3 "
        f"free_text={'yes' if args.notes else 'no'} repeats={args.repeats}\n"
        f"median time        {median['seconds']:.2f} s wall, {median['cpu_seconds']:.2f} s cpu\n"
        f"median rows/second {median['rows_per_second']:,.0f}\n"
        f"median peak RSS    {median['peak_rss_mib']:,.0f} MiB "
        f"(input table alone: {median['input_rss_mib']:,.0f} MiB)"
    )




def write_json(args) -> None:
    """The make-bench document: rows per second without and with a free-text column (bench/benchlib.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import benchlib

    res = benchlib.Result("deid", benchlib.command_line())
    for notes in (False, True):
        args.notes = notes
        runs, floors = repeat_runs(args, floor_too=True) if not notes else (repeat_runs(args), None)
        what = f"de-identification of {args.rows:,} rows, 3 personal columns" + (" + free text" if notes else "")
        res.add(f"{what}: rows/s", [r["rows_per_second"] for r in runs], "rows/s")
        res.add(f"{what}: CPU s", [r["cpu_seconds"] for r in runs], "s")
        res.add(f"{what}: peak RSS", [r["peak_rss_mib"] for r in runs], "MiB")
        if floors:
            res.add(f"{what}: the floor's CPU s (the same surrogates, nothing else)",
                    [r["cpu_seconds"] for r in floors], "s")
            ratios = [r["cpu_seconds"] / f["cpu_seconds"] for r, f in zip(runs, floors)]
            res.add(f"{what}: CPU / the floor's", ratios, "×", target="≤ 3×",
                    met=statistics.median(ratios) <= 3)
            res.add(f"{what}: peak RSS / the floor's", [r["peak_rss_mib"] / f["peak_rss_mib"]
                                                       for r, f in zip(runs, floors)], "×")
    res.write(args.json)


if __name__ == "__main__":
    main()
