"""`evalsuite export inspect RELEASE --out DIR`: write an Inspect AI task file for a release.

DIR/task.py holds one @task that builds the Inspect task from the release folder
(evalsuite.exporters.inspect_ai_task.release_task), so `inspect eval DIR/task.py@NAME
--model PROVIDER/MODEL` (the `@NAME` form also takes an absolute path) runs the release's tasks on any model
provider Inspect supports, graded by our grader. The release is referenced, not copied: its
task set hash is checked when the task loads.
"""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from evalsuite.core.io import atomic_write
from evalsuite.releases.release import Release

TASK_FILE = '''"""Inspect AI task for release {suite} {version} (task set {task_set}), \
written by `evalsuite export inspect`.

Run: inspect eval {task_py}@{name} --model PROVIDER/MODEL   (mockllm/model tries it without a provider)
Samples: {samples} task(s) of the release ({left_out} held-out or conversational task(s) left out); epochs: {epochs}.
"""
from inspect_ai import task

from evalsuite.exporters.inspect_ai_task import release_task

RELEASE = {release!r}


@task
def {name}():
    return release_task(RELEASE)
'''


class InspectExport(BaseModel):
    task_file: Path
    task_name: str
    samples: int
    left_out: int
    epochs: int


def export_inspect(release_path: str | Path, out_dir: str | Path) -> InspectExport:
    """Write out_dir/task.py for the release at release_path (refused in one line if it is not a release)."""
    from evalsuite.exporters.inspect_ai_task import PURPOSE, exportable  # here: only an export needs inspect-ai

    release = Release(Path(release_path).resolve())
    tasks = release.tasks(purpose=PURPOSE)
    kept = exportable(tasks)
    m = release.manifest
    name = re.sub(r"\W", "_", f"{m.suite}_{m.version}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    epochs = max((t.trial_protocol.trials for t in kept), default=1)
    task_py = out / "task.py"
    atomic_write(task_py, TASK_FILE.format(suite=m.suite, version=m.version, task_set=m.task_set_sha256[:12],
                                           task_py=task_py, samples=len(kept), left_out=len(tasks) - len(kept),
                                           epochs=epochs, release=str(release.path), name=name))
    return InspectExport(task_file=task_py, task_name=name, samples=len(kept), left_out=len(tasks) - len(kept),
                         epochs=epochs)
