"""The real UI: dagster-webserver on a free loopback port, GraphQL, and the lineage page in headless chromium."""
from __future__ import annotations

import re

import dagster_driver as driver
import pytest
from browser_support import browser_page
from docs_support import page
from pipeline_support import held_back_view, open_project_instance
from suite_support import ROOT, SUITE, copy_suite, expire_license
from webserver_support import get, serve, wait

from evalsuite.pipeline.registry import BUILD, gates_of
from evalsuite.sourcing.spec import load_spec
from evalsuite_dagster.definitions import build_defs, lineage_path
from evalsuite_dagster.suite.graph import build_suite_graph
from evalsuite_dagster.suite.held_back import NOT_RUN_TAG

BUILD_ASSETS = ["source_records", "rights_review", "seed_snapshot", "deidentified_snapshot", "policy_documents",
                "derived_tasks", "acceptance_results", "suite_release"]
TRIALS = ["trial_traces", "scorecard", "leaderboard"]  # partitioned: their own group, <suite>_trials
STAGES = BUILD_ASSETS + TRIALS
ASSETS_QUERY = """
{ assetNodes { assetKey { path } groupName isPartitioned dependencyKeys { path }
    assetChecksOrError { ... on AssetChecks { checks { name description
      executionForLatestMaterialization { status evaluation { success severity description } } } } } } }
"""


@pytest.fixture
def webserver(built, tmp_path):
    with serve(built.dagster_home, built.suite.spec, built.suite.home, tmp_path / "webserver.log") as base:
        yield base


def docs_lineage_paths() -> tuple[str, str]:
    """The paths of the docs' lineage links, the build's and the trials'; the demo prints the same two."""
    links = re.findall(r"http://127\.0\.0\.1:3000(/\S+/lineage)", page("pipeline/index.md"))
    assert links == [lineage_path(SUITE), lineage_path(f"{SUITE}_trials")], links
    return links[0], links[1]


def test_ui_shows_the_suite_graph_checks_and_lineage(webserver, built, tmp_path):
    nodes = get(f"{webserver}/graphql", {"query": ASSETS_QUERY})["data"]["assetNodes"]
    suite = {n["assetKey"]["path"][1]: n for n in nodes if n["assetKey"]["path"][0] == SUITE}
    assert set(STAGES) <= set(suite)  # other engineers' assets (generated_tasks, evidence_site) may join them
    assert {s: suite[s]["groupName"] for s in STAGES} == {**{s: SUITE for s in BUILD_ASSETS},
                                                           **{s: f"{SUITE}_trials" for s in TRIALS}}
    # one partitioning in the build group, so "Materialize all" there is one build
    partitioned_in_build = sorted(s for s, n in suite.items() if n["groupName"] == SUITE and n["isPartitioned"])
    deps = lambda stage: sorted(d["path"][1] for d in suite[stage]["dependencyKeys"])  # noqa: E731
    assert deps("derived_tasks") == ["deidentified_snapshot", "policy_documents"]
    assert deps("suite_release") == ["acceptance_results"] and deps("scorecard") == ["trial_traces"]
    checks = {c["name"]: c for n in suite.values() for c in (n["assetChecksOrError"] or {}).get("checks", [])}
    spec = load_spec(ROOT / "suites" / f"{SUITE}.yaml")
    applied = {g.name for stage in BUILD for g in gates_of(stage.name, spec)}
    assert set(checks) == applied and all(c["description"].startswith("Gate: ") for c in checks.values())
    latest = {name: c["executionForLatestMaterialization"] for name, c in checks.items()}
    assert all(e and e["status"] == "SUCCEEDED" and e["evaluation"]["success"] for e in latest.values()), latest
    nux = get(f"{webserver}/graphql", {"query": "{ shouldShowNux }"})["data"]["shouldShowNux"]

    shot = tmp_path / "lineage.png"
    with browser_page() as page:
        build_link, trials_link = docs_lineage_paths()
        page.goto(webserver + trials_link, wait_until="domcontentloaded")
        if nux:  # "Join the Dagster community" covers the page on a first visit
            page.get_by_role("button", name="Skip").click(timeout=60_000)
            nux = False
        page.get_by_text("evidence_site").first.wait_for(timeout=60_000)
        trials_text = page.inner_text("body")
        page.goto(webserver + build_link, wait_until="domcontentloaded")
        if nux:  # "Join the Dagster community" covers the page on a first visit
            page.get_by_role("button", name="Skip").click(timeout=60_000)
        page.get_by_text("suite_release").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)  # let the graph finish laying out before the screenshot
        page.screenshot(path=str(shot), full_page=True)
        text = page.inner_text("body")
        launched = _materialize_all(page, webserver)
        page.goto(f"{webserver}/assets/{SUITE}/scorecard", wait_until="domcontentloaded")
        plot = page.locator('img[alt="pass^k"]').first  # in the metadata table, no [Show Markdown] click
        plot.wait_for(timeout=60_000)
        plot_width = plot.evaluate("img => img.naturalWidth")
    assert shot.stat().st_size > 10_000
    assert "Join the Dagster community" not in text
    assert "Asset Group in" in text and "Global asset lineage" not in text  # the suite's own graph
    assert all(_labelled(s, trials_text) for s in TRIALS) and f"{SUITE}_trials" in trials_text
    assert plot_width > 100
    assert not isinstance(launched, str), (f"Materialize all did not start a build: {launched}; partitioned "
                                           f"assets in group {SUITE}: {partitioned_in_build}")
    assert not partitioned_in_build, (f"partitioned assets in group {SUITE}: {partitioned_in_build}; give them "
                                      "SuiteGraph.trials_group, or Materialize all opens a partition dialog")
    assert launched["status"] in ("NOT_STARTED", "QUEUED", "STARTING", "STARTED", "SUCCESS"), launched
    assert {tuple(a["path"]) for a in launched["assetSelection"]} >= {(SUITE, s) for s in BUILD_ASSETS[1:]}
    missing = [s for s in BUILD_ASSETS if not _labelled(s, text)]
    assert not missing, f"lineage page lacks {missing}; screenshot: {shot}"


