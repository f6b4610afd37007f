"""Loading the code location: a bad suite spec shows up as an invalid-spec asset and the other suites still load;
`dagster definitions validate` works from the project root with no environment variables set."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import yaml
from suite_support import ROOT, SUITE, copy_suite

INVALID = "invalid_suite_specs"
DAGSTER = str(Path(sys.executable).parent / "dagster")


def load_location(monkeypatch, *specs: Path) -> dg.Definitions:
    """The code location's definitions loaded afresh from its defs folder, as Dagster loads them, with
    EVALSUITE_SUITES listing these specs."""
    monkeypatch.setenv("EVALSUITE_SUITES", os.pathsep.join(str(s) for s in specs))
    monkeypatch.syspath_prepend(str(ROOT / "assets"))
    defs = dg.load_from_defs_folder(path_within_project=ROOT / "assets")
    dg.Definitions.validate_loadable(defs)  # what loading the location in the UI does
    return defs


def specs_of(defs: dg.Definitions) -> dict[dg.AssetKey, dg.AssetSpec]:
    return {s.key: s for s in defs.resolve_all_asset_specs()}


def variant(good: Path, dest: Path, **changes) -> Path:
    """A copy of the good spec beside it (same data), with some top-level keys changed or added."""
    raw = yaml.safe_load(good.read_text())
    dest.write_text(yaml.safe_dump({**raw, **changes}, sort_keys=False))
    return dest


def test_bad_specs_are_shown_as_invalid_and_the_good_suite_loads(tmp_path, monkeypatch):
    good = copy_suite(tmp_path / "suites")
    broken = tmp_path / "suites" / "broken.yaml"
    broken.write_text("name: [ap_exceptions\ndomain: ap_exceptions\n")
    unknown = variant(good, tmp_path / "suites" / "typo.yaml", name="typo_suite", bogus_key=1)

    specs = specs_of(load_location(monkeypatch, good, broken, unknown))

    assert dg.AssetKey([SUITE, "suite_release"]) in specs and dg.AssetKey([SUITE, "leaderboard"]) in specs
    assert specs[dg.AssetKey([SUITE, "suite_release"])].group_name == SUITE
    bad = {k: s for k, s in specs.items() if s.group_name == INVALID}
    assert set(bad) == {dg.AssetKey([INVALID, "broken"]), dg.AssetKey([INVALID, "typo"])}
    yaml_error = bad[dg.AssetKey([INVALID, "broken"])].description
    key_error = bad[dg.AssetKey([INVALID, "typo"])].description
    assert yaml_error.startswith(f"{broken}:") and "malformed YAML" in yaml_error and "\n" not in yaml_error
    assert key_error.startswith(f"{unknown}: bogus_key: ") and "unknown key" in key_error and "\n" not in key_error
    assert not any(k.path[0] == "typo_suite" for k in specs)
    assert {k.path[0] for k in specs} == {SUITE, INVALID}  # the listed specs replace the bundled suites


def test_a_second_spec_with_a_taken_suite_name_is_invalid_and_the_first_loads(tmp_path, monkeypatch):
    first = copy_suite(tmp_path / "a")
    second = copy_suite(tmp_path / "b")

    defs = load_location(monkeypatch, first, second)

    specs = specs_of(defs)
    assert dg.AssetKey([SUITE, "suite_release"]) in specs
    assert defs.resolve_job_def(f"{SUITE}__build_job") is not None
    bad = [s for s in specs.values() if s.group_name == INVALID]
    assert [s.key for s in bad] == [dg.AssetKey([INVALID, SUITE])]
    assert bad[0].description == f"{second}: name: suite name {SUITE} is already used by {first}"


def bundled_project(root: Path, specs: dict[str, Path]) -> Path:
    """A project whose defs folder holds the shared resources and one SuiteComponent instance per entry (folder
    name: spec file)."""
    (root / "pyproject.toml").write_text('[tool.dg.project]\nroot_module = "bundled"\n')
    for module in (root / "bundled", root / "bundled" / "defs"):
        module.mkdir(parents=True, exist_ok=True)
        (module / "__init__.py").write_text("")
    (root / "bundled" / "defs" / "shared").mkdir()
    (root / "bundled" / "defs" / "shared" / "defs.yaml").write_text("type: evalsuite_dagster.SharedResources\n")
    for folder, spec in specs.items():
        (root / "bundled" / "defs" / folder).mkdir()
        (root / "bundled" / "defs" / folder / "defs.yaml").write_text(yaml.safe_dump(
            {"type": "evalsuite_dagster.suite.component.SuiteComponent", "attributes": {"spec": str(spec)}}))
    return root / "bundled" / "defs"


def test_two_bundled_instances_of_one_suite_name_give_the_first_and_an_invalid_spec(tmp_path, monkeypatch):
    project = tmp_path / "project"
    first, second = copy_suite(project / "a"), copy_suite(project / "b")
    defs_folder = bundled_project(project, {"one": first.relative_to(project), "two": second.relative_to(project)})
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.delenv("EVALSUITE_SUITES", raising=False)

    defs = dg.load_from_defs_folder(path_within_project=project)
    dg.Definitions.validate_loadable(defs)

    specs = specs_of(defs)
    assert dg.AssetKey([SUITE, "suite_release"]) in specs
    bad = [s for s in specs.values() if s.group_name == INVALID]
    assert [s.key for s in bad] == [dg.AssetKey([INVALID, SUITE])]
    assert bad[0].description == (f"{defs_folder / 'two' / 'defs.yaml'}: spec: suite name {SUITE} of {second} is "
                                  f"already used by {defs_folder / 'one' / 'defs.yaml'}")


def test_a_spec_with_a_schedule_that_is_not_cron_is_an_invalid_spec_in_one_line(tmp_path, monkeypatch):
    """Dagster would reject the schedule at load; the spec's own check refuses it first, naming the field."""
    good = copy_suite(tmp_path / "suites")
    cron = variant(good, tmp_path / "suites" / "weekly.yaml", name="weekly", schedule="every tuesday")

    specs = specs_of(load_location(monkeypatch, good, cron))

    assert dg.AssetKey([SUITE, "suite_release"]) in specs and not any(k.path[0] == "weekly" for k in specs)
    error = specs[dg.AssetKey([INVALID, "weekly"])].description
    assert error.startswith(f"{cron}: schedule: 'every tuesday' is not a cron string")
    assert "\n" not in error


