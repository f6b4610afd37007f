"""The immutable, versioned release of the accepted tasks, refused unless every gate passed for exactly them."""
from __future__ import annotations

from contextlib import closing
from pathlib import Path

from evalsuite.core.hashing import json_sha256
from evalsuite.core.markdown import Markdown, md_list, md_table
from evalsuite.domains.package import DomainPackage
from evalsuite.pipeline import preflight
from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stage import GateError, Stage, StageOutput, require
from evalsuite.pipeline.stages import (
    acceptance_results,
    deidentified_snapshot,
    derived_tasks,
    process_dossier,
    rights_review,
    seed_snapshot,
)
from evalsuite.pipeline.stages.acceptance_results import quarantine_table
from evalsuite.releases.history import ReleaseDiff, diff_releases, previous_release, short
from evalsuite.releases.release import (
    DOMAIN_FILE,
    Quarantined,
    Release,
    ReleaseManifest,
    release_version,
    write_release,
)
from evalsuite.sourcing.spec import SiteSettings, SuiteSpec
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.worlds.world import World

UPSTREAM = (rights_review.STAGE, seed_snapshot.STAGE, deidentified_snapshot.STAGE, derived_tasks.STAGE,
            acceptance_results.STAGE)


def release(spec: SuiteSpec, paths: Paths) -> Path:
    """Release the accepted tasks; every upstream gate must pass for this exact task set and rights decision."""
    for stage in UPSTREAM:
        require(stage, spec, paths)
    audit = acceptance_results.audit_on_record(paths)
    if not audit.summary["releasable"]:  # the gates above name the cause; this guards a report no gate explains
        raise GateError("acceptance_results", f"{audit.summary['quarantined']} of {audit.summary['tasks']} tasks "
                                              "quarantined: not releasable")
    accepted_ids = set(audit.accepted_ids)
    accepted = [t for t in derived_tasks.tasks_on_disk(paths) if t.task_id in accepted_ids]
    decision = rights_review.decision_on_record(paths)
    package = preflight.domain_for(spec)
    domain = package.domain
    with closing(World(domain, paths.world)) as world:  # its hash, checked as it opens; then its memory back
        seed = world.seed_sha256
    identity = {"task_set": task_set_sha256(accepted), "seed": seed, "image": domain.image,
                "tools": domain.tool_schemas_sha256(), "rights": decision.manifest_sha256,
                "policies": sorted({f"{t.policy.doc}@{t.policy.version}" for t in accepted}),
                "simulator": spec.simulator.model_dump(mode="json") if spec.simulator else None,
                "source_acceptance": audit.task_set_sha256}
    site = spec.site if spec.site != SiteSettings() else None
    if site:  # a release that publishes more is another release; the default leaves every version as it was
        identity["site"] = site.model_dump()
    extra = {"audit.md": (paths.acceptance / "audit.md").read_text()}
    if package.bound_file is not None:  # a declarative domain's SQL is its code: another file, another release
        identity["domain_file"] = json_sha256(package.bound_file)
        extra[DOMAIN_FILE] = package.bound_file
    traced = process_dossier.on_record(paths) if spec.dossier else None
    if traced:  # the requirements the tasks trace to are part of what a score means
        identity["dossier"] = {"sha256": traced.sha256, "applied": traced.applied}
    manifest = ReleaseManifest(
        suite=spec.name, version=release_version(spec.version_prefix, identity), domain=domain.name,
        domain_source=_domain_source(spec, package),
        task_set_sha256=identity["task_set"], seed_sha256=seed, environment_image=domain.image,
        tool_schemas_sha256=identity["tools"], policy_versions=identity["policies"],
        rights_decision={"status": decision.status, "manifest_sha256": decision.manifest_sha256,
                         "reviewed_on": decision.reviewed_on.isoformat()},
        acceptance=dict(audit.summary),
        quarantined=[Quarantined(task_id=t.task_id, reasons=t.reasons) for t in audit.tasks if t.quarantined],
        simulator=spec.simulator, n_tasks=len(accepted), site=site,
        dossier_sha256=traced.sha256 if traced else None, customizations=traced.applied if traced else [])
    return write_release(paths.releases, manifest, accepted, paths.world,
                         extra=extra)


def _domain_source(spec: SuiteSpec, package: DomainPackage) -> str | None:
    """Where another process finds the release's domain: the file the release keeps, a dotted module path, or
    nothing where the spec names the domain by its installed name."""
    if package.bound_file is not None:
        return DOMAIN_FILE
    return None if spec.domain == package.name else spec.domain


def run(spec: SuiteSpec, paths: Paths) -> StageOutput:
    rel = Release(release(spec, paths))
    m = rel.manifest
    return StageOutput(m.version, {
        "version": m.version, "release": rel.path, "tasks": m.n_tasks, "task_set_sha256": m.task_set_sha256,
        "seed_sha256": m.seed_sha256, "environment_image": m.environment_image,
        "tool_schemas_sha256": m.tool_schemas_sha256, "policy_versions": ", ".join(m.policy_versions),
        "license_decision": m.rights_decision["status"], "quarantined": len(m.quarantined),
        "dossier_sha256": m.dossier_sha256 or "none", "customizations": ", ".join(m.customizations) or "none",
        "quarantined_tasks": quarantine_table([(q.task_id, q.reasons) for q in m.quarantined]),
        "changes_since_previous": _changes(rel, paths)})


def _changes(rel: Release, paths: Paths) -> str:
    """The diff against the suite's previous release, as Markdown (bounded)."""
    prev = previous_release(paths.releases, rel.manifest.suite, rel.manifest.version)
    return diff_markdown(diff_releases(prev, rel)) if prev else "First release of this suite."


def diff_markdown(d: ReleaseDiff, limit: int = 50) -> Markdown:
    """The diff as Markdown, the first `limit` changed tasks listed."""
    if d.empty:
        return Markdown(f"No change from {d.old}.")
    parts = [f"From `{d.old}` to `{d.new}`: {len(d.added)} added, {len(d.removed)} removed, "
             f"{len(d.changed)} changed.",
             "**Added:** " + (", ".join(d.added[:limit]) or "none"),
             "**Removed:** " + (", ".join(d.removed[:limit]) or "none")]
    if d.changed:
        more = len(d.changed) - limit
        parts.append(md_table(["task", "changed fields"], [[c.task_id, ", ".join(c.fields)] for c in d.changed[:limit]])
                     + (f"\n\n…and {more} more" if more > 0 else ""))
    if d.quarantine:
        parts.append(md_table(["task", "quarantine", "reasons"],
                              [[q.task_id, q.change, "; ".join(q.reasons)] for q in d.quarantine[:limit]]))
    parts.append(md_list([f"{f.field}: `{short(f.old)}` → `{short(f.new)}`" for f in d.manifest],
                         empty="Policy versions, seed, tool schemas, image and rights decision unchanged."))
    return Markdown("\n\n".join(parts))


STAGE = Stage(
    name="suite_release", deps=("acceptance_results",), module=__name__, kinds=frozenset({"json"}), run=run,
    config=lambda spec, paths: [spec.version_prefix,
                                spec.simulator.model_dump(mode="json") if spec.simulator else None],
    description="The immutable, versioned release: manifest.json, tasks.jsonl, world.sqlite.",
)
