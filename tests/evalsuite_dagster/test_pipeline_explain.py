"""What the asset metadata tells a reviewer without opening files: what derivation kept, and per-agent pass^1 /
pass^K as numbers the Plots tab charts across versions, beside a plot small enough to show without a click."""
from __future__ import annotations

import dagster as dg
from pipeline_support import latest

from evalsuite.pipeline.stages.scorecard import INLINE_MARKDOWN


def test_derived_tasks_say_how_many_cases_became_tasks_and_why_not(built):
    s = built.suite
    meta = latest(s.instance, s.graph.key("derived_tasks")).metadata
    assert meta["summary"].value == "56 cases → 49 tasks; skipped: 7 outcome not verified"


def test_scorecard_has_numeric_pass_rates_per_agent_and_an_inline_plot(built):
    s = built.suite
    meta = latest(s.instance, s.graph.key("scorecard"), built.first.version).metadata
    trials = s.graph.spec.trial_protocol.trials
    for agent, expected in (("reference", 1.0), ("noop", 0.0), ("adversary", 0.0)):
        for k in (1, trials):
            assert meta[f"pass^{k} {agent}"] == dg.FloatMetadataValue(expected)
    plot = meta["pass^k_plot"]
    assert isinstance(plot, dg.MarkdownMetadataValue) and len(plot.value) < INLINE_MARKDOWN
    assert plot.value.startswith("![pass^k](data:image/svg+xml,") and "fill='orange'>noop<" in plot.value
