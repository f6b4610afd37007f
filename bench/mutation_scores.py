"""Mutation score per module from mutmut's own verdicts (`mutmut results --all true`), after `mutmut run`.

    .venv/bin/python bench/mutation_scores.py [--survivors]

Run from the checkout root (where ./mutants is). The score is mutmut's own badge formula,
(killed + timeout) / (total - skipped); "no tests" and "suspicious" mutants count as not killed.
--survivors lists every mutant that was not killed (see one with `.venv/bin/mutmut show NAME`).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

KILLED = {"killed", "timeout"}


def module_of(mutant: str) -> str:
    """evalsuite.scoring.metrics.x_wilson_interval__mutmut_3 -> evalsuite/scoring/metrics.py"""
    return mutant.rsplit("__mutmut_", 1)[0].rsplit(".", 1)[0].replace(".", "/") + ".py"


def verdicts(mutmut: str) -> dict[str, str]:
    out = subprocess.run([mutmut, "results", "--all", "true"], capture_output=True, text=True, check=True).stdout
    pairs = (line.strip().rsplit(": ", 1) for line in out.splitlines() if "__mutmut_" in line)
    return {name: status for name, status in pairs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--survivors", action="store_true", help="list the mutants that were not killed")
    args = parser.parse_args()
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    results = verdicts(mutmut)
    if not results:
        print("no mutmut results: run `make mutation` (or `mutmut run`) first", file=sys.stderr)
        return 1
    by_module: dict[str, Counter] = defaultdict(Counter)
    for name, status in results.items():
        by_module[module_of(name)][status] += 1
    by_module["total"] = sum(by_module.values(), Counter())
    print(f"{'module':<34} {'score':>7} {'killed':>7} {'mutants':>8}  not killed")
    for module, counts in by_module.items():
        total = sum(counts.values()) - counts["skipped"]
        killed = sum(counts[s] for s in KILLED)
        other = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()) if s not in KILLED | {"skipped"}) or "-"
        score = f"{100 * killed / total:.1f}%" if total else "n/a"
        print(f"{module:<34} {score:>7} {killed:>7} {total:>8}  {other}")
    if args.survivors:
        print()
        for name, status in sorted(results.items()):
            if status not in KILLED:
                print(f"{status:<12} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
