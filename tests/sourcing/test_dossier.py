"""The process dossier as a source: the shipped ones validate, a name used but never declared or a broken field is
one line naming the file and field, and a spec that applies an undeclared customization is refused on load."""
from __future__ import annotations

import shutil

import pytest
import yaml
from suite_support import ROOT

from evalsuite.sourcing.dossier import DossierError, load_dossier
from evalsuite.sourcing.spec import SpecError, load_spec

RETAIL = ROOT / "suites" / "retail_support" / "dossier.yaml"


def spoil(tmp_path, edit):
    raw = yaml.safe_load(RETAIL.read_text())
    edit(raw)
    path = tmp_path / "dossier.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.mark.parametrize("suite", ["retail_support", "contract_review"])
def test_the_shipped_dossiers_validate_and_hash_their_content_not_their_bytes(suite, tmp_path):
    path = ROOT / "suites" / suite / "dossier.yaml"
    d = load_dossier(path)
    assert d.suite == suite and d.requirements and d.disclosure.startswith("Authored stakeholder exercise")
    reformatted = tmp_path / "dossier.yaml"
    reformatted.write_text("# another comment\n" + yaml.safe_dump(yaml.safe_load(path.read_text()), sort_keys=True))
    assert load_dossier(reformatted).sha256 == d.sha256


@pytest.mark.parametrize("edit, line", [
    (lambda d: d["open_questions"][0].update(owner="nobody"), "open_questions.0.owner: 'nobody' is not declared"),
    (lambda d: d["requirements"][0]["stages"]["answered_by"].update(actor="ceo"),
     "requirements.0.stages.answered_by.actor: 'ceo' is not declared"),
    (lambda d: d["customizations"][0].update(requirement="RS-R99"),
     "customizations.0.requirement: 'RS-R99' is not declared"),
    (lambda d: d["requirements"].append(d["requirements"][0]), "requirements: id 'RS-R1' given twice"),
    (lambda d: d["open_questions"][1].pop("answer"), "open_questions.1: answer: required when status is answered"),
    (lambda d: d["requirements"][0]["links"].update(check=["x"]), "requirements.0.links.check: unknown key"),
])
def test_a_broken_dossier_is_one_line_naming_the_file_and_field(tmp_path, edit, line):
    path = spoil(tmp_path, edit)
    with pytest.raises(DossierError) as exc:
        load_dossier(path)
    assert str(exc.value).startswith(f"{path}: ") and line in str(exc.value) and "\n" not in str(exc.value)


def test_applying_a_customization_moves_the_changed_requirement_and_every_link_to_a_lost_tool():
    d = load_dossier(RETAIL).applied(["manager_discretion_removed"])
    r = {r.id: r for r in d.requirements}
    assert r["RS-R2"].statement.startswith("No one may authorize a refund of a lost replacement")
    assert {(p.tool, p.may) for p in r["RS-R2"].links.permissions} == {("request_manager_decision", False),
                                                                       ("issue_refund", False)}
    assert [(p.tool, p.may) for p in r["RS-R1"].links.permissions] == [("issue_refund", False)]


def test_a_spec_applying_an_undeclared_customization_is_refused_on_load(tmp_path):
    shutil.copytree(ROOT / "suites" / "retail_support", tmp_path / "retail_support")
    raw = yaml.safe_load((ROOT / "suites" / "retail_support_no_discretion.yaml").read_text())
    raw["sources"]["tables"] = {k: {"path": str((ROOT / "suites" / v["path"]).resolve())}
                                for k, v in raw["sources"]["tables"].items()}
    raw["policies"] = [str((ROOT / "suites" / p).resolve()) for p in raw["policies"]]
    raw["dossier"]["apply"] = ["discounts_doubled"]
    spec = tmp_path / "variant.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(SpecError, match=r"variant.yaml: dossier.apply.0: no customization 'discounts_doubled'; "
                                        r"declared: manager_discretion_removed"):
        load_spec(spec)


@pytest.mark.parametrize("edit, line", [
    (lambda d: d["open_questions"][1].update(answer=" "), "open_questions.1.answer: String should match pattern"),
    (lambda d: d["contradictions"][0].update(resolution=""), "contradictions.0.resolution: String should have at"),
    (lambda d: d["requirements"][0]["stages"].update(answer="  \t"), "requirements.0.stages.answer: String should"),
    (lambda d: d["requirements"][0]["stages"]["answered_by"].update(actor="support_agent"),
     "requirements.0.stages.answered_by.actor: 'support_agent' is the agent under test, not an authority"),
    (lambda d: d["contradictions"][0].update(resolver="support_agent"),
     "contradictions.0.resolver: 'support_agent' is the agent under test"),
])
def test_a_blank_answer_or_the_agent_as_its_own_authority_is_refused(tmp_path, edit, line):
    """On 7bb15c3 each of these released: a consequential contradiction resolved with "", a question answered " ",
    a requirement answered by support_agent, the agent under test."""
    path = spoil(tmp_path, edit)
    with pytest.raises(DossierError) as exc:
        load_dossier(path)
    assert str(exc.value).startswith(f"{path}: ") and line in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("edit, line", [
    (lambda d: d["contradictions"][0].update(resolver="customer"),
     "contradictions.0.resolver: 'customer' has authority over none of support_policy, policy_table (whose "
     "authorities are support_operations_lead)"),
    (lambda d: d["requirements"][0]["stages"]["answered_by"].update(actor="human_review"),
     "requirements.0.stages.answered_by.actor: 'human_review' has authority over no source of the dossier"),
    (lambda d: d["open_questions"][1].update(owner="human_review"),
     "open_questions.1.owner: 'human_review' has authority over no source of the dossier"),
])
def test_an_answerer_owner_or_resolver_without_that_power_in_the_dossier_is_refused(tmp_path, edit, line):
    """On 7bb15c3 answerers and resolvers without authority released: the customer settling what the policy says,
    a requirement answered by a team that owns nothing."""
    path = spoil(tmp_path, edit)
    with pytest.raises(DossierError) as exc:
        load_dossier(path)
    assert str(exc.value).startswith(f"{path}: ") and line in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("edit, line", [
    (lambda d: d["contradictions"][0].update(id=""), "contradictions.0.id: String should match pattern"),
    (lambda d: d["sources"][0].update(id=" "), "sources.0.id: String should match pattern"),
    (lambda d: d["permissions"][0]["may"].append(""), "permissions.0.may.3: String should"),
    (lambda d: d["permissions"].pop(0), "permissions: none for 'support_agent', the agent under test"),
    (lambda d: d.update(routine_cases=[]), "routine_cases: List should have at least 1 item"),
])
def test_a_nameless_id_an_empty_permission_or_a_process_with_nothing_stated_is_refused(tmp_path, edit, line):
    """Each released on 7bb15c3 (random mutations of the retail_support dossier)."""
    path = spoil(tmp_path, edit)
    with pytest.raises(DossierError) as exc:
        load_dossier(path)
    assert str(exc.value).startswith(f"{path}: ") and line in str(exc.value) and "\n" not in str(exc.value)


def test_another_suites_dossier_is_refused_when_the_stage_reads_it(tmp_path):
    from evalsuite.pipeline.stages import process_dossier

    path = spoil(tmp_path, lambda d: d.update(suite="ap_exceptions"))
    spec = load_spec(ROOT / "suites" / "retail_support.yaml")
    spec = spec.model_copy(update={"dossier": spec.dossier.model_copy(update={"file": str(path)})})
    with pytest.raises(DossierError, match="suite: 'ap_exceptions' is another suite's dossier"):
        process_dossier.dossier_as_applied(spec)
