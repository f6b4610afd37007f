"""Crash and race safety of builds: a build killed at any moment leaves no partial release, the next build removes
what it left and gives the version of an uninterrupted build, and two builds of one suite never write at once."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from suite_support import DEMO_KEY, ROOT, SUITE, copy_suite

from evalsuite.pipeline import driver
from evalsuite.pipeline.locks import LockError, lock_path, suite_lock, sweep
from evalsuite.pipeline.paths import Paths
from evalsuite.releases.release import Release, ReleaseError, latest_release
from evalsuite.scoring.runlog import SUMMARY
from evalsuite.sourcing.spec import load_spec
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.world import World

HEX = "0123456789abcdef"
BUSY = re.compile(rf"error: suite {SUITE} is being built by another process: \S+/suites/{SUITE}/build\.lock "
                  r"still held after 0 s \(set EVALSUITE_LOCK_TIMEOUT to wait longer\)")

# Run `evalsuite ARGS...` but kill -9 itself at one os.replace (every writer puts its output in place with one):
# `before` it (the output is whole under its temporary name) or just `after` it. The pattern matches "SRC -> DST"
# (base names).
KILL_AT = """
import os, re, signal, sys
when, pattern = sys.argv[1], re.compile(sys.argv[2])
real = os.replace
def replace(src, dst, *args, **kwargs):
    hit = pattern.fullmatch(f"{os.path.basename(src)} -> {os.path.basename(dst)}")
    if hit and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst, *args, **kwargs)
    if hit:
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = replace
sys.argv = ["evalsuite", *sys.argv[3:]]
from evalsuite.cli import app
app()
"""
T = "[0-9a-f]{16}"
# (moment, when, pattern, what the killed build must have left): in this order, so the seed exists to be moved aside.
MOMENTS = [
    ("world file written, not yet in place", "before", rf"\.world\.sqlite-{T}\.tmp -> world\.sqlite",
     rf"\.world\.sqlite-{T}\.tmp"),
    ("old raw seed moved aside, new one not yet in", "after", rf"seed -> \.seed-{T}\.old", rf"\.seed-{T}\.old"),
    ("raw seed staged, not yet in place", "before", rf"\.seed-{T}\.tmp -> seed", rf"\.seed-{T}\.tmp"),
    ("de-identified snapshot staged", "before", rf"\.deidentified-{T}\.tmp -> deidentified",
     rf"\.deidentified-{T}\.tmp"),
    ("release folder written, not yet renamed", "before", rf"\.r[0-9a-f]{{12}}-{T}\.tmp -> r[0-9a-f]{{12}}",
     rf"\.r[0-9a-f]{{12}}-{T}\.tmp"),
]


def build_cmd(spec: Path, home: Path, kill_at: tuple[str, str] | None = None) -> list[str]:
    """`evalsuite build SPEC --home HOME`, killing itself at a moment if asked (see KILL_AT)."""
    runner = ["-c", KILL_AT, *kill_at] if kill_at else ["-m", "evalsuite.cli"]
    return [sys.executable, *runner, "build", str(spec), "--home", str(home)]


def build_env(tmp: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "EVALSUITE_LOCK_TIMEOUT"}
    (tmp / "systmp").mkdir(exist_ok=True)
    return env | {"EVALSUITE_DEID_KEY": DEMO_KEY, "TMPDIR": str(tmp / "systmp"), **extra}


def run(cmd: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def files_under(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for top in ("suites", "releases") for p in (home / top).rglob("*")}


def leftovers(home: Path) -> list[Path]:
    """Temporaries below the home. os.walk, not rglob: a live build renames and removes them while we look, and an
    entry gone between listing and visiting is simply not left over (rglob raised FileNotFoundError on it)."""
    found = []
    for folder, dirs, files in os.walk(home):
        found += [Path(folder) / n for n in dirs + files if n.startswith(".") or n.endswith((".tmp", "-journal"))]
    return sorted(found)


def assert_no_partial_release(home: Path) -> None:
    """Every release a reader can find is whole: its manifest, every task and a world with the seed's hash."""
    folder = home / "releases" / SUITE
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.name.startswith("."):  # still being written: a hidden name no reader takes for a release
            continue
        rel = Release(path)
        assert len(read_tasks(path / "tasks.jsonl")) == rel.manifest.n_tasks, path
        assert rel.open_world().content_sha256 == rel.manifest.seed_sha256, path


def kill_when_a_temporary_appears(cmd: list[str], env: dict, home: Path) -> bool:
    """kill -9 a build from outside the moment a temporary of its own shows in the home; False if it finished first."""
    before = set(leftovers(home))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        if set(leftovers(home)) - before:
            proc.kill()
            proc.wait(timeout=60)
            return True
        time.sleep(0.001)
    return False


