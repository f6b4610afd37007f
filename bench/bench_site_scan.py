"""How long the evidence site's leak scan (evalsuite.site.sanitize.check_folder) takes over a built site: the median
of a few scans of every file, with the originals of the release's suite, a configured secret and the hidden answers
of the release, as `evalsuite site` runs it.

    EVALSUITE_DEID_KEY=... python bench/bench_site_scan.py RELEASE SITE [--repeat 5]
    (runs on main as it was too, for the figure before: check_folder's arguments are unchanged)
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalsuite.site.answers import answer_keys  # noqa: E402
from evalsuite.site.inputs import collect  # noqa: E402
from evalsuite.site.sanitize import check_folder, configured_secrets, load_originals, suite_work_folder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("release", type=Path)
    parser.add_argument("site", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sources = collect([args.release])
    (suite, _), = sources.releases
    work = suite_work_folder(args.release, suite)
    originals = [load_originals(suite, work / "seed", work / "deid.json")]
    answers = [k.values for k in answer_keys(sources).values()]
    secrets = configured_secrets()
    seconds, files = [], 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        files = check_folder(args.site, originals, secrets, answers=answers)
        seconds.append(time.perf_counter() - start)
    print(f"{files} files scanned: median {statistics.median(seconds):.2f} s over {args.repeat} scans "
          f"(min {min(seconds):.2f}, max {max(seconds):.2f})")


if __name__ == "__main__":
    main()
