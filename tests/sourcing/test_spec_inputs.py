"""Bad suite-spec input answered in one line naming the file and key, before any stage runs; rights not arguable."""
from __future__ import annotations

import codecs

import pytest
import yaml
from suite_support import copy_suite, rewrite_manifest

from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages.rights_review import review_rights
from evalsuite.sourcing.rights import RightsError, load_manifest
from evalsuite.sourcing.spec import SpecError, load_spec


def spec_with(tmp_path, **changes):
    spec = copy_suite(tmp_path / "suite")
    raw = yaml.safe_load(spec.read_text())
    for key, value in changes.items():
        if value is None:
            raw.pop(key)
        else:
            raw[key] = value
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def one_line_error(exc_type, fn, *args) -> str:
    with pytest.raises(exc_type) as err:
        fn(*args)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_a_misspelt_key_is_named_even_when_the_key_it_meant_is_missing(tmp_path):
    raw = yaml.safe_load(spec_with(tmp_path).read_text())
    raw["sources"]["tabels"] = raw["sources"].pop("tables")
    spec = tmp_path / "suite" / "typo.yaml"
    spec.write_text(yaml.safe_dump(raw))
    assert one_line_error(SpecError, load_spec, spec).startswith(f"{spec}: sources.tabels: unknown key")


@pytest.mark.parametrize("prefix", ["../../escape", "r/x", "", "R", "r" * 17])
def test_a_version_prefix_that_is_not_a_plain_name_is_refused(tmp_path, prefix):
    spec = spec_with(tmp_path, version_prefix=prefix)
    assert one_line_error(SpecError, load_spec, spec).startswith(f"{spec}: version_prefix: ")


def test_an_unknown_domain_is_refused_when_the_spec_is_read(tmp_path):
    spec = spec_with(tmp_path, domain="payroll")
    assert one_line_error(SpecError, load_spec, spec) == (
        f"{spec}: domain: unknown domain 'payroll'; installed: agentdojo_banking, ap_exceptions, contract_review, "
        "experiment, mobile_service, retail_support, tau2_airline, tau2_retail, tau2_telecom; a domain is an entry "
        "point in the group 'evalsuite.domains' of an installed package, a domain file ending in .yaml, or a dotted "
        "module path (docs/domains/index.md)")


@pytest.mark.parametrize("domain, says", [
    ("payroll.desk", "unknown domain 'payroll.desk'"),  # a dotted path to a module that is not there
    ("payroll/domain.yaml", "domain file not found"),
])
def test_a_domain_path_that_finds_nothing_is_refused_when_the_spec_is_read(tmp_path, domain, says):
    spec = spec_with(tmp_path, domain=domain)
    assert says in one_line_error(SpecError, load_spec, spec)


def test_a_calendar_invalid_date_and_a_non_utf8_file_are_one_line(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    rights = spec.parent / "ap_exceptions" / "rights.yaml"
    rights.write_text(rights.read_text().replace("expires: 2027-12-31", "expires: 2027-02-30"))
    assert "day is out of range for month" in one_line_error(RightsError, load_manifest, rights)
    spec.write_bytes(codecs.BOM_UTF16_LE + "name: x\n".encode("utf-16-le"))
    assert one_line_error(SpecError, load_spec, spec).startswith(f"{spec}:1: not UTF-8 text (UTF-16 byte-order mark)")


def test_needed_uses_cannot_drop_what_every_build_does(tmp_path):
    spec_path = spec_with(tmp_path, needed_uses=[])
    rewrite_manifest(spec_path, permitted_uses=["train"])
    spec = load_spec(spec_path)
    decision = review_rights(spec, Paths(spec, tmp_path / "home"))
    assert not decision.cleared
    assert set(decision.needed_uses) >= {"build_environments", "derive_tasks"}
    assert any("use derive_tasks not permitted" in r for r in decision.reasons)


def test_a_calendar_invalid_date_names_its_line_and_value(tmp_path):
    spec = copy_suite(tmp_path / "suite")
    rights = spec.parent / "ap_exceptions" / "rights.yaml"
    lines = rights.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.startswith("expires:"))
    rights.write_text(rights.read_text().replace("expires: 2027-12-31", "expires: 2027-02-30"))
    assert one_line_error(RightsError, load_manifest, rights) == (
        f"{rights}:{line}: invalid YAML: 2027-02-30: day is out of range for month")


def test_a_spec_naming_an_agent_that_cannot_exist_is_refused_when_read(tmp_path):
    """On 7bb15c3 `agents: [{name: nonexistent_agent}]` built, and failed only when its trials were started."""
    spec = spec_with(tmp_path, agents=[{"name": "reference"}, {"name": "nonexistent_agent"}])
    assert one_line_error(SpecError, load_spec, spec).startswith(f"{spec}: agents: ")


def test_the_built_in_agent_names_a_spec_may_use_are_the_agents_that_exist():
    from evalsuite.core.identity import BASELINE_AGENTS
    from evalsuite.trials.agents.baselines import BASELINES

    assert set(BASELINES) == BASELINE_AGENTS
