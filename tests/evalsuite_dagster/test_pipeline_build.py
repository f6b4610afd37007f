"""A clean suite through the real asset graph: released, versioned by content, scored, and shown to reviewers."""
from __future__ import annotations

import json

import dagster as dg
from pipeline_support import latest
from suite_support import SUITE

from evalsuite.core.hashing import file_sha256
from evalsuite.scoring.runlog import PASSK_PNG, SCORECARD_JSON
from evalsuite_dagster.suite.automation import new_release_sensor


def test_clean_suite_releases(built):
    s, out = built.suite, built.first
    assert out.success and not out.blocked
    assert set(out.checks) == {"rights_cleared", "source_quality", "personal_data_declared", "no_residual_pii",
                               "joins_preserved", "task_schema_valid", "assertions_cite_policy",
                               "masked_fields_justified",
                               "reference_solvable", "reference_stable", "not_trivially_passable", "resettable"}
    assert all(passed for passed, _ in out.checks.values())
    release = s.home / "releases" / SUITE / out.version
    assert out.release == str(release)
    assert sorted(p.name for p in release.iterdir()) == ["audit.md", "manifest.json", "tasks.jsonl", "world.sqlite"]
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["version"] == out.version and manifest["rights_decision"]["status"] == "cleared"
    assert manifest["acceptance"]["releasable"] and manifest["n_tasks"] == manifest["acceptance"]["accepted"]
    assert not [p for p in release.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_data_versions_are_content_hashes_and_code_versions_are_set(built):
    s = built.suite
    tag = lambda stage: latest(s.instance, s.graph.key(stage)).tags  # noqa: E731
    quality = json.loads((s.home / "suites" / SUITE / "quality.json").read_text())
    derivation = json.loads((s.home / "suites" / SUITE / "derivation.json").read_text())
    assert tag("seed_snapshot")["dagster/data_version"] == quality["sha256"]
    assert tag("derived_tasks")["dagster/data_version"] == derivation["task_set_sha256"]
    audit = s.home / "suites" / SUITE / "acceptance" / "audit.json"
    assert tag("acceptance_results")["dagster/data_version"] == file_sha256(audit)
    assert tag("suite_release")["dagster/data_version"] == built.first.version
    for stage in ("rights_review", "seed_snapshot", "derived_tasks", "acceptance_results", "suite_release"):
        assert tag(stage)["dagster/code_version"]
    observed = s.instance.get_latest_data_version_record(s.graph.key("source_records"), is_source=True)
    assert observed is not None  # the build run observes the delivery first


def test_metadata_a_reviewer_reads_without_opening_files(built):
    s = built.suite
    meta = lambda stage, part=None: latest(s.instance, s.graph.key(stage), part).metadata  # noqa: E731
    assert meta("rights_review")["license_decision"].value == "cleared"
    assert "DSA-2026-014" in meta("rights_review")["licenses"].value
    assert "| vendor_master |" in meta("seed_snapshot")["row_counts"].value
    assert meta("derived_tasks")["tasks"].value == meta("acceptance_results")["tasks"].value > 0
    assert meta("acceptance_results")["quarantined_tasks"].value == "No task quarantined."
    card = meta("scorecard", built.first.version)
    assert "| pass^1 |" in card["pass^k"].value
    assert card["pass^k_plot"].value.startswith("![pass^k](data:image/svg+xml,")
    assert "| " + built.first.version + " | reference |" in meta("leaderboard")["leaderboard"].value


def test_rematerializing_unchanged_inputs_keeps_the_version(built):
    s = built.suite
    assert built.second.success and built.second.version == built.first.version
    assert s.releases() == [built.first.version]  # no duplicate folder
    records = s.instance.fetch_materializations(s.graph.key("suite_release"), limit=2).records
    assert len(records) == 2
    assert {r.asset_materialization.tags["dagster/data_version"] for r in records} == {built.first.version}


def test_trials_per_agent_partition_and_scorecard(built):
    s, version = built.suite, built.first.version
    agents = [a.name for a in s.graph.spec.agents]
    assert s.instance.get_dynamic_partitions(s.graph.versions.name) == [version]
    assert sorted(s.instance.get_dynamic_partitions(s.graph.agents.name)) == sorted(agents)
    assert sorted(built.trial_partitions) == sorted(f"{a}|{version}" for a in agents)
    for a in agents:
        assert latest(s.instance, s.graph.key("trial_traces"), dg.MultiPartitionKey({"version": version, "agent": a}))
    card = json.loads((s.home / "runs" / SUITE / version / SCORECARD_JSON).read_text())
    first = {a["agent"]: a["curve"][0]["pass_hat"] for a in card["agents"]}
    assert first == {"reference": 1.0, "noop": 0.0, "adversary": 0.0}
    assert (s.home / "runs" / SUITE / version / PASSK_PNG).is_file()


def test_new_release_sensor_requests_trials_once_per_agent(built):
    s, version = built.suite, built.first.version
    # The first evaluation (in the fixture) registered the partitions and requested one run per agent.
    assert sorted(built.trial_partitions) == sorted(f"{a.name}|{version}" for a in s.graph.spec.agents)
    again = new_release_sensor(s.graph)(dg.build_sensor_context(instance=s.instance, definitions=s.defs))
    assert not again.run_requests and not again.dynamic_partitions_requests
    assert "already has traces" in again.skip_reason.skip_message