@pytest.fixture
def quick_suite(tmp_path) -> Path:
    """The AP suite without its great-expectations file (whose import is most of a build's time): every writer
    of a build still runs, in a second or two."""
    spec = copy_suite(tmp_path / "suite")
    raw = yaml.safe_load(spec.read_text())
    del raw["quality"]
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def test_a_build_killed_at_any_moment_leaves_no_partial_release_and_the_next_build_removes_what_it_left(
        quick_suite, tmp_path, monkeypatch):
    home, env = tmp_path / "home", build_env(tmp_path)
    for moment, when, pattern, left in MOMENTS:
        killed = run(build_cmd(quick_suite, home, (when, pattern)), env)
        assert killed.returncode == -signal.SIGKILL, (moment, killed.stderr[-2000:])
        assert any(re.fullmatch(left, p.name) for p in leftovers(home)), moment  # so this moment was reached
        assert_no_partial_release(home)
        with pytest.raises(ReleaseError):
            latest_release(home / "releases", SUITE)  # the hidden, unrenamed release is never found
    assert kill_when_a_temporary_appears(build_cmd(quick_suite, home), env, home)
    assert_no_partial_release(home)
    assert not list((tmp_path / "systmp").iterdir())  # nothing went outside the home
    done = run(build_cmd(quick_suite, home), env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert leftovers(home) == []
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    fresh = driver.build(quick_suite, tmp_path / "fresh")
    assert json.loads(done.stdout)["version"] == fresh.version
    assert files_under(home) == files_under(tmp_path / "fresh")  # what an uninterrupted build leaves, nothing stray


def race(spec: Path, home: Path, env: dict) -> list[subprocess.CompletedProcess]:
    procs = [subprocess.Popen(build_cmd(spec, home), env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    return [subprocess.CompletedProcess(p.args, p.returncode, o, e) for p, (o, e) in zip(procs, outs)]


@pytest.fixture(scope="module")
def uninterrupted(built) -> str:
    """The version of the suite built without interruption in a fresh home."""
    spec, home = built
    return latest_release(home / "releases", SUITE).manifest.version


def test_of_two_builds_started_together_one_builds_and_one_stops_with_one_line(uninterrupted, tmp_path):
    env = build_env(tmp_path, EVALSUITE_LOCK_TIMEOUT="0")
    runs = race(copy_suite(tmp_path / "suite"), tmp_path / "home", env)
    done, stopped = [r for r in runs if r.returncode == 0], [r for r in runs if r.returncode == 2]
    assert len(done) == len(stopped) == 1, [(r.returncode, r.stderr[-3000:]) for r in runs]
    assert json.loads(done[0].stdout)["version"] == uninterrupted
    assert BUSY.fullmatch(stopped[0].stderr.strip()), stopped[0].stderr  # one line, no traceback
    assert stopped[0].stdout == ""
    assert leftovers(tmp_path / "home") == []


def test_a_second_build_waits_for_the_first_and_gives_the_same_version(quick_suite, tmp_path):
    runs = race(quick_suite, tmp_path / "home", build_env(tmp_path))
    assert [r.returncode for r in runs] == [0, 0], [r.stderr[-3000:] for r in runs]
    assert len({json.loads(r.stdout)["version"] for r in runs}) == 1
    for r in runs:  # at most the one line saying it waits
        assert re.fullmatch(rf"(suite {SUITE} is being built by another process; waiting up to 600 s for \S+\n)?",
                            r.stderr), r.stderr
    assert leftovers(tmp_path / "home") == []


def test_a_dagster_stage_takes_the_suite_lock(tmp_path, monkeypatch):
    import dagster as dg

    from evalsuite_dagster.resources import EvalsuiteHome
    from evalsuite_dagster.suite.graph import build_suite_graph

    spec = copy_suite(tmp_path / "suite")
    home = tmp_path / "home"
    paths = Paths(load_spec(spec), home)
    rights_review = next(a for a in build_suite_graph(spec).assets if a.key.path[-1] == "rights_review")
    monkeypatch.setenv("EVALSUITE_LOCK_TIMEOUT", "0")
    run = lambda: list(rights_review(dg.build_asset_context(), home=EvalsuiteHome(home=str(home))))  # noqa: E731
    with held_elsewhere(paths):
        with pytest.raises(LockError, match=f"suite {SUITE} is being built by another process"):
            run()
        assert not paths.rights.exists()
    assert [type(r).__name__ for r in run()] == ["MaterializeResult"]
    assert paths.rights.is_file()


@contextmanager
def held_elsewhere(paths: Paths) -> Iterator[None]:
    """The suite's lock held by another process, as a running build holds it."""
    path = lock_path(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    code = ("import filelock, sys, time; lock = filelock.FileLock(sys.argv[1]); lock.acquire(); "
            "print('held', flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        yield
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def paths(tmp_path) -> Paths:
    return Paths(load_spec(ROOT / "suites" / f"{SUITE}.yaml"), tmp_path / "home")


def make(path: Path, folder: bool = False) -> Path:
    """A file at path, or a folder holding one, as a writer leaves it."""
    target = path / "invoices.parquet" if folder else path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"raw")
    return path


def test_the_sweep_removes_only_what_a_killed_writer_of_this_suite_left(paths):
    suite, releases, home = paths.root, paths.releases / SUITE, paths.home
    ours = [make(suite / f".seed-{HEX}.tmp", folder=True), make(suite / f".seed-{HEX}.old", folder=True),
            make(suite / f".deidentified-{HEX}.tmp", folder=True), make(suite / f".world.sqlite-{HEX}.tmp"),
            make(suite / f".world.sqlite-{HEX}.tmp-journal"), make(suite / "acceptance" / f".audit.json-{HEX}.tmp"),
            make(suite / "world.tmp"), make(suite / "world.tmp-journal"),
            make(releases / f".r0123456789ab-{HEX}.tmp", folder=True)]
    kept = [make(suite / "seed", folder=True), make(suite / "world.sqlite"), make(suite / "tasks.jsonl"),
            make(suite / "build.lock"), make(suite / "notes.tmp"), make(suite / "seed" / "world.tmp"),
            make(suite / f".seed-{HEX[:-1]}.tmp"), make(suite / f".seed-{HEX.upper()}.tmp"),
            make(suite / f"seed-{HEX}.tmp"), make(suite / f".seed-{HEX}.tmpx"), make(suite / ".hidden"),
            make(releases / "r0123456789ab", folder=True),
            make(home / "suites" / "other" / f".seed-{HEX}.tmp", folder=True),  # another suite's build may be writing
            make(home / "releases" / "other" / f".r1-{HEX}.tmp", folder=True),
            make(home / "runs" / SUITE / f".{SUMMARY}-{HEX}.tmp")]  # trial runs do not take the build lock
    assert sorted(sweep(paths)) == sorted(ours)
    assert not any(p.exists() for p in ours)
    assert all(p.exists() for p in kept)
    assert sweep(paths) == []


def test_taking_the_lock_sweeps_once_and_a_build_inside_a_build_does_not_wait(paths):
    left = make(paths.root / f".seed-{HEX}.tmp", folder=True)
    with suite_lock(paths) as swept:
        assert swept == [left] and not left.exists()
        make(paths.root / f".tasks.jsonl-{HEX}.tmp")
        with suite_lock(paths) as inner:  # the same thread again: reentrant, and nothing of its own is swept
            assert inner == []
        assert (paths.root / f".tasks.jsonl-{HEX}.tmp").exists()


def test_a_held_lock_stops_a_build_with_one_line_naming_the_suite_and_the_lock_file(paths, monkeypatch):
    monkeypatch.setenv("EVALSUITE_LOCK_TIMEOUT", "0.2")
    with held_elsewhere(paths):
        started = time.monotonic()
        with pytest.raises(LockError) as err:
            with suite_lock(paths):
                pass
        assert time.monotonic() - started >= 0.2  # it waited the timeout first
    assert str(err.value) == (f"suite {SUITE} is being built by another process: {lock_path(paths)} still held "
                              "after 0.2 s (set EVALSUITE_LOCK_TIMEOUT to wait longer)")
    with suite_lock(paths):  # the holder is gone: the kernel released its lock
        pass


@pytest.mark.parametrize("value", ["soon", "-1", "nan"])
def test_a_bad_lock_timeout_is_one_line_naming_the_setting(paths, monkeypatch, value):
    monkeypatch.setenv("EVALSUITE_LOCK_TIMEOUT", value)
    with pytest.raises(LockError, match=rf"^EVALSUITE_LOCK_TIMEOUT: expected seconds to wait \(a number, 0 or more\), "
                                        rf"got '{value}'$"):
        with suite_lock(paths):
            pass


def test_two_world_builds_into_one_file_do_not_share_a_temporary(ap, tmp_path):
    """The second starts while the first is half-written (as two builds in one home once did, on world.tmp)."""
    tables = {k: v for k, v in ap.tables.items() if k in ap.world.domain.tables}
    inner = []

    def rows_then_build_again(rows):  # the first build's rows: read only once its file is open and half-filled
        inner.append(World.build(ap.world.domain, tables, tmp_path / "w.sqlite"))
        yield from rows

    first = next(iter(tables))
    outer = World.build(ap.world.domain, {**tables, first: rows_then_build_again(tables[first])}, tmp_path / "w.sqlite")
    assert outer.content_sha256 == inner[0].content_sha256 == ap.world.content_sha256
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.sqlite"]  # no temporary left beside it
