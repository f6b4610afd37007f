"""The evidence site of each scored release: one asset per suite, partitioned by release version, downstream of
its scorecard; wiring only (evalsuite.site builds and checks the site)."""
import dagster as dg

from evalsuite.core.hashing import file_sha256
from evalsuite.pipeline.code_versions import code_version
from evalsuite.site.build import MARKER, asset_files_digest, build_site, site_folder
from evalsuite.site.sanitize import SiteError, load_originals
from evalsuite_dagster.resources import EvalsuiteHome
from evalsuite_dagster.suite.graph import GATED, SuiteGraph

NAME = "evidence_site"


def site_job_name(g: SuiteGraph) -> str:
    return f"{g.spec.name}__site_job"


def site_parts(g: SuiteGraph) -> tuple:
    """The asset and the job that materializes one version of it (make demo runs it)."""
    spec = g.spec

    @dg.asset(name=NAME, key_prefix=spec.name, group_name=g.trials_group, partitions_def=g.versions,
              deps=[g.key("scorecard")], kinds={"html"}, automation_condition=GATED,
              code_version=code_version("evalsuite.site.build", spec.domain_location(), asset_files_digest()),
              description="The public evidence site of the release: release, scorecard and trace-replay pages, "
                          "sanitized (no original personal value, secret or held-out goal), static files only.")
    def _asset(context: dg.AssetExecutionContext, home: EvalsuiteHome) -> dg.MaterializeResult:
        paths, version = home.paths(spec), context.partition_key
        out = site_folder(paths.home, spec.name, version)
        try:
            s = build_site([paths.release(spec.name, version), paths.runs / version], out,
                           originals={spec.name: load_originals(spec.name, paths.seed, paths.deid_report)})
        except SiteError as exc:  # a leak or a missing input: one line, no traceback
            raise dg.Failure(description=str(exc), allow_retries=False) from None
        return dg.MaterializeResult(
            data_version=dg.DataVersion(file_sha256(out / MARKER)),
            metadata={"site": dg.MetadataValue.url((out / "index.html").as_uri()), "release_pages": s.releases,
                      "scorecards": s.scorecards, "trace_replays": s.traces, "files_checked": s.files_scanned})

    return _asset, dg.define_asset_job(site_job_name(g), selection=[g.key(NAME)],
                                       description="Publish one release's evidence site")
