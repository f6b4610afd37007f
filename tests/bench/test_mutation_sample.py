"""`make mutation-sample`: which mutants it tests (a seeded sample of every module's) and the scores it prints from
mutmut's verdicts; mutmut itself is not run here."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def ms():
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("mutation_sample", BENCH / "mutation_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_meta(root: Path, module: str, n: int) -> list[str]:
    names = [f"evalsuite.{module}.x_f__mutmut_{i}" for i in range(1, n + 1)]
    meta = root / "evalsuite" / f"{module}.py.meta"
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"exit_code_by_key": {name: None for name in names}}))
    return names


def test_the_sample_covers_every_module_and_is_the_same_for_the_same_seed(ms, tmp_path):
    write_meta(tmp_path, "grader", 100)
    write_meta(tmp_path, "metrics", 7)
    by_module = ms.mutant_names(tmp_path)
    assert {m: len(n) for m, n in by_module.items()} == {"evalsuite/grader.py": 100, "evalsuite/metrics.py": 7}
    first = ms.sample(by_module, 10, seed=1)
    assert first == ms.sample(by_module, 10, seed=1)
    assert len(first["evalsuite/grader.py"]) == 10 and len(first["evalsuite/metrics.py"]) == 7  # all of a small one
    assert set(first["evalsuite/grader.py"]) <= set(by_module["evalsuite/grader.py"])
    assert first != ms.sample(by_module, 10, seed=2)


def test_no_meta_files_is_one_line_not_an_empty_table(ms, tmp_path):
    with pytest.raises(SystemExit, match="no mutants under"):
        ms.mutant_names(tmp_path)


def test_scores_count_only_tested_mutants_and_only_kills_and_timeouts_as_caught(ms):
    sampled = {"evalsuite/grader.py": [f"evalsuite.grader.x_f__mutmut_{i}" for i in range(1, 6)]}
    results = {"evalsuite.grader.x_f__mutmut_1": "killed", "evalsuite.grader.x_f__mutmut_2": "timeout",
               "evalsuite.grader.x_f__mutmut_3": "survived", "evalsuite.grader.x_f__mutmut_4": "no tests",
               "evalsuite.grader.x_f__mutmut_5": "not checked"}
    [row] = ms.scores(sampled, results, {"evalsuite/grader.py": 545})
    module, score, interval, killed, total, survivors = row
    assert (module, score, killed, total) == ("evalsuite/grader.py", "50.0%", "2/4", "545")
    low, high = (float(x) for x in interval.rstrip("%").split("–"))
    assert low < 50 < high  # four mutants say little: the interval is wide
    assert survivors == "x_f__mutmut_3, x_f__mutmut_4"  # the untested one is not a survivor