RUNS = "{ runsOrError { ... on Runs { results { runId status assetSelection { path } } } } }"


def _runs(base: str) -> dict[str, dict]:
    return {r["runId"]: r for r in get(f"{base}/graphql", {"query": RUNS})["data"]["runsOrError"]["results"]}


def _materialize_all(page, base: str) -> dict | str:
    """Click "Materialize all" on the suite's graph: a build run is launched at once (the run, returned), not a
    partition dialog (its text, returned). The webserver runs no daemon, so the run stays queued; it is
    deleted afterwards (the instance is shared)."""
    before = set(_runs(base))
    page.get_by_role("button", name="Materialize all").first.click(timeout=60_000)
    dialog = page.get_by_role("dialog")
    new = wait("the build run that Materialize all launches",
                lambda: set(_runs(base)) - before or (dialog.count() and dialog.first.inner_text()), timeout=60)
    if isinstance(new, str):
        return " ".join(new.split())[:300]
    run = _runs(base)[next(iter(new))]
    for mutation in ("terminateRun", "deleteRun"):
        get(f"{base}/graphql", {"query": f'mutation {{ {mutation}(runId: "{run["runId"]}") {{ __typename }} }}'})
    return run


def _labelled(stage: str, text: str) -> bool:
    """A graph node's label, whole or shortened in the middle as the group graph does (deidenti…_snapshot)."""
    cut = (line.partition("…") for line in text.splitlines() if "…" in line)
    return stage in text.splitlines() or any(head and stage.startswith(head) and stage.endswith(tail)
                                             for head, _, tail in cut)


def test_a_blocked_build_leaves_the_assets_below_the_gate_not_run_with_its_reason(tmp_path):
    """Dagster shows every asset a failed run planned as "Failed"; a gate that blocks must not fail the run, and
    the assets below it say they were not run, and why."""
    spec = copy_suite(tmp_path / "suite")
    expire_license(spec)
    graph = build_suite_graph(spec)
    with open_project_instance(tmp_path / "dagster") as instance:
        out = driver.build(build_defs([graph], home=tmp_path / "home"), graph, instance)
    below = ["seed_snapshot", "deidentified_snapshot", "derived_tasks", "acceptance_results", "suite_release"]
    assert not out.success and out.blocked == [("rights_cleared", "erp_ap_export: expired license on 2020-01-01")]
    assert out.held_back == below

    with serve(tmp_path / "dagster", spec, tmp_path / "home", tmp_path / "webserver.log") as base:
        info, derived_page = held_back_view(base, ["rights_review", *below], "gate rights_cleared blocked")
        nodes = get(f"{base}/graphql", {"query": ASSETS_QUERY})["data"]["assetNodes"]
    run = info["rights_review"]["latestRun"]
    assert run["status"] == "SUCCESS" and {"key": NOT_RUN_TAG, "value": "rights_cleared"} in run["tags"]
    assert all(info[s]["latestRun"]["id"] == run["id"] and info[s]["latestMaterialization"] is None for s in below)
    checks = {c["name"]: c["executionForLatestMaterialization"] for n in nodes if n["assetKey"]["path"][0] == SUITE
              for c in (n["assetChecksOrError"] or {}).get("checks", [])}
    assert checks["rights_cleared"]["evaluation"] == {
        "success": False, "severity": "ERROR", "description": "erp_ap_export: expired license on 2020-01-01"}
    assert "Failed" not in derived_page
    assert "gate rights_cleared blocked: erp_ap_export: expired license on 2020-01-01" in derived_page
