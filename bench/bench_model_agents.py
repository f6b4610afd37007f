"""Model agents at 1, 8, 32 and 128 in flight against a local endpoint, beside Inspect AI on the same endpoint.

    .venv/bin/python bench/bench_model_agents.py [--levels 1,8,32,128] [--median-ms 400] [--sigma 0.25]
                                                 [--waves 3] [--repeats 1] [--json PATH]
                                                 [--sides floor,evalsuite,inspect,inspect-stock] [--inspect-python PY]

One local OpenAI-compatible endpoint (evalsuite.trials.local_model, in its own process, 127.0.0.1 only, a request
budget sized to the run) answers every request after a seeded lognormal latency (median `--median-ms`). The AP
tasks whose reference solution has 4 calls are solved one tool call per request: 5 requests a trial. At each
level N, in a fresh process each (so peaks of memory do not mix and the endpoint's CPU is not counted):

- evalsuite: `run_trials` of agent `openai:local` with TrialSettings(max_in_flight=N, workers=1), the endpoint's
  connection limit N, traces written to a run folder; `--waves` × N trials;
- the floor: the same conversations through a plain aiohttp client, nothing recorded or graded (the CPU a
  trial's requests cost at the least);
- Inspect AI: as many samples, each 4 tool turns of the endpoint's generic script (5 requests), with
  max_connections = max_samples = N, twice: through our provider in this interpreter (`inspect`, see
  bench/inspect_local.py) and through its own OpenAI-compatible provider (`inspect-stock`) in the interpreter
  `make peers` makes with the openai SDK it wants (--inspect-python; left out with a note when there is none).

Every child runs one trial (sample) untimed first: start-up is excluded on every side.

Figures: trials/s and model calls/s (the timed run's wall time), the ideal
N / (5 requests × median latency) and the share of it reached, the harness's CPU seconds per trial (this
process's CPU time only), memory per in-flight trial ((peak RSS at the top level - at 1) / (top - 1)), and
evalsuite's throughput over Inspect's at each level. The 0.90 target is read on the run the issue names: 800
trials at 32 in flight, in one more fresh process (a short level's run ends in a tail of idle lanes).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]

import benchlib  # noqa: E402

STEPS = 4  # tool calls per trial (the AP tasks with 4-call reference solutions; Inspect's samples alike)
REQUESTS = STEPS + 1  # a request per tool call, and one for the answer
AGENT = "openai:local"
# The target run: 800 trials at 32 in flight (25 waves). The short levels' runs (--waves of each) end with a tail
# in which lanes fall idle while the last trials finish (about half a trial per lane), which at 3 waves costs
# ~15% of the ideal on its own; a real evaluation of hundreds of trials pays it once.
SUSTAINED_IN_FLIGHT, SUSTAINED_TRIALS = 32, 800
CHILDREN = {"evalsuite": "evalsuite_trials", "inspect": "inspect_samples", "inspect-stock": "inspect_samples",
            "floor": "floor_trials"}
# Each child first runs one trial (one sample) untimed, so that no side's figures include its start-up: Inspect's
# eval() spends seconds on its first call, evalsuite's first run opens its world and client.
WARM_UP = 1
# Inspect AI's own OpenAI-compatible provider (openai-api/SERVICE/MODEL, reading LOCAL_BASE_URL and LOCAL_API_KEY),
# run by an interpreter that has stock inspect-ai and the openai SDK it wants (--inspect-python, `make peers`)
STOCK_MODEL = "openai-api/local/local"
DEFAULT_SIDES = "floor,evalsuite,inspect,inspect-stock"


def main() -> int:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--levels", default="1,8,32,128", help="trials in flight, comma-separated")
    ap.add_argument("--median-ms", type=float, default=400.0, help="the endpoint's median latency")
    ap.add_argument("--sigma", type=float, default=0.25, help="the latency's log spread")
    ap.add_argument("--waves", type=int, default=3, help="trials per level = waves x in flight")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--sides", default=DEFAULT_SIDES, help="which harnesses to run, comma-separated: "
                    "floor, evalsuite, inspect (our provider), inspect-stock (its own, under --inspect-python)")
    ap.add_argument("--inspect-python", default=str(ROOT / ".venv-inspect" / "bin" / "python"),
                    help="an interpreter with stock inspect-ai and the openai SDK it wants (`make peers`)")
    # the parent runs each level of each harness in a child process of its own
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--url")
    ap.add_argument("--release", type=Path)
    ap.add_argument("--in-flight", type=int)
    ap.add_argument("--trials", type=int)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return 0
    return parent(args)


def parent(args) -> int:
    import httpx
    from harness_support import make_release

    from evalsuite.domains.ap_exceptions.example import ap_example
    from evalsuite.trials.local_model import LocalModelStats, serve_local_model

    res = benchlib.Result("bench_model_agents", benchlib.command_line())  # the load average before the run
    levels = [int(n) for n in args.levels.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="bench-model-agents-"))
    ex = ap_example(tmp / "ap")
    ex.tasks = [t for t in ex.tasks if len(t.solution_calls()) == STEPS]
    release = make_release(ex, tmp / "releases")
    sides = args.sides.split(",")
    long_run = "evalsuite" in sides and SUSTAINED_IN_FLIGHT in levels
    if "inspect-stock" in sides and not Path(args.inspect_python).is_file():
        if args.sides != DEFAULT_SIDES:
            raise SystemExit(f"error: --inspect-python {args.inspect_python}: no such interpreter (`make peers`)")
        sides.remove("inspect-stock")
        res.note(f"stock Inspect AI left out: no interpreter at {args.inspect_python} (`make peers` makes it)")
    children = len(sides) * len(levels) + long_run
    budget = ((len(sides) * sum(args.waves * n for n in levels) + long_run * SUSTAINED_TRIALS + children * WARM_UP)
              * REQUESTS * args.repeats)
    got: dict[tuple[str, int], list[dict]] = {}
    with serve_local_model(ex.tasks, max_requests=budget + 50, median_ms=args.median_ms, sigma=args.sigma,
                           turns=STEPS) as url:
        for _ in range(args.repeats):
            for n in levels:
                for side in sides:
                    python = args.inspect_python if side == "inspect-stock" else sys.executable
                    got.setdefault((side, n), []).append(run_child(side, url, release, n, args.waves * n, python))
            if long_run:  # the run the issue describes: 800 trials, 32 at a time
                got.setdefault(("sustained", SUSTAINED_IN_FLIGHT), []).append(
                    run_child("evalsuite", url, release, SUSTAINED_IN_FLIGHT, SUSTAINED_TRIALS))
        served = LocalModelStats.model_validate(httpx.get(f"{url}/local/stats").json())
    res.note(f"endpoint: {served.answered} requests answered, {served.refused} refused, {served.cpu_seconds:.1f} s "
             f"CPU ({1000 * served.cpu_seconds / max(served.answered, 1):.2f} ms a request)")
    report(res, got, levels, args, len(ex.tasks))
    return 0


def run_child(side: str, url: str, release: Path, in_flight: int, trials: int, python: str = sys.executable) -> dict:
    cmd = [python, __file__, "--child", side, "--url", url, "--release", str(release), "--in-flight",
           str(in_flight), "--trials", str(trials)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"error: {side} at {in_flight} in flight failed:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def child(args) -> dict:
    """One level of one harness in this fresh process: trials done, model calls, wall and CPU seconds of the run
    (imports and reading the release not counted), peak RSS."""
    out = globals()[CHILDREN[args.child]](args)
    return {**out, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measured(run: Callable[[], Any]) -> tuple[dict[str, float], Any]:
    """({wall, cpu} seconds, result) of one call; cpu is this whole process's (every thread), not the endpoint's."""
    cpu, start = time.process_time(), time.perf_counter()
    out = run()
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}, out


def evalsuite_trials(args) -> dict:
    # a warm process: the run imports these late (the summary's Parquet, the agent's SDK), and the figures are of
    # the trials, not of one-time imports
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import evalsuite.trials.agents.openai_agent  # noqa: F401
    from evalsuite.releases.release import Release
    from evalsuite.trials.agents.endpoint import Endpoint, endpoint
    from evalsuite.trials.harness import TrialSettings, run_trials

    rel = Release(args.release)
    tasks = rel.tasks()
    k = max(d for d in range(1, len(tasks) + 1) if args.trials % d == 0)  # k tasks x (trials / k) trials each
    settings = TrialSettings(rel.run_identity(), out_dir=Path(tempfile.mkdtemp(prefix="bench-run-")), workers=1,
                             max_in_flight=args.in_flight)
    ep = Endpoint(base_url=args.url, api_key="local", max_retries=0, max_connections=args.in_flight)
    with endpoint(ep):
        warm = TrialSettings(rel.run_identity(), out_dir=Path(tempfile.mkdtemp(prefix="bench-warm-")), workers=1)
        run_trials(rel.world_ref(), tasks[:1], [AGENT], 1, warm)  # start-up, untimed (see WARM_UP)
        times, records = measured(lambda: run_trials(rel.world_ref(), tasks[:k], [AGENT], args.trials // k, settings))
    failed = [r for r in records if not r.passed]
    if failed:
        raise RuntimeError(f"{len(failed)} trial(s) failed, first {failed[0].task_id}: {failed[0].outcome} "
                           f"{failed[0].error or ''}")
    return {**times, "done": len(records), "model_calls": sum(len(r.usage.model_calls) for r in records if r.usage)}


def floor_trials(args) -> dict:
    """The floor: the same conversations (each task's trigger, the endpoint's 4 tool calls answered with a fixed
    observation, then its answer) through a plain aiohttp client, `--in-flight` at once, nothing recorded."""
    import asyncio

    import aiohttp

    from evalsuite.releases.release import Release

    triggers = [t.trigger.text for t in Release(args.release).tasks()]

    async def trial(session: aiohttp.ClientSession, trigger: str) -> int:
        messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": trigger}]
        for calls in range(1, REQUESTS + 1):
            async with session.post(f"{args.url}/chat/completions", data=json.dumps(
                    {"model": "local", "messages": messages}), headers={"Content-Type": "application/json"}) as r:
                message = json.loads(await r.read())["choices"][0]["message"]
            if not message.get("tool_calls"):
                return calls
            messages += [message, *({"role": "tool", "tool_call_id": c["id"], "content": "ok"}
                                    for c in message["tool_calls"])]
        raise RuntimeError(f"the endpoint kept calling tools past {REQUESTS} requests")

    async def run(trials: int) -> dict:
        todo = iter(range(trials))
        calls = []

        async def lane(session):
            for i in todo:
                calls.append(await trial(session, triggers[i % len(triggers)]))

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=args.in_flight)) as session:
            await asyncio.gather(*(lane(session) for _ in range(args.in_flight)))
        return {"done": len(calls), "model_calls": sum(calls)}

    asyncio.run(run(1))  # start-up, untimed (see WARM_UP)
    times, out = measured(lambda: asyncio.run(run(args.trials)))
    return {**times, **out}


def inspect_samples(args) -> dict:
    from inspect_local import run_samples, samples_task

    model = STOCK_MODEL if args.child == "inspect-stock" else None
    run_samples(samples_task(1), args.url, args.in_flight, model)  # start-up, untimed (see WARM_UP)
    task = samples_task(args.trials)
    times, out = measured(lambda: run_samples(task, args.url, args.in_flight, model))
    return {**times, **out}


def report(res: benchlib.Result, got: dict[tuple[str, int], list[dict]], levels: list[int], args,
           n_tasks: int) -> None:
    for n in levels:
        ideal = n / (REQUESTS * args.median_ms / 1000)
        ours = got.get(("evalsuite", n))
        if ours:
            evalsuite_rows(res, ours, n, ideal, args.median_ms)
        floor = got.get(("floor", n))
        if floor:
            floor_rows(res, floor, ours, n, ideal)
        for side, name in (("inspect", "Inspect AI (our provider)"), ("inspect-stock", "Inspect AI (stock provider)")):
            theirs = got.get((side, n))
            if not theirs:
                continue
            res.add(f"{name}, max_connections {n}: samples/s", rates(theirs), "samples/s",
                    note=f"{theirs[0]['done']} samples of {STEPS} tool turns; ideal {ideal:.3g}; CPU per sample "
                         f"{1000 * theirs[0]['cpu'] / theirs[0]['done']:.1f} ms")
            if ours:
                ratio = [a / b for a, b in zip(rates(ours), rates(theirs))]
                res.add(f"evalsuite / {name} throughput, {n} in flight", ratio, "×", target="≥ 1",
                        met=min(ratio) >= 1)
    long = got.get(("sustained", SUSTAINED_IN_FLIGHT))
    if long:
        ideal = SUSTAINED_IN_FLIGHT / (REQUESTS * args.median_ms / 1000)
        share = [x / ideal for x in rates(long)]
        res.add(f"evalsuite, {SUSTAINED_TRIALS} trials at {SUSTAINED_IN_FLIGHT} in flight: share of the ideal", share,
                "", target="≥ 0.90", met=min(share) >= 0.9,
                note=f"{rates(long)[0]:.3g} trials/s of an ideal {ideal:.3g}; harness CPU per trial "
                     f"{1000 * long[0]['cpu'] / long[0]['done']:.1f} ms")
    memory_rows(res, got, levels)
    res.note(f"endpoint: one process, lognormal latency median {args.median_ms:.0f} ms, sigma {args.sigma} (mean "
             f"{math.exp(args.sigma ** 2 / 2):.3f} × median); {n_tasks} AP tasks of {STEPS} calls; "
             f"{os.cpu_count()} CPUs shared by both harnesses and the endpoint")
    res.write(args.json)


def rates(runs: list[dict]) -> list[float]:
    return [r["done"] / r["wall"] for r in runs]


def evalsuite_rows(res: benchlib.Result, ours: list[dict], n: int, ideal: float, median_ms: float) -> None:
    res.add(f"evalsuite {AGENT}, {n} in flight: trials/s", rates(ours), "trials/s",
            note=f"{ours[0]['done']} trials; ideal {ideal:.3g} trials/s")
    res.add(f"evalsuite, {n} in flight: model calls/s", [r["model_calls"] / r["wall"] for r in ours], "calls/s")
    share = [x / ideal for x in rates(ours)]
    res.add(f"evalsuite, {n} in flight: share of the ideal throughput", share, "",
            note=f"ideal = {n} / ({REQUESTS} requests × {median_ms:.0f} ms); {len(ours) and ours[0]['done']} trials, "
                 "with the tail in which lanes fall idle")
    res.add(f"evalsuite, {n} in flight: harness CPU per trial", [1000 * r["cpu"] / r["done"] for r in ours], "ms")


def floor_rows(res: benchlib.Result, floor: list[dict], ours: list[dict] | None, n: int, ideal: float) -> None:
    """The plain aiohttp client's throughput and CPU per trial, and evalsuite's CPU per trial over it."""
    cpu = [1000 * r["cpu"] / r["done"] for r in floor]
    res.add(f"floor (plain aiohttp client), {n} in flight: share of the ideal throughput",
            [x / ideal for x in rates(floor)], "", note=f"{floor[0]['done']} trials; CPU per trial {cpu[0]:.2f} ms")
    res.add(f"floor (plain aiohttp client), {n} in flight: CPU per trial", cpu, "ms")
    if ours:
        ratio = [1000 * r["cpu"] / r["done"] / c for r, c in zip(ours, cpu)]
        res.add(f"evalsuite / floor harness CPU per trial, {n} in flight", ratio, "×", target="≤ 3",
                met=max(ratio) <= 3)
        share = [a / b for a, b in zip(rates(ours), rates(floor))]
        res.add(f"evalsuite / floor throughput, {n} in flight", share, "×")


def memory_rows(res: benchlib.Result, got: dict[tuple[str, int], list[dict]], levels: list[int]) -> None:
    """Memory per in-flight trial: (peak RSS at the top level - at 1) / (top - 1), each level its own process."""
    top = max(levels)
    if 1 not in levels or top == 1:
        return
    for side, what in (("evalsuite", "evalsuite memory per in-flight trial"),
                       ("inspect", "Inspect AI memory per in-flight sample")):
        if (side, top) not in got:
            continue
        high, low = got[(side, top)], got[(side, 1)]
        per = [(a["peak_rss_mb"] - b["peak_rss_mb"]) / (top - 1) for a, b in zip(high, low)]
        mine = side == "evalsuite"
        res.add(f"{what} (peak RSS at {top} - at 1, / {top - 1})", per, "MB", target="≤ 5 MB" if mine else None,
                met=max(per) <= 5 if mine else None,
                note=f"peak RSS {low[0]['peak_rss_mb']:.0f} MB at 1, {high[0]['peak_rss_mb']:.0f} MB at {top}")


if __name__ == "__main__":
    sys.exit(main())
