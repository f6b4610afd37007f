"""Code versions follow the code a stage really runs: editing a module marks exactly the stages that import it."""
from __future__ import annotations

import pytest
from suite_support import ROOT

from evalsuite.pipeline import code_versions, registry
from evalsuite.pipeline.paths import Paths
from evalsuite.sourcing.spec import load_spec

STAGES = [*registry.STAGES, *registry.EVALUATION]


@pytest.fixture(scope="module")
def spec():
    return load_spec(ROOT / "suites" / "ap_exceptions.yaml")


def _module(stage: str) -> str:
    return registry.STAGES[stage].module if stage in registry.STAGES else registry.EVALUATION[stage][0]


def versions(spec) -> dict[str, str]:
    return {s: registry.code_version(s, spec, Paths(spec)) for s in STAGES}


def test_derived_tasks_runs_the_module_that_hashes_the_task_set():
    assert "evalsuite.tasks.taskfile" in code_versions.closure([_module("derived_tasks")])


def test_the_scorecard_does_not_run_gate_text_or_build_stages():
    ran = code_versions.closure([_module("scorecard")])
    assert not {m for m in ran if m.startswith("evalsuite.pipeline.stages.") and m != _module("scorecard")}
    assert "evalsuite.pipeline.registry" not in ran


@pytest.mark.parametrize("edited, stale, fresh", [
    ("evalsuite.pipeline.stages.rights_review", {"rights_review", "seed_snapshot", "suite_release"},
     {"scorecard", "leaderboard"}),
    ("evalsuite.scoring.render", {"scorecard"}, {"rights_review", "derived_tasks"}),
    ("evalsuite.domains.ap_exceptions.derive", {"derived_tasks", "acceptance_results", "trial_traces"},
     {"rights_review", "seed_snapshot", "policy_documents"}),
    ("evalsuite.grading.grader", {"acceptance_results", "trial_traces"}, {"rights_review", "policy_documents"}),
])
def test_editing_a_module_marks_exactly_the_stages_that_import_it(spec, monkeypatch, edited, stale, fresh):
    before = versions(spec)
    real = code_versions.file_sha256
    target = code_versions.module_file(edited)
    monkeypatch.setattr(code_versions, "file_sha256", lambda p: "edited" if p == target else real(p))
    code_versions.module_digest.cache_clear()  # an edit is seen by the next process: the code location reloads
    try:
        after = versions(spec)
    finally:
        code_versions.module_digest.cache_clear()
    changed = {s for s in STAGES if before[s] != after[s]}
    assert stale <= changed and not (fresh & changed), changed
    assert changed == {s for s in STAGES if edited in _closure_with_domain(s, spec)}


def _closure_with_domain(stage: str, spec) -> set[str]:
    return code_versions.with_domain(code_versions.closure([_module(stage)]), spec.domain_location())


def test_spec_settings_a_stage_reads_are_part_of_its_version(spec):
    stricter = spec.model_copy(update={"acceptance": spec.acceptance.model_copy(update={"reference_trials": 3})})
    a, b = versions(spec), versions(stricter)
    assert {s for s in STAGES if a[s] != b[s]} == {"acceptance_results"}


def test_the_statement_walk_finds_every_import_a_full_walk_finds():
    """Imports inside functions, branches, try/except and with blocks count: the walk over statement bodies that
    makes loading the code location fast must miss none of them."""
    import ast

    for f in sorted(code_versions.LIBRARY.rglob("*.py")):
        name = ".".join(f.relative_to(code_versions.LIBRARY.parent).with_suffix("").parts).removesuffix(".__init__")
        full = [n for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert sorted(map(ast.dump, code_versions._import_statements(name))) == sorted(map(ast.dump, full)), name


def test_the_generation_stage_follows_the_domain_code_it_runs():
    """generated_tasks composes with the domain's generate: editing domains/mobile_service/generate.py must mark it
    stale, as it marks derived_tasks."""
    spec = load_spec(ROOT / "suites" / "mobile_service.yaml")
    for stage in ("generated_tasks", "derived_tasks"):
        assert "evalsuite.domains.mobile_service.generate" in _closure_with_domain(stage, spec), stage


def test_a_declarative_domain_file_is_part_of_the_versions_of_the_stages_that_run_it(tmp_path):
    import shutil

    shutil.copytree(ROOT / "examples" / "expense_desk", tmp_path / "p")
    spec = load_spec(tmp_path / "p" / "suite.yaml")
    before = versions(spec)
    domain = tmp_path / "p" / "domain.yaml"
    domain.write_text(domain.read_text().replace("version: \"1.0.0\"", "version: \"1.0.1\""))
    after = versions(spec)
    changed = {s for s in STAGES if before[s] != after[s]}
    assert {"derived_tasks", "acceptance_results", "suite_release"} <= changed
    assert not changed & {"rights_review", "policy_documents"}
