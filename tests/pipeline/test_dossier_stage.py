"""The dossier through the build: retail_support, its manager_discretion_removed variant and contract_review each
release with the dossier's hash in the manifest; the variant's world, tasks and tool authority moved together; a
consequential open question stops the build at requirements_traced in one line naming who must answer it."""
from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
import yaml
from suite_support import ROOT

from evalsuite.pipeline import driver
from evalsuite.pipeline.stage import GateError
from evalsuite.releases.release import Release
from evalsuite.sourcing.dossier import load_dossier


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


def build(spec, home) -> Release:
    return Release(driver.build(spec, home=home).release)


def test_both_retail_variants_build_and_carry_the_dossier_in_their_provenance(home):
    default = build(ROOT / "suites" / "retail_support.yaml", home)
    variant = build(ROOT / "suites" / "retail_support_no_discretion.yaml", home)
    sha = load_dossier(ROOT / "suites" / "retail_support" / "dossier.yaml").sha256
    assert (default.manifest.dossier_sha256, default.manifest.customizations) == (sha, [])
    assert (variant.manifest.dossier_sha256, variant.manifest.customizations) == (sha, ["manager_discretion_removed"])
    assert "dossier_sha256" in json.loads((default.path / "manifest.json").read_text())
    assert variant.manifest.n_tasks == default.manifest.n_tasks == 9  # every task accepted under its controls
    moved = {t.task_id: t for t in variant.tasks()}
    assert {t.policy.version for t in moved.values()} == {"v2"}
    assert all("issue_refund" in t.role.forbidden_tools for t in moved.values())
    refund = moved["rs-c-1001-lost-refund"]
    assert refund.goal_state.domain_checks[0].params == {"case_id": "C-1001", "evidence": ["v2", "SH-1001"]}
    cases = dict(sqlite3.connect(variant.path / "world.sqlite").execute("SELECT case_id, policy_version FROM cases"))
    assert cases["C-1001"] == "v2" and cases["C-1008"] == "v3"  # only the v1 cases moved, as the dossier says
    before = dict(sqlite3.connect(default.path / "world.sqlite").execute("SELECT case_id, policy_version FROM cases"))
    assert before["C-1001"] == "v1"


def test_contract_review_builds_with_its_dossier(home):
    release = build(ROOT / "suites" / "contract_review.yaml", home)
    assert release.manifest.dossier_sha256 == load_dossier(ROOT / "suites" / "contract_review" /
                                                           "dossier.yaml").sha256


def test_a_consequential_open_question_blocks_the_build_naming_who_must_answer_it(tmp_path):
    shutil.copytree(ROOT / "suites" / "contract_review", tmp_path / "contract_review")
    shutil.copy(ROOT / "suites" / "contract_review.yaml", tmp_path)
    dossier = tmp_path / "contract_review" / "dossier.yaml"
    raw = yaml.safe_load(dossier.read_text())
    raw["open_questions"][1]["consequential"] = True
    dossier.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(GateError) as exc:
        driver.build(tmp_path / "contract_review.yaml", home=tmp_path / "home")
    assert exc.value.gate == "requirements_traced"
    assert exc.value.reason.startswith("open question Q-2 is consequential and unanswered; records_custodian must "
                                       "answer it: What safeguards does Exhibit B require?")
    assert "\n" not in exc.value.reason
    assert not (tmp_path / "home" / "releases").exists()
