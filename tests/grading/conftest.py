"""Fixtures of the reward-basis tests: the τ²-bench retail world and the bundled suite's tasks, once a session."""
from __future__ import annotations

import pytest

from evalsuite.core.records import TaskRecord
from tests.grading import retail_bases


@pytest.fixture(scope="session")
def retail(tmp_path_factory):
    return retail_bases.retail_world(tmp_path_factory.mktemp("tau2") / "world.sqlite")


@pytest.fixture(scope="session")
def retail_tasks() -> dict[str, TaskRecord]:
    return retail_bases.retail_tasks()
