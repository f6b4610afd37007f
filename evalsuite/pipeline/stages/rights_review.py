"""Rights review: the delivery's license against the uses the suite needs; gate rights_cleared."""
from __future__ import annotations

import datetime as dt

from evalsuite.core.hashing import file_sha256, json_sha256
from evalsuite.core.io import write_json
from evalsuite.core.markdown import md_list, md_table
from evalsuite.deid.rules import load_rules
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import Gate, GateError, GateResult, Stage, StageOutput, passed
from evalsuite.sourcing.rights import RightsDecision, load_manifest, review
from evalsuite.sourcing.spec import BUILD_USES, SuiteSpec


def review_rights(spec: SuiteSpec, paths: Paths, today: dt.date | None = None) -> RightsDecision:
    """Review the delivery's manifest and record the decision in rights.json."""
    manifests = {m.source: m for m in (load_manifest(spec.resolve(p)) for p in spec.rights)}
    ruled = load_rules(spec.resolve(spec.deid)).ruled_columns() if spec.deid else set()
    needed = set(spec.needed_uses) | set(BUILD_USES)  # a spec may add uses, never argue away what a build does
    decision = review({spec.sources.name: manifests.get(spec.sources.name)}, needed, ruled,
                      today or dt.date.today())
    write_json(paths.rights, decision.model_dump(mode="json"))
    return decision


def decision_on_record(paths: Paths) -> RightsDecision:
    if not paths.rights.is_file():
        raise GateError("rights_cleared", "no rights review on record")
    return RightsDecision.model_validate_json(paths.rights.read_text())


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    decision = review_rights(spec, paths)
    manifests = [load_manifest(spec.resolve(p)) for p in spec.rights]
    licenses = md_table(["source", "license", "licensor", "expires", "permitted uses"],
                        [[m.source, m.license_ref, m.licensor, m.expires or "never (stated: expires: null)",
                          ", ".join(sorted(m.permitted_uses))] for m in manifests])
    return StageOutput(json_sha256(decision.model_dump(mode="json", exclude={"reviewed_on"})), {
        "license_decision": decision.status, "reasons": md_list(decision.reasons), "licenses": licenses,
        "needed_uses": ", ".join(decision.needed_uses), "manifest_sha256": decision.manifest_sha256,
        "reviewed_on": decision.reviewed_on.isoformat(), "record": paths.rights})


def rights_cleared(spec: SuiteSpec, paths: Paths) -> GateResult:
    d = decision_on_record(paths)
    if not d.cleared:
        raise GateError("rights_cleared", "; ".join(d.reasons))
    return passed("rights_cleared", f"license cleared for {', '.join(d.needed_uses)}",
                  manifest_sha256=d.manifest_sha256)


def _config(spec: SuiteSpec, paths: Paths) -> list:
    files = [file_sha256(spec.resolve(p)) for p in spec.rights]
    return [spec.needed_uses, files, file_sha256(spec.resolve(spec.deid)) if spec.deid else None]


STAGE = Stage(
    name="rights_review", deps=("source_records",), module=__name__, kinds=frozenset({"yaml"}), config=_config,
    description="Rights review of the delivery against its license schedule.", run=run,
    gates=(Gate("rights_cleared", "rights_review", rights_cleared,
                description="The license covers the needed uses, has not expired, and every personal column "
                            "has a rule."),),
)
