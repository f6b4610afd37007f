"""Recall and precision of the person-name recognizer (evalsuite.core.pii.names_in) on names planted in AP notes.

Each of the planted names (initials, "Last, First", lower-case, titles, hyphens, particles, several naming
traditions) is put into each note template; the templates also hold the capitalised words an AP note has that are
not names: vendors named after people, months, weekdays, cities, products and AP terms. A planted name counts as
found when one recognized span covers it whole; a span counts as right when it lies within the planted name.

    python bench/bench_names.py                      # the lexicon the project uses (Faker's person providers)
    python bench/bench_names.py --names-dataset DIR  # also the names-dataset package's lexicon, unpacked in DIR
"""
from __future__ import annotations

import argparse
import gzip
import pickle
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalsuite.core.pii import name_lexicon, names_in  # noqa: E402

PLANTED = [
    "B. Ortiz", "K. Lamb", "Okonkwo-Bright, Marguerite", "Marguerite Okonkwo-Bright", "marguerite okonkwo-bright",
    "Ms. Okonkwo-Bright", "Dr. Hannah Schmidt", "Mr. Lamb", "Roberto Davis", "roberto davis", "Davis, Roberto",
    "Priya Raman", "Siobhan O'Connor", "O'Connor, Siobhan", "Jean-Pierre Dubois", "Maria J. Garcia", "J. R. Hartley",
    "Tomasz Kowalski", "Ngozi Eze", "Aisha Bello", "Lars Nilsson", "Hiroshi Tanaka", "Carlos Mendoza",
    "Giulia Rossi", "Yolanda Huynh", "Anna-Lena Vogel", "Tiago Silva", "Emeka Okafor", "mrs. jackson",
    "Prof. Wilhelm Braun", "Ahmed Khan", "Sarah O'Neil", "Fatima Zahra", "Ingrid Johansson", "Pieter de Vries",
    "Chen Wei",
]
# Every template has the capitalised non-names of a real note; {n} is where the name goes.
TEMPLATES = [
    "Called {n} about INV-55101, no answer yet; Kelley Inc says the hydraulic hose price was agreed in March.",
    "{n} (Gould-Foster, Berlin office) confirmed the Steel Bracket quantity on Monday.",
    "Per {n}: hold until the Goods Receipt for PO-7002 is posted in May.",
    "Escalated to {n} in Accounts Payable; Morgan Group invoice 1012-645 disputed on Net 30 terms.",
    "Spoke with {n} from Hayes, Johnson and Shannon re Price Variance of 11.68 EUR on line 1.",
    "Credit Note requested by {n}; Paris warehouse returns 7 Office Chair units by June 3.",
]

# Written after the recognizer was tuned on the lists above and never tuned on: its figures are the honest ones.
HELD_OUT_PLANTED = [
    "A. Nakamura", "T. Brennan", "Fitzgerald, Aoife", "Aoife Fitzgerald", "aoife fitzgerald", "Mrs. Adeyemi",
    "Dr. Rafael Ortega", "Mr. Thompson", "Sophie Laurent", "sophie laurent", "Laurent, Sophie", "Wojciech Nowak",
    "Nkechi Obi", "Björn Lindqvist", "Mehmet Yilmaz", "Dmitri Volkov", "Ana Sofia Pereira", "Kwame Mensah",
    "Jan van der Berg", "Luca Bianchi", "Hannah Müller", "Rahul Sharma", "Isabel Moreno", "Fiona MacLeod",
    "S. K. Patel", "Bernadette Kowalczyk", "Miguel Ángel Torres", "Ewa Zielińska", "Omar Haddad", "Chloé Martin",
    "Nguyen Van An", "Grace Adebayo",
]
HELD_OUT_TEMPLATES = [
    "Vendor Baker Inc (Lagos branch) asked {n} to re-issue invoice 1018-937 before Friday.",
    "Approved by {n} after the August audit; Smith-Diaz to credit 3 Water Bottle cases.",
    "Remittance query from Johnson and Sons; {n} will check the Denver receiving log.",
    "Left voicemail for {n}. Turner, Murray and Haley still dispute the Freight Charge.",
]


def faker_lexicon():
    return name_lexicon()


def names_dataset_lexicon(folder: Path, max_rank: int):
    """First and last names of names-dataset ranked within max_rank in some country, with Faker's common words."""
    def load(name: str) -> frozenset[str]:
        with gzip.open(folder / "names_dataset" / "v3" / f"{name}.pkl.gz") as fh:
            table = pickle.load(fh)
        return frozenset(k.lower() for k, v in table.items() if any(r <= max_rank for r in v["rank"].values()))
    base = name_lexicon()
    return base._replace(first=load("first_names"), last=load("last_names"))


def measure(lexicon, templates=TEMPLATES, planted=PLANTED) -> dict[str, float]:
    found = spans = right = 0
    start = time.perf_counter()
    for template in templates:
        for name in planted:
            note = template.format(n=name)
            at = note.index(name)
            hits = names_in(note, lexicon)
            found += any(a <= at and at + len(name) <= b for a, b in hits)
            spans += len(hits)
            right += sum(at <= a and b <= at + len(name) + 1 for a, b in hits)
    seconds = time.perf_counter() - start
    planted = len(templates) * len(planted)
    return {"planted": planted, "recall": found / planted, "precision": right / spans if spans else 1.0,
            "found": found, "spans": spans, "wrong_spans": spans - right, "us_per_note": seconds / planted * 1e6}


def _covered(note: str, name: str, lexicon) -> bool:
    at = note.index(name)
    return any(a <= at and at + len(name) <= b for a, b in names_in(note, lexicon))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--names-dataset", type=Path, help="folder names-dataset is installed in (pip --target)")
    ap.add_argument("--max-rank", type=int, default=20000)
    args = ap.parse_args()
    candidates = {"faker person providers": faker_lexicon}
    if args.names_dataset:
        candidates[f"names-dataset (rank <= {args.max_rank})"] = lambda: names_dataset_lexicon(
            args.names_dataset, args.max_rank)
    for label, make in candidates.items():
        start = time.perf_counter()
        lexicon = make()
        load = time.perf_counter() - start
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{label}: {len(lexicon.first)} first, {len(lexicon.last)} last names; load {load:.1f} s, "
              f"peak {rss:.0f} MB")
        for part, templates, planted in (("tuned on", TEMPLATES, PLANTED),
                                         ("held out", HELD_OUT_TEMPLATES, HELD_OUT_PLANTED)):
            figures = measure(lexicon, templates, planted)
            print(f"  {part}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                          for k, v in figures.items()))
            missed = sorted({n for t in templates for n in planted if not _covered(t.format(n=n), n, lexicon)})
            print(f"    missed: {missed}")


if __name__ == "__main__":
    main()
