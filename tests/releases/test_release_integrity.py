"""A release's task file is read only while it still hashes to the task set its manifest (and version) names."""
import json
import shutil

import pytest

from evalsuite.pipeline.paths import Paths
from evalsuite.releases.release import Release, ReleaseError, latest_release
from evalsuite.sourcing.spec import load_spec


def _copy(built, tmp_path) -> Release:
    """A copy of the built release, to spoil."""
    spec = load_spec(built[0])
    dest = tmp_path / "rel"
    shutil.copytree(latest_release(Paths(spec, built[1]).releases, spec.name).path, dest)
    return Release(dest)


def test_an_untouched_release_reads_all_its_tasks(built, tmp_path):
    rel = _copy(built, tmp_path)
    assert len(rel.tasks()) == rel.manifest.n_tasks


def test_a_task_file_cut_at_a_line_boundary_is_refused(built, tmp_path):
    rel = _copy(built, tmp_path)
    path = rel.path / "tasks.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))
    with pytest.raises(ReleaseError, match=r"tasks\.jsonl: 48 task\(s\) do not hash to the manifest's task set"):
        rel.tasks()


def test_a_goal_edited_after_release_is_refused(built, tmp_path):
    rel = _copy(built, tmp_path)
    path = rel.path / "tasks.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["reference_answer"] = (records[0].get("reference_answer") or "") + " (edited)"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ReleaseError, match="changed after release"):
        rel.tasks()
