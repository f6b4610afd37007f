"""A built suite's review desk: its current derived tasks beside its review ledger, for `evalsuite review`."""
from __future__ import annotations

from pathlib import Path

from evalsuite.audit.reviews import (
    ReviewError,
    ReviewState,
    SignedAll,
    by_task,
    describe,
    review_state,
    status_lines,
)
from evalsuite.core.home import home_dir
from evalsuite.core.records import TaskRecord
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages.acceptance_results import ledger
from evalsuite.sourcing.spec import load_spec
from evalsuite.tasks.taskfile import read_tasks


class ReviewDesk:
    """The tasks of a suite as last built in a home, and the ledger their sign-offs go to."""

    def __init__(self, spec_path: str | Path, home: Path | None = None):
        self.spec_path = Path(spec_path)
        self.spec = load_spec(spec_path)
        root = home_dir(home)
        if not (root / "suites" / self.spec.name / "tasks.jsonl").is_file():  # before Paths, which creates the home
            raise ReviewError(f"suite {self.spec.name} has not been built in {root} "
                              f"(run `evalsuite build {spec_path}` first)")
        self.paths = Paths(self.spec, root)
        self.tasks = {t.task_id: t for t in read_tasks(self.paths.tasks)}
        self.ledger = ledger(self.paths)

    def task(self, task_id: str) -> TaskRecord:
        if task_id not in self.tasks:
            raise ReviewError(f"{self.paths.tasks}: --task: no task {task_id!r} in the suite's current tasks")
        return self.tasks[task_id]

    def status(self) -> list[str]:
        """The counts line, then what each task not yet adjudicated still needs."""
        entries = by_task(self.ledger.entries())  # grouped once: review_state reads only its task's entries
        return status_lines([review_state(t, entries.get(t.task_id, [])) for t in self.tasks.values()])

    def show(self, task_id: str) -> str:
        task = self.task(task_id)
        return describe(task, review_state(task, self.ledger.entries()))

    def sign(self, task_id: str, reviewer: str, decision: str, note: str = "") -> ReviewState:
        return self.ledger.sign(self.task(task_id), reviewer, decision, note)

    def sign_all(self, reviewer: str, decision: str, note: str = "") -> SignedAll:
        return self.ledger.sign_all(list(self.tasks.values()), reviewer, decision, note)

    def resolve(self, task_id: str, by: str, resolution: str) -> ReviewState:
        return self.ledger.resolve(self.task(task_id), by, resolution)

    def seal(self) -> int:
        return self.ledger.seal()

    def adjudication_note(self) -> str | None:
        """Where the suite does not require adjudication, how to make its sign-offs gate a release."""
        if self.spec.acceptance.require_adjudication:
            return None
        return (f"note: {self.spec_path} does not require adjudication, so sign-offs do not gate its releases; "
                "set `acceptance.require_adjudication: true` in the spec and rebuild to make them count")
