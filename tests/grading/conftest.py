"""Fixtures of the reward-basis tests: the τ²-bench retail world and the bundled suite's tasks, once a session."""
from __future__ import annotations

import json

import pytest

from evalsuite.core.records import TaskRecord
from evalsuite.domains.tau2_retail import build_world
from evalsuite.tasks.taskfile import read_tasks
from tests.grading.retail_bases import ROOT


@pytest.fixture(scope="session")
def retail(tmp_path_factory):
    return build_world(json.loads((ROOT / "third_party/tau2_retail/db.json").read_text()),
                       tmp_path_factory.mktemp("tau2") / "world.sqlite")


@pytest.fixture(scope="session")
def retail_tasks() -> dict[str, TaskRecord]:
    return {t.task_id: t for t in read_tasks(ROOT / "suites/tau2_retail/tasks.jsonl")}
