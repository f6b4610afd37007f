"""The controlled datasets and registered protocols of the bundled experiment suite, generated deterministically
(seeded numpy): each dataset with a known true effect (some none, some real but small, some real and large, at
sizes that settle the question or do not), each protocol stating the conclusion its design should reach. For a
dataset, the first generator seed whose data reaches every intended conclusion with a margin wider than the
tolerances is kept, so negative findings and inconclusive results are as much the answer as supported ones.

Regenerate: python -m evalsuite.domains.experiment.authoring suites/research_experiment
"""
from __future__ import annotations

import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalsuite.domains.experiment import schema as s
from evalsuite.domains.experiment.checks import columns
from evalsuite.domains.experiment.derive import conclude, fragile, run
from evalsuite.domains.experiment.tools import dataset_csv, sha256

VERIFIED_BY = "reference analysis rerun on the seeded dataset by evalsuite authoring (synthetic experiment)"
MIN_EFFECT = {("revenue", "mean_difference"): 5.0, ("revenue", "median_difference"): 6.0,
              ("minutes", "mean_difference"): 1.0, ("minutes", "median_difference"): 1.0,
              ("pages", "mean_difference"): 0.6}
TOLERANCE = {"revenue": 0.05, "minutes": 0.02, "pages": 0.01}
LIFT = 0.08  # the smallest relative lift worth acting on, of any outcome
LIFT_TOLERANCE = 0.002
REPS = 2000
# how far each end of a bootstrap interval may move with the seed, as a share of its width: over 29 other seeds
# the ends of the bundled intervals moved by at most 8.6% (relative lift of minutes, 600 users per arm)
BOOTSTRAP_SPREAD = 0.15
WORDS = {"mean_difference": "difference in means", "median_difference": "difference in medians",
         "relative_lift": "relative lift of the mean"}


@dataclass(frozen=True)
class Design:
    dataset_id: str
    per_arm: int
    effects: dict[str, float]  # revenue: relative lift; minutes, pages: added to the treated mean
    protocols: tuple[tuple[str, str, str, float, str], ...]  # (protocol_id, outcome, estimand, level, conclusion)
    registered_on: str


DESIGNS = [
    Design("D01", 500, {"revenue": 0.25}, (("P01", "revenue", "mean_difference", 0.95, "supported"),
                                          ("P02", "minutes", "mean_difference", 0.95, "not_supported")), "2026-02-02"),
    Design("D02", 500, {}, (("P03", "revenue", "relative_lift", 0.95, "not_supported"),
                            ("P04", "pages", "mean_difference", 0.95, "not_supported")), "2026-02-09"),
    Design("D03", 60, {"revenue": 0.15}, (("P05", "revenue", "mean_difference", 0.90, "inconclusive"),
                                          ("P06", "revenue", "median_difference", 0.95, "inconclusive")), "2026-02-16"),
    Design("D04", 400, {"minutes": 2.0}, (("P07", "minutes", "mean_difference", 0.95, "supported"),
                                          ("P08", "minutes", "median_difference", 0.95, "supported")), "2026-02-23"),
    Design("D05", 400, {"pages": 1.2}, (("P09", "pages", "mean_difference", 0.95, "supported"),
                                        ("P10", "revenue", "median_difference", 0.95, "not_supported")), "2026-03-02"),
    Design("D06", 80, {"minutes": 0.6}, (("P11", "minutes", "mean_difference", 0.90, "inconclusive"),
                                         ("P12", "pages", "relative_lift", 0.95, "inconclusive")), "2026-03-09"),
    Design("D07", 600, {"revenue": 0.30}, (("P13", "revenue", "relative_lift", 0.95, "supported"),
                                           ("P14", "revenue", "median_difference", 0.95, "supported")), "2026-03-16"),
    Design("D08", 600, {}, (("P15", "minutes", "relative_lift", 0.95, "not_supported"),
                            ("P16", "revenue", "mean_difference", 0.95, "not_supported")), "2026-03-23"),
    Design("D09", 150, {"revenue": 0.08}, (("P17", "revenue", "mean_difference", 0.90, "inconclusive"),
                                           ("P18", "minutes", "mean_difference", 0.95, "inconclusive")), "2026-03-30"),
    Design("D10", 300, {"pages": 0.9, "minutes": 1.5}, (("P19", "pages", "mean_difference", 0.95, "supported"),
                                                        ("P20", "minutes", "relative_lift", 0.95, "supported")),
           "2026-04-06"),
    Design("D11", 500, {"minutes": 0.3}, (("P21", "minutes", "mean_difference", 0.95, "not_supported"),
                                          ("P22", "revenue", "relative_lift", 0.95, "not_supported")), "2026-04-13"),
    Design("D12", 120, {"pages": 0.5}, (("P23", "pages", "mean_difference", 0.90, "inconclusive"),
                                        ("P24", "revenue", "median_difference", 0.95, "inconclusive")), "2026-04-20"),
]
# registered, never verified: derivation skips it (and says so)
UNVERIFIED = ("P25", "D02", "minutes", "median_difference", 0.95)


