"""The evidence_site asset: materialized for a scored release through Dagster, it publishes the release's site."""
from __future__ import annotations

import json
import shutil

import dagster as dg
from suite_support import DEMO_KEY

from evalsuite.pipeline.paths import Paths
from evalsuite.pipeline.stages import scorecard, trial_traces
from evalsuite.releases.release import latest_release
from evalsuite_dagster.resources import EvalsuiteHome
from evalsuite_dagster.site.asset import NAME, site_parts
from evalsuite_dagster.suite.graph import build_suite_graph


def test_the_asset_publishes_the_scored_release_downstream_of_its_scorecard(built, tmp_path, monkeypatch):
    spec_path, built_home = built
    home = tmp_path / "home"
    shutil.copytree(built_home, home)  # the session's home stays as other tests expect it
    monkeypatch.setenv("EVALSUITE_DEID_KEY", DEMO_KEY)
    g = build_suite_graph(spec_path)
    paths = Paths(g.spec, home)
    version = latest_release(paths.releases, g.spec.name).manifest.version
    for agent in ("reference", "noop"):  # the scorecard folder as the graph's trial and scorecard steps leave it
        trial_traces.run(g.spec, paths, version, agent, workers=1)
    scorecard.run(g.spec, paths, version)
    asset, job = site_parts(g)
    assert asset.asset_deps[g.key(NAME)] == {g.key("scorecard")}
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(g.versions.name, [version])
        result = dg.materialize([asset], instance=instance, partition_key=version,
                                resources={"home": EvalsuiteHome(home=str(home))})
    assert result.success
    meta = result.asset_materializations_for_node(asset.op.name)[0].metadata
    index = home / "sites" / g.spec.name / version / "index.html"
    assert meta["site"].value == index.as_uri() and index.is_file()  # a link in the UI
    assert meta["release_pages"].value == 1 and meta["scorecards"].value == 1 and meta["trace_replays"].value > 0
    listed = json.loads((index.parent / "site.json").read_text())["files"]
    assert any(f.startswith("traces/") and "/noop/" in f for f in listed)
