"""Speed-ups keep what trials record: the records, hashes, verdicts and measures of a fixed set of trials equal
their digests computed before the speed-ups (tests/golden_support.py says how, golden_records.json holds them)."""
import json

from golden_support import GOLDEN, ap_digests, tau2_digests

from evalsuite.domains.tau2_retail import DOMAIN
from evalsuite.tasks.taskfile import read_tasks
from evalsuite.worlds.world import World


def _differing(got: dict[str, str], want: dict[str, str]) -> list[str]:
    return sorted(k for k in want.keys() | got.keys() if got.get(k) != want.get(k))


def test_ap_trials_record_what_they_recorded_before(ap):
    """Every baseline agent on every AP task: trace, verdict, measures and reset hash as before."""
    assert _differing(ap_digests(ap.world, ap.tasks), json.loads(GOLDEN.read_text())["ap"]) == []


def test_tau2_retail_replays_trace_grade_and_hash_as_before(tau2_retail_import):
    """The 114 τ² retail tasks' gold calls and some failing ones: each call's traced result or error, the verdict,
    the measures, the content hash and τ²'s DB hash as before."""
    out, _ = tau2_retail_import
    got = tau2_digests(World(DOMAIN, out / "world.sqlite"), read_tasks(out / "tasks.jsonl"))
    assert _differing(got, json.loads(GOLDEN.read_text())["tau2_retail"]) == []