def observations(d: Design, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for arm in ("control", "treatment"):
        treated = arm == "treatment"
        lift = 1 + d.effects.get("revenue", 0.0) * treated
        revenue = rng.lognormal(np.log(40), 0.5, d.per_arm) * lift
        minutes = np.clip(rng.normal(12 + d.effects.get("minutes", 0.0) * treated, 4, d.per_arm), 0, None)
        pages = rng.poisson(5 + d.effects.get("pages", 0.0) * treated, d.per_arm)
        segment = rng.choice(s.SEGMENTS, d.per_arm, p=[0.4, 0.6])
        for i in range(d.per_arm):
            rows.append({"dataset_id": d.dataset_id, "unit_id": f"{d.dataset_id}-{arm[0].upper()}{i + 1:04d}",
                         "arm": arm, "segment": str(segment[i]), "revenue": round(float(revenue[i]), 2),
                         "minutes": round(float(minutes[i]), 2), "pages": float(pages[i])})
    return rows


def protocol(d: Design, pid: str, outcome: str, estimand: str, level: float, reference: dict | None = None) -> dict:
    floor = LIFT if estimand == "relative_lift" else MIN_EFFECT[(outcome, estimand)]
    tol = LIFT_TOLERANCE if estimand == "relative_lift" else TOLERANCE[outcome]
    p = {"protocol_id": pid, "dataset_id": d.dataset_id, "registered_on": d.registered_on,
         "hypothesis": f"The treatment raises {outcome} ({WORDS[estimand]}, treatment minus control) by at least "
                       f"{floor:g}.",
         "outcome": outcome, "estimand": estimand, "interval": "welch" if estimand == "mean_difference" else
         "bootstrap", "level": level, "bootstrap_reps": REPS, "min_effect": floor, "tolerance": tol,
         "interval_tolerance": tol}
    if reference is not None and p["interval"] == "bootstrap":
        p["interval_tolerance"] = max(tol, math.ceil(BOOTSTRAP_SPREAD * (reference["ci_high"] - reference["ci_low"])
                                                     * 1000) / 1000)
    return p


def _settled(d: Design, seed: int) -> tuple[list[dict], list[dict]] | None:
    """The dataset and its protocols if every intended conclusion holds with margin at this seed."""
    rows = observations(d, seed)
    data = columns(rows)
    out = []
    for pid, outcome, estimand, level, intended in d.protocols:
        ref = run(protocol(d, pid, outcome, estimand, level), data)
        p = protocol(d, pid, outcome, estimand, level, ref)
        if conclude(p, ref) != intended or fragile(p, ref):
            return None
        out.append(p)
    return rows, out


def source_tables() -> dict[str, list[dict]]:
    tables: dict[str, list[dict]] = {"datasets": [], "observations": [], "protocols": [], "verifications": []}
    for k, d in enumerate(DESIGNS, 1):
        seed, found = next((seed, found) for seed in range(1000 * k, 1000 * k + 500)
                           if (found := _settled(d, seed)) is not None)
        rows, protocols = found
        tables["datasets"].append({"dataset_id": d.dataset_id, "description": (
            f"Checkout experiment {d.dataset_id}: {d.per_arm} users per arm, randomised; synthetic (seeded "
            f"generator, seed {seed})"), "rows": len(rows), "sha256": sha256(dataset_csv(rows))})
        tables["observations"] += rows
        tables["protocols"] += protocols
        tables["verifications"] += [{"protocol_id": p["protocol_id"], "verified_by": VERIFIED_BY,
                                     "verified_on": d.registered_on} for p in protocols]
    pid, dataset_id, outcome, estimand, level = UNVERIFIED
    d = next(d for d in DESIGNS if d.dataset_id == dataset_id)
    draft = protocol(d, pid, outcome, estimand, level)
    data = columns([r for r in tables["observations"] if r["dataset_id"] == dataset_id])
    tables["protocols"].append(protocol(d, pid, outcome, estimand, level, run(draft, data)))
    tables["verifications"].append({"protocol_id": pid, "verified_by": "", "verified_on": ""})
    return tables


def write_suite(folder: Path) -> list[Path]:
    """The source tables as CSV under folder/source; returns the files written."""
    written = []
    for name, rows in source_tables().items():
        path = Path(folder) / "source" / f"{name}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_suite(Path(sys.argv[1])):
        print(p)
