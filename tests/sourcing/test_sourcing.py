"""Sourcing the AP suite: specs, rights, policies by date, derivation from resolved cases."""
import datetime as dt
import shutil
from decimal import Decimal

import pytest
import yaml

from evalsuite.domains.ap_exceptions.derive import expected_outcome
from evalsuite.domains.ap_exceptions.example import ap_policies
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages.rights_review import review_rights
from evalsuite.sourcing.policies import PolicyError, load_policy, policy_in_effect
from evalsuite.sourcing.spec import SpecError, load_spec

SUITE = "suites/ap_exceptions.yaml"


@pytest.fixture
def suite_copy(tmp_path):
    """A private copy of the bundled suite that a test may break."""
    shutil.copytree("suites/ap_exceptions", tmp_path / "ap_exceptions")
    shutil.copytree("evalsuite/domains/ap_exceptions/policies", tmp_path / "policies")
    spec = yaml.safe_load(open(SUITE))
    spec["policies"] = ["policies/ap_policy_v6.md", "policies/ap_policy_v7.md"]
    path = tmp_path / "ap_exceptions.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _edit(path, fn):
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data))


def test_the_bundled_spec_loads():
    spec = load_spec(SUITE)
    assert spec.domain == "ap_exceptions" and "resolved_cases" in spec.sources.tables


def test_malformed_yaml_is_one_line_naming_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndomain: [unclosed\n")
    with pytest.raises(SpecError) as exc:
        load_spec(bad)
    msg = str(exc.value)
    assert msg.startswith(f"{bad}:") and "malformed YAML" in msg and "\n" not in msg


def test_unknown_key_names_the_key(suite_copy):
    _edit(suite_copy, lambda d: d["acceptance"].update(referense_trials=3))
    with pytest.raises(SpecError, match=r"acceptance\.referense_trials: unknown key"):
        load_spec(suite_copy)


def test_missing_source_file_names_key_and_path(suite_copy):
    (suite_copy.parent / "ap_exceptions" / "source" / "po_lines.csv").unlink()
    with pytest.raises(SpecError) as exc:
        load_spec(suite_copy)
    assert "sources.tables.po_lines.path: file not found" in str(exc.value) and "po_lines.csv" in str(exc.value)


@pytest.mark.parametrize("change, reason", [
    (lambda m: m.update(expires=dt.date(2025, 12, 31)), "expired license on 2025-12-31"),
    (lambda m: m.update(permitted_uses=["build_environments"]), "use derive_tasks not permitted"),
    (lambda m: m["personal_columns"].append("invoices.vendor_invoice_no"),
     "personal column invoices.vendor_invoice_no without a de-identification rule"),
])
def test_rights_review_blocks_with_a_clear_reason(suite_copy, change, reason, tmp_path):
    _edit(suite_copy.parent / "ap_exceptions" / "rights.yaml", change)
    spec = load_spec(suite_copy)
    decision = review_rights(spec, Paths(spec, tmp_path / "home"))
    assert decision.status == "blocked"
    assert any(reason in r for r in decision.reasons), decision.reasons


def test_a_missing_manifest_blocks(suite_copy, tmp_path):
    _edit(suite_copy.parent / "ap_exceptions" / "rights.yaml", lambda m: m.update(source="someone_else"))
    spec = load_spec(suite_copy)
    decision = review_rights(spec, Paths(spec, tmp_path / "home"))
    assert decision.reasons == ["erp_ap_export: missing manifest"]


def test_policy_in_effect_follows_the_case_date():
    policies = ap_policies()
    assert policy_in_effect(policies, dt.date(2025, 6, 1)).version == "v6"
    assert policy_in_effect(policies, dt.date(2026, 1, 1)).version == "v7"
    with pytest.raises(PolicyError, match="no policy in effect on 2024-12-31"):
        policy_in_effect(policies, dt.date(2024, 12, 31))


def test_a_2025_case_gets_the_older_policy_and_a_goal_that_differs_under_the_new_one(ap):
    """A 3-5% variance was released under v6 (5% tolerance); under v7 (2%) it would be held for the buyer."""
    v6, v7 = ap_policies()
    case = next(t for t in ap.tasks if t.policy.version == "v6" and t.category == "release"
                and Decimal(next(o.value for o in t.goal_state.required_outputs if o.name.startswith("variance"))) > 0
                and _pct(ap, t) > 2)
    assert case.provenance.case_resolved_on.year == 2025
    invoice = case.goal_state.assertions[0].key["invoice_id"]
    old = expected_outcome(ap.tables, invoice, "price_variance", v6.params)
    new = expected_outcome(ap.tables, invoice, "price_variance", v7.params)
    assert (old.status, old.approver_role) == ("released", None)
    assert (new.status, new.hold_reason, new.approver_role) == ("on_hold", "price_variance", "buyer")
    assert case.goal_state.assertions[0].expect == {"status": "released", "hold_reason": None}
    assert {c.id for c in case.policy.clauses} >= {"AP-2"}
    assert "5%" in next(c.text for c in case.policy.clauses if c.id == "AP-2")


def _pct(ap, task) -> Decimal:
    inv = task.goal_state.assertions[0].key["invoice_id"]
    lines = [r for r in ap.tables["invoice_lines"] if r["invoice_id"] == inv]
    po_id = next(r["po_id"] for r in ap.tables["invoices"] if r["invoice_id"] == inv)
    po = {r["line_no"]: r for r in ap.tables["po_lines"] if r["po_id"] == po_id}
    ordered = {n: Decimal(r["unit_price"]) for n, r in po.items()}
    return max((Decimal(r["unit_price"]) - ordered[r["po_line_no"]]) / ordered[r["po_line_no"]] * 100 for r in lines)


def test_cases_without_a_verified_outcome_are_skipped_and_counted(ap):
    unverified = sum(1 for c in ap.tables["resolved_cases"] if not c["verified_by"])
    assert ap.skipped == {"outcome not verified": unverified}
    assert len(ap.tasks) == len(ap.tables["resolved_cases"]) - unverified


def test_splits_are_stable_when_cases_are_added(tmp_path):
    from evalsuite.domains.ap_exceptions.example import ap_example
    small = ap_example(tmp_path / "a", n_cases=30)
    big = ap_example(tmp_path / "b", n_cases=56)
    by_id = {t.provenance.source_record: t.split for t in big.tasks}
    assert all(by_id[t.provenance.source_record] == t.split for t in small.tasks if t.provenance.source_record in by_id)


def test_policy_document_without_clauses_is_refused(tmp_path):
    p = tmp_path / "p.md"
    p.write_text("---\ndoc: x\nversion: v1\neffective_from: 2026-01-01\n---\nno clauses here\n")
    with pytest.raises(PolicyError, match="no numbered clauses"):
        load_policy(p)
