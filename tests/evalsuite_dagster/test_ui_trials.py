"""The trials group in the UI over a scored and published release: the scorecard's pass^k plot and its pass^k, cost
and paired-comparison tables shown in place, the evidence site's link, and the trials group's partition dialog."""
from __future__ import annotations

import shutil

import pytest
from browser_support import browser_page
from dagster_driver import publish
from docs_support import page as page_text
from pipeline_support import open_project_instance
from suite_support import SUITE
from webserver_support import get, serve, wait

from evalsuite_dagster.definitions import build_defs, lineage_path


@pytest.fixture(scope="module")
def published(built, tmp_path_factory):
    """A copy of the session's scored suite (instance and home) with the release's evidence site published."""
    tmp = tmp_path_factory.mktemp("published")
    shutil.copytree(built.dagster_home, tmp / "dagster")
    shutil.copytree(built.suite.home, tmp / "home")
    defs = build_defs([built.suite.graph], home=tmp / "home")
    with open_project_instance(tmp / "dagster") as instance:
        site = publish(defs, built.suite.graph, instance, built.first.version)
    with serve(tmp / "dagster", built.suite.spec, tmp / "home", tmp / "webserver.log") as base:
        yield base, site


# The metadata values of the given keys drawn past the right edge of what shows them (an ancestor that clips or
# scrolls sideways).
CLIPPED = """keys => [...document.querySelectorAll('tr')].filter(r => keys.includes(r.cells[0]?.innerText.trim()))
  .flatMap(r => [...r.querySelectorAll('td table, td img, td p')]).filter(e => {
    let edge = Infinity;
    for (let a = e.parentElement; a; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') edge = Math.min(edge, a.getBoundingClientRect().right);
    }
    return e.getBoundingClientRect().right > edge + 1;
}).map(e => (e.alt || e.innerText).slice(0, 60))"""


def test_the_scorecard_shows_a_readable_pass_k_plot_and_its_tables_in_place_not_cut_at_the_right(published):
    base, _ = published
    with browser_page() as page:
        page.goto(f"{base}/assets/{SUITE}/scorecard", wait_until="domcontentloaded")
        plot = page.locator('img[alt="pass^k"]').first  # in place: no [Show Markdown] click
        plot.wait_for(timeout=60_000)
        page.get_by_text("paired_comparison").first.wait_for(timeout=60_000)
        page.wait_for_timeout(500)
        size = plot.evaluate("img => [img.naturalWidth, img.getBoundingClientRect().width]")
        clipped = page.evaluate(CLIPPED, ["pass^k_plot", "pass^k", "cost", "paired_comparison"])
    assert min(size) >= 400, size  # was 216 px wide with 7 px tick labels
    assert clipped == [], f"cut at the right edge of their cell: {clipped}"


def test_the_evidence_site_is_a_link(published):
    base, site = published
    with browser_page() as page:
        page.goto(f"{base}/assets/{SUITE}/evidence_site", wait_until="domcontentloaded")
        link = page.locator(f'a[href="{site}"]').first
        link.wait_for(timeout=60_000)
        text = link.inner_text()
    assert site.startswith("file:///") and site.endswith("/index.html") and text == site


def test_materialize_all_on_the_trials_group_offers_every_agent_and_version_in_its_partition_dialog(published, built):
    # Dagster opens a multi-partitioned group's dialog with nothing selected; the docs tell the user to press
    # "All" beside each dimension, which must select the registered agents and the release's version.
    base, _ = published
    agents = built.suite.instance.get_dynamic_partitions(f"{SUITE}__agents")
    with browser_page() as page:
        page.goto(base + lineage_path(f"{SUITE}_trials"), wait_until="domcontentloaded")
        if get(f"{base}/graphql", {"query": "{ shouldShowNux }"})["data"]["shouldShowNux"]:
            page.get_by_role("button", name="Skip").click(timeout=60_000)
        page.get_by_text("scorecard").first.wait_for(timeout=60_000)
        page.get_by_role("button", name="Materialize all").first.click(timeout=60_000)
        dialog = page.get_by_role("dialog").first
        launch = dialog.get_by_role("button", name="Launch backfill")
        launch.wait_for(timeout=60_000)
        all_buttons = dialog.get_by_role("button", name="All", exact=True)
        all_buttons.nth(1).wait_for(timeout=60_000)  # one per dimension, once the partitions have loaded
        page.wait_for_timeout(1000)
        enabled_before = launch.is_enabled()
        all_buttons.nth(0).click()
        all_buttons.nth(1).click()
        enabled_after = wait("Launch backfill to be enabled after All, All", launch.is_enabled, timeout=30)
        chosen = dialog.inner_text()
    assert "agent" in chosen and "version" in chosen and not enabled_before
    assert set(agents) == {"reference", "noop", "adversary"}
    assert all(a in chosen for a in agents) and built.first.version in chosen and enabled_after, chosen
    assert 'press **All** beside' in page_text("pipeline/index.md")
