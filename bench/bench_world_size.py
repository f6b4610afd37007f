"""Per-trial reset, tool calls and grade of each bundled domain at world sizes of 10k, 100k and 1M rows.

    .venv/bin/python bench/bench_world_size.py [--sizes 10000,100000,1000000] [--repeats 2] [--json PATH]

Each domain's own world (the AP example; τ²-bench retail imported from third_party/tau2_retail) is grown to N
rows with background copies of its records: every id-like column gets a copy prefix (B<i>-), positions are
shifted past the originals, so no copy matches anything a task looks up, and every tool returns what it
returns on the small world. The tables the reference solutions write into by count (AP approval requests and
vendor messages) and the τ² catalogue (list_all_product_types returns it whole) are not copied. So the same
tasks run on every size and each trial changes the same few rows; every reference trial must pass its goal at
every size (checked). Per trial: reset (the row restore of the previous trial's changes, verified by row
digests), the reference solution's tool calls, and the row-level grade. Per size also: one tool call that
filters on a non-key column (indexed), the first reset (the whole image), and, as the baseline a whole-world
compare costs, sha256 of the sorted JSON of every row. For τ², a tool call through the trial next to the
same lookup in an in-memory dict (tau2's own store). Figures are medians over every trial of every repeat,
with min and max; a plot of cost against size is written to docs/img/world_size.png.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import benchlib

from evalsuite.core.records import TaskRecord
from evalsuite.domains.ap_exceptions.example import ap_example
from evalsuite.domains.tau2_retail import DOMAIN as TAU2
from evalsuite.domains.tau2_retail.convert import from_nested, to_nested
from evalsuite.grading.grader import grade_trial
from evalsuite.importers.tau2.importer import import_tau2
from evalsuite.importers.tau2.sources import RETAIL
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds import World
from evalsuite.worlds.domain import Domain

ROOT = Path(__file__).resolve().parents[1]
TAU2_SRC = ROOT / "third_party" / "tau2_retail"
PLOT = ROOT / "docs" / "img" / "world_size.png"  # shown on the docs' scaling page


@dataclass
class Base:
    """A domain's small world and its tasks; `grow` lists, per copied table, the columns a copy prefixes."""

    name: str
    domain: Domain
    tables: dict[str, list[dict]]
    tasks: list[TaskRecord]
    grow: dict[str, tuple[str, ...]]
    filter_call: tuple[str, dict]  # a tool call that filters on a non-key column


def ap_base(tmp: Path) -> Base:
    ex = ap_example(tmp / "ap")
    tables = {k: v for k, v in ex.tables.items() if k in ex.world.domain.tables}
    grow = {"vendor_master": ("vendor_id", "duplicate_of"), "purchase_orders": ("po_id", "vendor_id"),
            "po_lines": ("po_id",), "goods_receipts": ("receipt_id", "po_id"),
            "invoices": ("invoice_id", "vendor_id", "po_id", "vendor_invoice_no"), "invoice_lines": ("invoice_id",),
            "payments": ("payment_id", "invoice_id"), "exception_queue": ("queue_item_id", "invoice_id")}
    inv = tables["invoices"][0]
    return Base("ap_exceptions", ex.world.domain, tables, ex.tasks, grow,
                ("find_invoices", {"vendor_invoice_no": inv["vendor_invoice_no"]}))


