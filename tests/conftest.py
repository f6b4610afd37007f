import os
from pathlib import Path

import pytest
from mutation_support import fastest_first

from evalsuite.domains.ap_exceptions.example import ap_example


def pytest_collection_modifyitems(config, items):
    """Under `make mutation` only: a mutant's fastest tests first (tests/mutation_support.py)."""
    fastest_first(items)


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
def tau2_retail_import(tmp_path_factory):
    """τ²-bench's retail domain imported once per test process: (its folder, the import report)."""
    from evalsuite.importers.tau2.importer import import_tau2
    from evalsuite.importers.tau2.sources import RETAIL

    out = tmp_path_factory.mktemp("tau2_retail")
    return out, import_tau2(RETAIL, Path(__file__).parents[1] / "third_party" / "tau2_retail", out)


@pytest.fixture(scope="session")
def agentdojo_travel_import(tmp_path_factory):
    """AgentDojo's travel suite imported once per test process: (its folder, the import report)."""
    from evalsuite.importers.agentdojo.importer import SUITES, import_agentdojo

    out = tmp_path_factory.mktemp("agentdojo_travel")
    return out, import_agentdojo(SUITES["travel"], Path(__file__).parents[1] / "third_party" / "agentdojo_travel", out)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The bundled AP suite (2 reference trials per task) built once per test process to a release by the driver,
    for tests that spoil or score a copy of it: (spec path, home)."""
    from suite_support import DEMO_KEY, copy_suite

    from evalsuite.pipeline import driver

    tmp = tmp_path_factory.mktemp("built")
    spec = copy_suite(tmp / "suite")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
        driver.build(spec, tmp / "home")
    return spec, tmp / "home"


@pytest.fixture
def endpoint(monkeypatch):
    """A scripted chat-completions endpoint (tests/scripted_model.py) that OPENAI_BASE_URL points at."""
    from scripted_model import serve

    with serve(monkeypatch) as model:
        yield model
