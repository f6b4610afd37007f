"""Release history: a suite's releases listed newest first, and two releases diffed task by task and field by field."""
import json
import os
import shutil

from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages.suite_release import diff_markdown
from evalsuite.releases.history import diff_releases, releases
from evalsuite.releases.release import Quarantined, Release, latest_release
from evalsuite.sourcing.spec import load_spec
from evalsuite.tasks.taskfile import read_tasks, task_set_sha256


def _edited_release(built, tmp_path):
    """A second release beside the built one: one task removed, one added, two edited, one quarantined, a new seed."""
    spec = load_spec(built[0])
    root = tmp_path / "releases"
    built_releases = Paths(spec, built[1]).releases
    first = root / spec.name / latest_release(built_releases, spec.name).path.name
    shutil.copytree(built_releases, root)
    second = root / spec.name / "v-edited"
    shutil.copytree(first, second)
    records = [json.loads(line) for line in (second / "tasks.jsonl").read_text().splitlines()]
    removed = records.pop(0)["task_id"]
    records[0]["reference_answer"] = "changed"
    records[1]["reference_answer"] = "also changed"
    records[1]["policy"]["version"] = "99"
    added = dict(records[2], task_id="zz-added")
    records.append(added)
    (second / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    manifest = json.loads((second / "manifest.json").read_text())
    flaky = Quarantined(task_id=removed, reasons=["flaky"]).model_dump()
    manifest.update(version="v-edited", task_set_sha256=task_set_sha256(read_tasks(second / "tasks.jsonl")),
                    n_tasks=len(records), seed_sha256="f" * 64, quarantined=manifest["quarantined"] + [flaky])
    (second / "manifest.json").write_text(json.dumps(manifest))
    os.utime(second, (first.stat().st_mtime + 60,) * 2)
    return spec, root, Release(first), Release(second), removed, records


def test_list_is_newest_first_with_counts(built, tmp_path):
    spec, root, first, second, _, records = _edited_release(built, tmp_path)
    rows = releases(root, spec.name)
    assert [r.version for r in rows] == ["v-edited", first.manifest.version]
    assert rows[0].n_tasks == len(records) and rows[0].quarantined == len(first.manifest.quarantined) + 1
    assert rows[0].created_from == "folder mtime" and rows[0].seed_sha256 == "f" * 64


def test_diff_names_added_removed_and_changed_fields(built, tmp_path):
    spec, root, first, second, removed, records = _edited_release(built, tmp_path)
    d = diff_releases(first, second)
    assert d.added == ["zz-added"] and d.removed == [removed]
    assert {c.task_id: c.fields for c in d.changed} == {
        records[0]["task_id"]: ["reference_answer"], records[1]["task_id"]: ["policy.version", "reference_answer"]}
    assert [(q.task_id, q.change, q.reasons) for q in d.quarantine] == [(removed, "entered", ["flaky"])]
    assert [f.field for f in d.manifest] == ["seed_sha256"]
    md = diff_markdown(d)
    assert "policy.version" in md and "flaky" in md and "zz-added" in md


def test_a_release_diffed_with_itself_is_empty(built, tmp_path):
    _, _, first, _, _, _ = _edited_release(built, tmp_path)
    d = diff_releases(first, first)
    assert d.empty and diff_markdown(d) == f"No change from {first.manifest.version}."


def test_cli_list_and_diff_by_version(built, tmp_path):
    spec, root, first, second, removed, _ = _edited_release(built, tmp_path)
    home = str(root.parent)
    listed = CliRunner().invoke(app, ["releases", "list", str(built[0]), "--home", home])
    assert listed.exit_code == 0, listed.output
    assert listed.output.index("v-edited") < listed.output.index(first.manifest.version)
    out = CliRunner().invoke(app, ["releases", "diff", first.manifest.version, "v-edited",
                                   "--suite", str(built[0]), "--home", home])
    assert out.exit_code == 0, out.output
    assert "1 added, 1 removed, 2 changed" in out.output and f"- {removed}" in out.output
    assert f"quarantine entered: {removed} (flaky)" in out.output


def test_cli_bad_input_is_one_line_exit_2(built, tmp_path):
    spec, root, first, _, _, _ = _edited_release(built, tmp_path)
    out = CliRunner().invoke(app, ["releases", "diff", str(first.path), "nope",
                                   "--suite", str(built[0]), "--home", str(root.parent)])
    assert out.exit_code == 2 and out.output.strip().splitlines() == [
        f"error: nope: no release nope of suite {spec.name} in {root / spec.name}"]
    none = CliRunner().invoke(app, ["releases", "list", str(built[0]), "--home", str(tmp_path / "empty")])
    assert none.exit_code == 2 and len(none.output.strip().splitlines()) == 1 and "no release of suite" in none.output


def test_suite_release_metadata_carries_the_diff_against_the_previous_release(built, tmp_path):
    from evalsuite.pipeline.stages.suite_release import _changes

    spec, root, first, second, removed, _ = _edited_release(built, tmp_path)
    md = _changes(second, Paths(spec, root.parent))
    assert f"From `{first.manifest.version}` to `v-edited`" in md and removed in md and "seed_sha256" in md
    shutil.rmtree(second.path)
    assert _changes(first, Paths(spec, root.parent)) == "First release of this suite."


def test_cli_list_and_diff_take_the_suite_by_the_name_a_user_types(built, tmp_path):
    spec, root, first, _, _, _ = _edited_release(built, tmp_path)
    home = str(root.parent)
    by_name = CliRunner().invoke(app, ["releases", "list", spec.name, "--home", home])
    by_spec = CliRunner().invoke(app, ["releases", "list", str(built[0]), "--home", home])
    assert by_name.exit_code == 0, by_name.output
    assert by_name.output == by_spec.output and "v-edited" in by_name.output
    diffed = CliRunner().invoke(app, ["releases", "diff", first.manifest.version, "v-edited", "--suite", spec.name,
                                      "--home", home])
    assert diffed.exit_code == 0 and "1 added, 1 removed, 2 changed" in diffed.output, diffed.output
    unknown = CliRunner().invoke(app, ["releases", "list", "no_such_suite", "--home", home])
    assert unknown.exit_code == 2 and "no release of suite no_such_suite" in unknown.stderr
    odd = CliRunner().invoke(app, ["releases", "list", "Not A Suite", "--home", home])
    assert odd.exit_code == 2 and "neither a suite name" in odd.stderr
