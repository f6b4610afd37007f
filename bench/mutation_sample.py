"""Mutation scores of the judging modules from a seeded sample of each module's mutants: quicker than the full run.

    .venv/bin/python bench/mutation_sample.py [--per-module 40] [--seed 20261202] [--max-children 2]

Run from the checkout root; `make mutation-sample` runs it on a fresh ./mutants. mutmut 3.8.1 (the [tool.mutmut]
config in pyproject.toml) generates every mutant and records which tests reach which function; this script then
draws --per-module mutants of each module with a seeded generator, has mutmut test just those, and prints each
module's score over its sample with a 95% Wilson interval (the full run, `make mutation`, tests every mutant).

mutmut names a mutant only once it has generated it, and generates only inside `mutmut run`, so the first call
asks for a name no mutant has: mutmut generates the mutants and the test statistics, then stops, saying nothing
matched; that stop is expected and checked.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

from evalsuite.scoring.metrics import wilson_interval

sys.path.insert(0, str(Path(__file__).parent))
from mutation_scores import KILLED, module_of, verdicts  # noqa: E402

SENTINEL = "no-such-mutant-generate-only"
UNTESTED = {None, "not checked", "skipped"}  # no verdict: left out of the score


def mutmut_path() -> str:
    return str(Path(sys.executable).with_name("mutmut"))


def generate(mutmut: str) -> None:
    """Mutants and test statistics, no mutant tested: the run stops at the name nothing matches."""
    proc = subprocess.run([mutmut, "run", SENTINEL], capture_output=True, text=True)
    if "nothing matches" not in proc.stdout + proc.stderr:
        tail = (proc.stdout + proc.stderr).replace("\r", "\n").splitlines()[-20:]
        raise SystemExit("mutmut did not generate its mutants:\n" + "\n".join(tail))


def mutant_names(root: Path = Path("mutants")) -> dict[str, list[str]]:
    """Every generated mutant, by module, from mutmut's .meta files."""
    by_module: dict[str, list[str]] = {}
    for meta in sorted(root.rglob("*.py.meta")):
        for name in json.loads(meta.read_text())["exit_code_by_key"]:
            by_module.setdefault(module_of(name), []).append(name)
    if not by_module:
        raise SystemExit(f"no mutants under {root}/: did mutmut run?")
    return by_module


def sample(by_module: dict[str, list[str]], per_module: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    return {m: sorted(rng.sample(sorted(names), min(per_module, len(names)))) for m, names in by_module.items()}


def scores(sampled: dict[str, list[str]], results: dict[str, str], totals: dict[str, int]) -> list[list[str]]:
    rows = []
    for module, names in sampled.items():
        tested = [n for n in names if results.get(n) not in UNTESTED]
        checked = [results[n] for n in tested]
        killed = sum(s in KILLED for s in checked)
        low, high = wilson_interval(killed, len(checked)) if checked else (0.0, 0.0)
        survivors = ", ".join(n.rsplit(".", 1)[-1] for n in tested if results[n] not in KILLED) or "-"
        rows.append([module, f"{100 * killed / len(checked):.1f}%" if checked else "n/a",
                     f"{100 * low:.1f}–{100 * high:.1f}%", f"{killed}/{len(checked)}", str(totals[module]), survivors])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-module", type=int, default=40)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--max-children", type=int, default=2)
    args = ap.parse_args()
    mutmut = mutmut_path()
    generate(mutmut)
    by_module = mutant_names()
    sampled = sample(by_module, args.per_module, args.seed)
    names = [n for ns in sampled.values() for n in ns]
    print(f"testing {len(names)} of {sum(map(len, by_module.values()))} mutants "
          f"({args.per_module} a module, seed {args.seed})", flush=True)
    subprocess.run([mutmut, "run", "--max-children", str(args.max_children), *names],
                   stdout=subprocess.DEVNULL, check=True)
    rows = scores(sampled, verdicts(mutmut), {m: len(ns) for m, ns in by_module.items()})
    head = ["module", "score", "95% interval", "killed/sampled", "mutants", "not killed"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
