import functools
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock
from mutation_support import fastest_first

from evalsuite.domains.ap_exceptions.example import ap_example


def pytest_collection_modifyitems(config, items):
    """Under `make mutation` only: a mutant's fastest tests first (tests/mutation_support.py)."""
    fastest_first(items)


def pytest_xdist_make_scheduler(config, log):
    """Under `pytest -n N` (make test): the tests of a module that defines a module-scoped fixture (an import, a
    build) run on one worker, so the fixture is made once rather than once per worker; every other test is its own
    unit, spread as `--dist load` spreads them. (xdist_group marks would say the same, but xdist 3.8 renames the
    node ids through an attribute pytest 9 no longer reads, so they group nothing.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleFixturesOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if _shares_module_fixture(config.rootpath / module) else nodeid

    return ModuleFixturesOnOneWorker(config, log)


@functools.cache
def _shares_module_fixture(path: Path) -> bool:
    return path.suffix == ".py" and 'scope="module"' in path.read_text()


@pytest.fixture(scope="session", autouse=True)
def session_home(tmp_path_factory):
    """Session fixtures (built suites, releases) also write below a temporary home, never into the checkout."""
    old = os.environ.get("EVALSUITE_HOME")
    os.environ["EVALSUITE_HOME"] = str(tmp_path_factory.mktemp("session_home"))
    yield
    if old is None:
        os.environ.pop("EVALSUITE_HOME", None)
    else:
        os.environ["EVALSUITE_HOME"] = old


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory, monkeypatch):
    """Every test gets its own home folder: nothing is written into the checkout, nothing read from the user's home."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("EVALSUITE_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def ap(tmp_path_factory):
    """The bundled AP example: a built world and its derived tasks, shared by the session."""
    return ap_example(tmp_path_factory.mktemp("ap"))


@pytest.fixture(scope="session")
def tau2_retail_import(tmp_path_factory, worker_id):
    """τ²-bench's retail domain imported once per test run: (this worker's copy of its folder, the import report)."""
    from evalsuite.importers.tau2.importer import ImportReport, import_tau2
    from evalsuite.importers.tau2.sources import RETAIL

    out = made_once(tmp_path_factory, worker_id, "tau2_retail",
                    lambda out: import_tau2(RETAIL, Path(__file__).parents[1] / "third_party" / "tau2_retail", out))
    report = ImportReport.model_validate_json((out / "import_report.json").read_text())
    return out, report.model_copy(update={"out": str(out)})


@pytest.fixture(scope="session")
def built(tmp_path_factory, worker_id):
    """The bundled AP suite (2 reference trials per task) built once per test run to a release by the driver, for
    tests that spoil or score a copy of it: (spec path, home), this worker's copy."""
    from suite_support import DEMO_KEY, SUITE, copy_suite

    from evalsuite.pipeline import driver

    def make(tmp: Path) -> None:
        spec = copy_suite(tmp / "suite")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
            driver.build(spec, tmp / "home")

    tmp = made_once(tmp_path_factory, worker_id, "built", make)
    return tmp / "suite" / f"{SUITE}.yaml", tmp / "home"


def made_once(tmp_path_factory, worker_id: str, name: str, make: Callable[[Path], object]) -> Path:
    """A folder that `make` fills, made once per test run and copied to each xdist worker that asks for it
    (pytest-xdist's recipe for a session fixture made once): the first worker to take the lock makes it, the
    others wait, and each gets a copy of its own to read or change as the one it made itself."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if worker_id != "master" else base) / f"made_once_{name}"
    with FileLock(f"{shared}.lock"):
        if not (shared / ".made").is_file():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            make(shared)
            (shared / ".made").touch()
    mine = tmp_path_factory.mktemp(name)
    shutil.copytree(shared, mine, symlinks=True, dirs_exist_ok=True)
    return mine


@pytest.fixture
def endpoint(monkeypatch):
    """A scripted chat-completions endpoint (tests/scripted_model.py) that OPENAI_BASE_URL points at."""
    from scripted_model import serve

    with serve(monkeypatch) as model:
        yield model
