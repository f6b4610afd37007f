"""Time of an AgentDojo import, per suite: the import of the copied data folder (third_party/agentdojo_<suite>)
into a fresh folder, every task replayed, every attack pair derived and proven live.

    .venv/bin/python bench/bench_agentdojo_import.py [--repeats 3] [--suite NAME ...] [--json PATH]

Wall and CPU time of the whole import (CPU time is the work itself, the wall time swells with a shared machine's
load). Attacked tasks are replayed on a copy of the world rather than a world built anew (the slack import has 35
of them, each built with its tables and fsynced): measured with this script at commit 8bc2c24's parent and at
8bc2c24, both on 2 CPUs under a load average of about 9, the slack import's median went from 19.2 s wall (2.5 s
CPU) to 7.7 s wall (2.2 s CPU); banking's, which has none, stayed at about 8 s.

Travel (27 tasks, 140 pairs), measured with this script at the commit that added it, 2 CPUs, load average about 5:
median 5.0 s CPU (5.3 s in a second run), wall 7.1 s alone and 18.4 s beside another import. Most of its CPU is
parsing its environment (21 kB of YAML, five times slack's) once per attack pair with PyYAML's pure-Python loader, the
loader the peer uses; 18 of its 20 user tasks read a different set of vectors, so a cache by vector set saves
little.

Workspace (54 tasks, 560 pairs; `--suite workspace`): median 34.3 s CPU, 109 s wall under a load average of 6.4 to
7.7; loading each attacked environment once per set of vectors and attack text (about 300 loads instead of 560)
took one import, timed with `time evalsuite import agentdojo-workspace`, from 49 s to 34 s of CPU, its tasks byte
for byte the same.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import benchlib

from evalsuite.importers.agentdojo.importer import SUITES, import_agentdojo

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = benchlib.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--suite", action="append", choices=sorted(SUITES), help="only these suites (default: all)")
    args = ap.parse_args()
    res = benchlib.Result("agentdojo_import", benchlib.command_line())
    for name, suite in SUITES.items():
        if args.suite and name not in args.suite:
            continue
        walls, cpus = [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="bench-adojo-") as tmp:
                wall, cpu, report = benchlib.timed_cpu(
                    lambda: import_agentdojo(suite, ROOT / "third_party" / f"agentdojo_{name}", Path(tmp) / "out"))
            walls.append(wall / 1000)
            cpus.append(cpu / 1000)
        res.add(f"import agentdojo-{name} ({report.tasks} tasks, {report.attack_pairs} pairs), wall", walls, "s")
        res.add(f"import agentdojo-{name}, CPU", cpus, "s")
    res.write(args.json)


if __name__ == "__main__":
    main()