def tau2_base(tmp: Path) -> Base:
    out = tmp / "tau2"
    import_tau2(RETAIL, TAU2_SRC, out)
    tables = from_nested(json.loads((TAU2_SRC / "db.json").read_text()))
    grow = {"users": ("user_id", "email", "first_name"), "payment_methods": ("id", "user_id"),
            "user_orders": ("user_id", "order_id"),
            "orders": ("order_id", "user_id", "exchange_payment_method_id", "return_payment_method_id"),
            "order_items": ("order_id",), "fulfillments": ("order_id",), "payments": ("order_id", "payment_method_id")}
    email = tables["users"][len(tables["users"]) // 2]["email"]
    return Base("tau2_retail", TAU2, tables, read_tasks(out / "tasks.jsonl"), grow,
                ("find_user_id_by_email", {"email": email.upper()}))


def grown(base: Base, target: int) -> tuple[dict[str, Iterator[dict]], int]:
    """The base tables plus as many background copies as bring the world to about `target` rows."""
    total = sum(len(r) for r in base.tables.values())
    per_copy = sum(len(base.tables[t]) for t in base.grow)
    copies = max(0, math.ceil((target - total) / per_copy))

    def rows(name: str) -> Iterator[dict]:
        yield from base.tables[name]
        cols = base.grow.get(name, ())
        for i in range(copies if cols else 0):
            prefix, shift = f"B{i}-", (i + 1) * 10_000_000
            for row in base.tables[name]:
                out = dict(row)
                for c in cols:
                    if isinstance(out.get(c), str):
                        out[c] = prefix + out[c]
                if "position" in out:
                    out["position"] += shift
                yield out

    return {name: rows(name) for name in base.tables}, total + copies * per_copy


def message(task: TaskRecord) -> str:
    return " ".join(o.value for o in task.goal_state.required_outputs)


def trial_costs(world: World, tasks: list[TaskRecord], repeats: int) -> dict[str, list[float]]:
    """Per trial: reset, the reference calls, the grade (ms); per call; every verdict must pass."""
    out: dict[str, list[float]] = {}
    for _ in range(repeats):
        for task in tasks:
            w_reset, c_reset, trial = benchlib.timed_cpu(lambda: world.reset(task.role))
            if world.last_reset != "rows":
                raise AssertionError(f"{task.task_id}: reset restored the whole image, not the rows")
            calls = task.solution_calls()
            w_calls, c_calls, _ = benchlib.timed_cpu(lambda: [trial.call(c.tool, c.arguments) for c in calls])
            w_grade, c_grade, verdict = benchlib.timed_cpu(
                lambda: grade_trial(trial, message(task), task.goal_state, task.role, task.forbidden))
            if not verdict.passed:
                raise AssertionError(f"{task.task_id}: the reference fails at this size: {verdict.failures()}")
            for k, v in (("reset", w_reset), ("tool calls", w_calls), ("grade", w_grade),
                         ("trial", w_reset + w_calls + w_grade), ("reset + grade", w_reset + w_grade),
                         ("trial CPU", c_reset + c_calls + c_grade), ("reset + grade CPU", c_reset + c_grade)):
                out.setdefault(k, []).append(v)
            if calls:
                out.setdefault("per tool call", []).append(w_calls / len(calls) * 1000)  # µs
                out.setdefault("per tool call CPU", []).append(c_calls / len(calls) * 1000)
    return out


def filter_call_us(world: World, call: tuple[str, dict], n: int = 300) -> list[float]:
    trial = world.reset(None)
    return [benchlib.timed(lambda: trial.call(*call))[0] * 1000 for _ in range(n)]


def whole_world_json_ms(world: World, repeats: int) -> list[float]:
    """The common whole-world check: every row read, sorted JSON, sha256."""
    def once() -> str:
        rows = world.read_rows(world.reset(None).db)
        return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
    return [benchlib.timed(once)[0] for _ in range(repeats)]


def dict_lookup_us(world: World, n: int = 2000) -> tuple[list[float], list[float]]:
    """τ²: get_order_details through a trial vs tau2's in-memory store (a dict lookup and a copy, as it dumps)."""
    nested = to_nested(world.initial_rows)
    order_id = next(iter(nested["orders"]))
    trial = world.reset(None)
    ours = [benchlib.timed(lambda: trial.call("get_order_details", {"order_id": order_id}))[0] * 1000
            for _ in range(n)]
    theirs = [benchlib.timed(lambda: copy.deepcopy(nested["orders"][order_id]))[0] * 1000 for _ in range(n)]
    return ours, theirs


def plot(series: dict[str, dict[str, list[tuple[int, float]]]]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(series), figsize=(6 * len(series), 4.2), squeeze=False)
    for ax, (domain, lines) in zip(axes[0], series.items()):
        for label, points in lines.items():
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", label=label, linestyle="--" if "baseline" in label else "-")
        ax.set(xscale="log", yscale="log", xlabel="rows in the world", ylabel="ms (median)", title=domain)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(PLOT, dpi=110)


def run_domain(res: benchlib.Result, base: Base, sizes: list[int], repeats: int, tmp: Path,
               series: dict) -> None:
    lines: dict[str, list[tuple[int, float]]] = {}
    for size in sizes:
        tables, rows = grown(base, size)
        world = World.build(base.domain, tables, tmp / f"{base.name}-{size}.sqlite")
        t_image, _ = benchlib.timed(functools.partial(world.reset, None))  # the first reset restores the whole image
        costs = trial_costs(world, base.tasks, repeats)
        label = f"{base.name} {size // 1000}k rows ({rows:,})"
        for k in ("reset", "tool calls", "grade", "trial", "trial CPU"):
            res.add(f"{label}: {k} per trial", costs[k], "ms")
        res.add(f"{label}: per tool call", costs["per tool call"], "µs")
        res.add(f"{label}: per tool call CPU", costs["per tool call CPU"], "µs")
        res.add(f"{label}: {base.filter_call[0]} (indexed non-key filter)", filter_call_us(world, base.filter_call),
                "µs")
        res.add(f"{label}: first reset (whole image)", [t_image], "ms")
        baseline = whole_world_json_ms(world, 1 if size >= 1_000_000 else 3)
        res.add(f"{label}: baseline whole-world sorted-JSON sha256", baseline, "ms",
                note=f"{statistics.median(baseline) / statistics.median(costs['trial']):,.0f}× a whole trial")
        for k in ("reset", "tool calls", "grade", "trial CPU", "reset + grade", "reset + grade CPU"):
            lines.setdefault(k, []).append((rows, statistics.median(costs[k])))
        lines.setdefault("baseline: whole-world JSON hash", []).append((rows, statistics.median(baseline)))
        if base.name == "tau2_retail" and size == sizes[0]:
            ours, theirs = dict_lookup_us(world)
            ratio = statistics.median(ours) / statistics.median(theirs)
            res.add("tau2_retail get_order_details through the trial", ours, "µs", target="≤ in-memory dict lookup",
                    met=ratio <= 1, note=f"{ratio:.1f}× tau2's dict lookup + copy")
            res.add("tau2_retail get_order_details in tau2's in-memory dict (lookup + copy)", theirs, "µs")
        del world
    for k in ("reset + grade", "reset + grade CPU"):
        (n_small, small), (n_large, large) = lines[k][0], lines[k][-1]
        res.add(f"{base.name}: {k} at {n_large:,} rows / at {n_small:,} rows", [large / small], "×",
                target="≤ 2×", met=large / small <= 2, note=f"median {small:.3f} → {large:.3f} ms")
    # The whole trial in CPU time: a sum of wall times also sums every time the process waited for a core.
    series[base.name] = {("trial (CPU)" if k == "trial CPU" else k): v for k, v in lines.items() if "+" not in k}


def main() -> int:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--domains", default="ap_exceptions,tau2_retail")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    res = benchlib.Result("world_size", benchlib.command_line())
    series: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-size-") as tmp:
        makers: dict[str, Callable[[Path], Base]] = {"ap_exceptions": ap_base, "tau2_retail": tau2_base}
        for name in args.domains.split(","):
            run_domain(res, makers[name](Path(tmp)), sizes, args.repeats, Path(tmp), series)
    plot(series)
    res.note(f"plot: {PLOT.relative_to(ROOT)}")
    res.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