def test_materializing_an_invalid_spec_fails_with_its_error(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere.yaml"
    defs = load_location(monkeypatch, missing)

    key = dg.AssetKey([INVALID, "nowhere"])
    error = specs_of(defs)[key].description
    assert error.startswith(f"{missing}:") and "not found" in error
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        result = dg.materialize([defs.resolve_assets_def(key)], instance=instance, raise_on_error=False)
    assert not result.success
    (failure,) = result.get_step_failure_events()
    assert failure.step_failure_data.user_failure_data.description == error


def minimal_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No DAGSTER_HOME, no EVALSUITE_*: what a fresh shell in the project root has (and the PYTHONPATH the tests
    run with, if any, so the code under test is the code loaded)."""
    (tmp_path / "user_home").mkdir(exist_ok=True)
    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "user_home"), **path, **extra}


def validate(env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run from a copy of the project root's dagster.yaml and workspace.yaml: with DAGSTER_HOME unset Dagster reads
    ./dagster.yaml and makes a temporary home in the current folder, which must not be the checkout."""
    root = Path(env["HOME"]).parent / "project_root"
    root.mkdir(exist_ok=True)
    shutil.copyfile(ROOT / "dagster.yaml", root / "dagster.yaml")
    workspace = (ROOT / "workspace.yaml").read_text()  # its project folder named absolutely: the copy is elsewhere
    (root / "workspace.yaml").write_text(workspace.replace("working_directory: assets",
                                                           f"working_directory: {ROOT / 'assets'}"))
    return subprocess.run([DAGSTER, "definitions", "validate", "-w", "workspace.yaml"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_definitions_validate_from_the_project_root_without_environment(tmp_path):
    run = validate(minimal_env(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "All code locations passed validation" in run.stdout + run.stderr


def test_definitions_validate_passes_with_a_bad_spec_listed(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [oops\n")
    suites = os.pathsep.join([str(ROOT / "suites" / f"{SUITE}.yaml"), str(broken)])
    run = validate(minimal_env(tmp_path, EVALSUITE_SUITES=suites))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "All code locations passed validation" in run.stdout + run.stderr


def test_dg_finds_the_components_a_teams_project_names_through_the_entry_point():
    """What `dg list components` and `dg scaffold defs` list: the components of every registry module installed
    under the entry point group dagster_dg_cli.registry_modules (Dagster's own discovery)."""
    from dagster.components.core.package_entry import discover_entry_point_package_objects

    found = {(k.namespace, k.name) for k in discover_entry_point_package_objects()}
    assert {("evalsuite_dagster", n) for n in ("SuiteComponent", "SharedResources", "ListedSuites")} <= found
