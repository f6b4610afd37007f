"""Held-out tasks never reach training exports, and every read of them is logged."""
import json
import subprocess
import sys

from evalsuite.releases.release import Release, ReleaseManifest, write_release
from evalsuite.tasks.heldout import export_tasks
from evalsuite.tasks.taskfile import task_set_sha256


def _release(ap, tmp_path):
    m = ReleaseManifest(suite="ap", version="r-test", domain="ap_exceptions", task_set_sha256=task_set_sha256(ap.tasks),
                        seed_sha256=ap.world.seed_sha256,
                        environment_image="img", tool_schemas_sha256="t", policy_versions=[], rights_decision={},
                        acceptance={}, quarantined=[], n_tasks=len(ap.tasks))
    return write_release(tmp_path / "releases", m, ap.tasks, ap.world.path)


def test_training_export_excludes_held_out_tasks(ap):
    held = {t.task_id for t in ap.tasks if t.split == "held_out"}
    assert held, "the AP example must have held-out tasks"
    for purpose in ("training", "prompt_tuning"):
        assert not held & {t.task_id for t in export_tasks(ap.tasks, purpose)}
    assert held <= {t.task_id for t in export_tasks(ap.tasks, "evaluation")}


def test_every_read_of_held_out_tasks_is_logged(ap, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("EVALSUITE_USER", "auditor-7")
    rel = Release(_release(ap, tmp_path))
    rel.tasks(purpose="review")
    lines = (tmp_path / "home" / "access_log.jsonl").read_text().splitlines()
    entry = json.loads(lines[-1])
    assert entry["who"] == "auditor-7" and entry["purpose"] == "review" and entry["what"] == "ap/r-test"
    assert set(entry["held_out_tasks"]) == {t.task_id for t in ap.tasks if t.split == "held_out"}
    assert entry["when"].startswith("20")


def test_export_command_for_training_drops_held_out(ap, tmp_path):
    path = _release(ap, tmp_path)
    out = tmp_path / "train.jsonl"
    r = subprocess.run([sys.executable, "-m", "evalsuite.cli", "export", str(path), "--purpose", "training",
                        "--out", str(out)],
                       capture_output=True, text=True,
                       env={"EVALSUITE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert exported and all(t["split"] != "held_out" for t in exported)
    assert len(exported) == sum(t.split != "held_out" for t in ap.tasks)
