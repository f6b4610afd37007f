from datetime import date

import pytest
import yaml
from suite_support import ROOT

from evalsuite.sourcing.rights import RightsError, RightsManifest, load_manifest, review

TODAY = date(2025, 6, 1)
USES = {"build_environments", "derive_tasks"}
RULED = {"vendors.contact_name", "vendors.contact_email"}


def manifest(**changes) -> RightsManifest:
    data = dict(
        source="vendors",
        license_ref="LIC-2025-007",
        licensor="Acme Supplies Ltd",
        permitted_uses={"build_environments", "derive_tasks"},
        expires=date(2026, 1, 1),
        personal_data=True,
        personal_columns=["vendors.contact_name", "vendors.contact_email"],
        deidentification_required=True,
    )
    data.update(changes)
    return RightsManifest(**data)


def test_clean_manifest_clears_and_records_its_hash():
    decision = review({"vendors": manifest()}, USES, RULED, TODAY)
    assert decision.status == "cleared" and decision.cleared
    assert decision.reasons == []
    assert len(decision.manifest_sha256["vendors"]) == 64


def test_expired_license_blocks():
    decision = review({"vendors": manifest(expires=date(2025, 5, 31))}, USES, RULED, TODAY)
    assert decision.status == "blocked"
    assert decision.reasons == ["vendors: expired license on 2025-05-31"]


def test_license_is_valid_on_its_expiry_date():
    assert review({"vendors": manifest(expires=TODAY)}, USES, RULED, TODAY).cleared


def test_missing_permitted_use_blocks():
    decision = review({"vendors": manifest(permitted_uses={"build_environments"})}, USES, RULED, TODAY)
    assert decision.status == "blocked"
    assert decision.reasons == ["vendors: use derive_tasks not permitted"]


def test_personal_column_without_rule_blocks():
    decision = review({"vendors": manifest()}, USES, {"vendors.contact_name"}, TODAY)
    assert decision.status == "blocked"
    assert decision.reasons == [
        "vendors: personal column vendors.contact_email without a de-identification rule"
    ]


def test_missing_manifest_blocks():
    decision = review({"vendors": manifest(), "invoices": None}, USES, RULED, TODAY)
    assert decision.status == "blocked"
    assert decision.reasons == ["invoices: missing manifest"]
    assert set(decision.manifest_sha256) == {"vendors"}


def test_unknown_needed_use_is_an_error():
    with pytest.raises(ValueError, match="unknown uses"):
        review({"vendors": manifest()}, {"resell"}, RULED, TODAY)


def test_hash_does_not_depend_on_set_order():
    a = manifest(permitted_uses={"derive_tasks", "build_environments"})
    b = manifest(permitted_uses={"build_environments", "derive_tasks"})
    assert a.sha256() == b.sha256()
    assert a.sha256() != manifest(licensor="Other").sha256()


def test_load_manifest_round_trip(tmp_path):
    path = tmp_path / "vendors.yaml"
    path.write_text(yaml.safe_dump(manifest().model_dump(mode="json")))
    assert load_manifest(path) == manifest()


def test_load_manifest_rejects_unknown_key_naming_file_and_field(tmp_path):
    data = manifest().model_dump(mode="json") | {"notes": "x"}
    path = tmp_path / "vendors.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RightsError) as err:
        load_manifest(path)
    message = str(err.value)
    assert str(path) in message and "notes" in message and "\n" not in message


def test_load_manifest_names_nested_field_path(tmp_path):
    data = manifest().model_dump(mode="json")
    data["personal_columns"] = ["vendors.contact_name", "contact_email"]
    path = tmp_path / "vendors.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RightsError, match=r"vendors\.yaml: personal_columns\.1: "):
        load_manifest(path)


def test_load_manifest_rejects_unknown_use_and_bad_yaml(tmp_path):
    data = manifest().model_dump(mode="json")
    data["permitted_uses"] = ["resell"]
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RightsError, match="permitted_uses"):
        load_manifest(path)
    path.write_text("source: [unclosed\n")
    with pytest.raises(RightsError, match="invalid YAML"):
        load_manifest(path)


def test_personal_columns_without_personal_data_is_rejected():
    with pytest.raises(ValueError, match="personal_data is false"):
        manifest(personal_data=False)


def test_synthetic_columns_are_named_one_by_one_and_never_also_personal():
    m = manifest(personal_data=False, personal_columns=[], deidentification_required=False,
                 synthetic_columns=["vendors.contact_email"])
    assert m.synthetic_columns == ["vendors.contact_email"]
    with pytest.raises(ValueError, match=r"\['vendors.contact_name'\] are listed both as personal and as synthetic"):
        manifest(synthetic_columns=["vendors.contact_name"])
    with pytest.raises(ValueError, match="synthetic_columns"):
        manifest(synthetic_columns=["contact_name"])  # not table.column


def test_a_manifest_without_synthetic_columns_keeps_its_hash_and_one_with_them_changes_it():
    bundled = load_manifest(ROOT / "suites" / "ap_exceptions" / "rights.yaml")
    # The bundled manifest as it was before the field existed (issue 25 added the buyer column to it since).
    before = bundled.model_copy(update={"personal_columns": bundled.personal_columns[:4]})
    assert before.sha256() == "03b342919d7a2405afe7d0d52636cd34015bf680629880b57c54536d84c3407e"  # as before the field
    assert bundled.model_copy(update={"synthetic_columns": ["invoices.note"]}).sha256() != bundled.sha256()


def test_a_licence_must_state_its_expiry_and_the_review_records_it(tmp_path):
    body = (ROOT / "suites" / "ap_exceptions" / "rights.yaml").read_text()
    (tmp_path / "rights.yaml").write_text(body.replace("expires: 2027-12-31\n", ""))
    with pytest.raises(RightsError, match=r"rights\.yaml: expires: Field required"):
        load_manifest(tmp_path / "rights.yaml")
    (tmp_path / "rights.yaml").write_text(body.replace("expires: 2027-12-31", "expires: null"))
    perpetual = load_manifest(tmp_path / "rights.yaml")
    decision = review({perpetual.source: perpetual}, USES, set(perpetual.personal_columns), TODAY)
    assert decision.cleared and decision.expires == {perpetual.source: None}
    dated = review({"vendors": manifest()}, USES, RULED, TODAY)
    assert dated.expires == {"vendors": date(2026, 1, 1)}
