"""`make mutation`: a mutant's tests run fastest first (tests/mutation_support.py), so a killed mutant stops early."""
import json
from types import SimpleNamespace

from mutation_support import fastest_first


def _items(*nodeids):
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_a_mutant_s_tests_run_fastest_first_by_mutmut_s_own_durations(tmp_path, monkeypatch):
    (tmp_path / "mutmut-stats.json").write_text(json.dumps({"duration_by_test": {"t::slow": 10.8, "t::fast": 0.1,
                                                                                  "t::middle": 1.7}}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MUTANT_UNDER_TEST", "evalsuite.grading.grader.x_grade__mutmut_3")
    items = _items("t::slow", "t::new", "t::middle", "t::fast")
    fastest_first(items)
    assert [i.nodeid for i in items] == ["t::new", "t::fast", "t::middle", "t::slow"]


def test_outside_a_mutant_the_order_is_pytest_s(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no stats file: nothing is read
    for value in ("", "stats", "fail"):
        monkeypatch.setenv("MUTANT_UNDER_TEST", value)
        items = _items("t::slow", "t::fast")
        fastest_first(items)
        assert [i.nodeid for i in items] == ["t::slow", "t::fast"]
