"""The three trial modes side by side on a dual-control release (mobile_service, tau2_telecom): tables, plot.

    EVALSUITE_HOME=$(mktemp -d) .venv/bin/evalsuite build suites/tau2_telecom.yaml --no-progress
    .venv/bin/python bench/modes.py RELEASE_FOLDER --out OUT [--trials 2]

Two agents, each run once per mode (default, no_user, oracle_plan) on the same tasks under its own identity:
`reference` (asks the user for every step on the phone) and `soloist` (follows the same plan but calls every
tool itself and never talks to the user: what a model that ignores the customer does). Writes
OUT/<agent>_modes.md and OUT/<agent>_modes.png and prints the tables.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from evalsuite.releases.release import Release
from evalsuite.scoring.modes import MODES, compare_modes, mode_identity, plot, to_markdown, with_mode
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.harness import TrialSettings, run_trials


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--trials", type=int, default=2)
    args = ap.parse_args()
    release = Release(args.release)
    tasks, identity = release.tasks(), release.run_identity()
    args.out.mkdir(parents=True, exist_ok=True)
    for agent in (make_agent("reference"), make_agent("soloist")):
        runs = {}
        for mode in MODES:
            moded = with_mode(tasks, mode)
            runs[mode] = run_trials(release.world_ref(), moded, [agent], args.trials,
                                    TrialSettings(mode_identity(identity, moded), workers=1))
        cmp = compare_modes(runs, tasks, resamples=1000)
        text = to_markdown(cmp)
        (args.out / f"{agent.name}_modes.md").write_text(text)
        plot(cmp, args.out / f"{agent.name}_modes.png")
        print(f"## {agent.name}\n\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
