"""`make bench`'s runner: it runs exactly the scripts that follow the --json convention, records failures without
stopping, writes results.json and puts the table between the markers of the docs' scaling page, targets first."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

FAKE = f'''
import sys
sys.path.insert(0, {str(BENCH)!r})
import benchlib
ap = benchlib.parser("A fake benchmark.")
args = ap.parse_args()
res = benchlib.Result("fake", benchlib.command_line())
res.add("fake reset", [1.0, 3.0, 2.0], "ms", target="≤ 1.5 ms", met=False, note="1.3× the target")
res.add("fake rate", [10.0, 20.0], "trials/s")
res.write(args.json)
'''


@pytest.fixture
def run_all(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.syspath_prepend(str(BENCH))
    spec.loader.exec_module(module)
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "bench_fake.py").write_text(FAKE)
    (bench / "bench_broken.py").write_text('import sys\nprint("boom")\nsys.exit(3)  # takes "--json" but fails\n')
    (bench / "bench_old.py").write_text("print('no convention here')\n")
    page = tmp_path / "scaling.md"
    page.write_text("# x\n\n## Scaling\n\n<!-- bench:table:start -->\nold\n<!-- bench:table:end -->\n\n## Next\n")
    monkeypatch.setattr(module, "BENCH", bench)
    monkeypatch.setattr(module, "RESULTS", bench / "results.json")
    monkeypatch.setattr(module, "PAGE", page)
    monkeypatch.setattr(sys, "argv", ["run_all.py"])
    return module, bench, page


def test_runs_the_convention_scripts_and_writes_results_and_the_page_table(run_all):
    module, bench, page = run_all
    assert module.main() == 1  # bench_broken failed, and says so in the exit status
    results = json.loads((bench / "results.json").read_text())
    assert set(results["scripts"]) == {"bench_fake", "bench_broken"}
    assert results["skipped"] == {"bench_old.py": "takes no --json (not part of make bench)"}
    fake = results["scripts"]["bench_fake"]["result"]
    assert [(r["what"], r["median"], r["min"], r["max"], r["n"]) for r in fake["rows"]] == [
        ("fake reset", 2.0, 1.0, 3.0, 3), ("fake rate", 15.0, 10.0, 20.0, 2)]
    assert len(fake["load_average_before"]) == 3 and "bench_fake.py" in fake["command"]
    broken = results["scripts"]["bench_broken"]
    assert broken["error"].startswith("exit status 3") and "boom" in broken["output_tail"]
    text = page.read_text()
    assert text.startswith("# x\n\n## Scaling\n\n<!-- bench:table:start -->\n") and text.endswith(
        "<!-- bench:table:end -->\n\n## Next\n") and "\nold\n" not in text
    targets = text.split("| what | median | min–max | target |")[1].split("<details")[0]
    assert "| fake reset | 2 ms | 1–3 | ≤ 1.5 ms | **missed** | 1.3× the target |" in targets
    assert "fake rate" not in targets and "| fake rate | 15 trials/s | 10–20 |" in text
    assert "**failed: exit status 3" in text


def test_only_reruns_the_named_scripts_and_keeps_the_others(run_all, monkeypatch):
    module, bench, page = run_all
    module.main()
    (bench / "bench_broken.py").write_text("# takes '--json' and now works\n" + FAKE)
    monkeypatch.setattr(sys, "argv", ["run_all.py", "--only", "bench_broken"])
    assert module.main() == 0
    results = json.loads((bench / "results.json").read_text())
    assert "result" in results["scripts"]["bench_broken"] and "result" in results["scripts"]["bench_fake"]
    # the header still dates the whole run, and names what was rerun since and when
    full, rerun = results["full_run"]["finished"], results["reruns"][0]
    assert rerun["scripts"] == ["bench_broken"]
    assert f"Measured by `make bench` on {full} in " in page.read_text()
    assert f"Rerun since with `--only` on {rerun['finished']}" in page.read_text()


def test_a_page_without_the_markers_is_refused(run_all):
    module, bench, page = run_all
    page.write_text("# no markers\n")
    with pytest.raises(SystemExit, match="marker"):
        module.main()
