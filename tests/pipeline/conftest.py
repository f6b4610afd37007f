"""The bundled AP suite built once per test process by the driver, for tests that spoil or score a copy of it."""
from __future__ import annotations

import pytest

from evalsuite.pipeline import driver
from suite_support import DEMO_KEY, copy_suite


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The bundled AP suite (2 reference trials per task) built once to a release by the driver."""
    tmp = tmp_path_factory.mktemp("built")
    spec = copy_suite(tmp / "suite")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
        driver.build(spec, tmp / "home")
    return spec, tmp / "home"


