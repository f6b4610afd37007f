"""How many disguised original values the evidence site's leak scan (evalsuite.site.sanitize.check_folder) misses.

Original personal values of the bundled AP suite's vendor contacts are written into a page the way an agent or a
person hiding them would: spaced, dotted, hyphenated, lower- or upper-case, split across words or lines, reordered
("Last, First"), with "at" and "dot" spelled out. Each goes into a page of its own and the scan either refuses the
page or misses the value.

    python bench/bench_disguise.py   (runs on main as it was too, for the figure before)
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

from evalsuite.site.sanitize import Originals, SiteError, check_folder, load_originals  # noqa: E402

ORIGINALS = ["Roberto Davis", "Lisa Crawford", "browningjason@hamilton.com", "dwaters@mclean.com", "886-209-1390",
             "GB49HBRE46281948219935", "GB51FYKE76018955597971"]
DISGUISED = [
    "ROBERTO DAVIS", "roberto davis", "R o b e r t o  D a v i s", "R.o.b.e.r.t.o D.a.v.i.s", "Davis, Roberto",
    "Rob-erto Da-vis", "Roberto_Davis", "RobertoDavis", "Lisa\nCrawford", "L i s a C r a w f o r d",
    "CRAWFORD, LISA", "browningjason at hamilton dot com", "browningjason [at] hamilton [dot] com",
    "BROWNINGJASON@HAMILTON.COM", "browningjason @ hamilton . com", "b r o w n i n g j a s o n @ hamilton.com",
    "dwaters(at)mclean(dot)com", "dwaters at mclean.com", "886 209 1390", "886.209.1390", "(886) 209-1390",
    "8862091390", "+1 886 209 1390", "GB49 HBRE 4628 1948 2199 35", "gb49 hbre 4628 1948 2199 35",
    "gb49-hbre-4628-1948-2199-35", "G B 4 9 H B R E 4 6 2 8 1 9 4 8 2 1 9 9 3 5", "GB51.FYKE.7601.8955.5979.71",
    "GB51 FYKE 7601 8955 5979 71", "gb51fyke76018955597971",
]


def _originals(tmp: Path) -> list[Originals]:
    """The originals as the site build reads them: a seed snapshot's columns that deid.json says were hidden."""
    values = {"contact_name": ORIGINALS[:2], "email": ORIGINALS[2:4], "phone": ORIGINALS[4:5] * 2,
              "bank_account": ORIGINALS[5:]}
    (tmp / "seed").mkdir()
    pd.DataFrame(values).to_parquet(tmp / "seed" / "vendor_master.parquet")
    counts = [{"table": "vendor_master", "column": c, "rule": "surrogate", "rows": 2, "nulls": 0, "distinct": 2}
              for c in values]
    (tmp / "deid.json").write_text(json.dumps({"provenance": {"method": "bench", "counts": counts}}))
    return [load_originals("ap_exceptions", tmp / "seed", tmp / "deid.json")]


def missed() -> list[str]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        originals = _originals(Path(tmp))
        for i, value in enumerate(DISGUISED):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            (folder / "page.html").write_text(f"<p>Resolved; the contact {value} was informed.</p>")
            try:
                check_folder(folder, originals, {})
                out.append(value)
            except SiteError:
                pass
    return out


if __name__ == "__main__":
    gone = missed()
    print(f"missed {len(gone)} of {len(DISGUISED)} disguised values")
    for value in gone:
        print(f"  {value!r}")
