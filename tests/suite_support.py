"""Copies of the bundled AP suite for tests, and the ways tests spoil them (an expired license, a leaked e-mail,
an unsolvable case)."""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import yaml

from evalsuite.deid.keys import DEMO_KEY  # noqa: F401  (the tests take it from here with the suite)

ROOT = Path(__file__).resolve().parents[1]
SUITE = "ap_exceptions"


def copy_suite(dest: Path, reference_trials: int = 2, trials: int = 2, **acceptance) -> Path:
    """The bundled AP suite copied into dest (fewer trials, so tests stay fast); returns the spec path."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "suites" / SUITE, dest / SUITE)
    raw = yaml.safe_load((ROOT / "suites" / f"{SUITE}.yaml").read_text())
    raw["policies"] = [str((ROOT / "suites" / p).resolve()) for p in raw["policies"]]
    raw["acceptance"] = {**raw["acceptance"], "reference_trials": reference_trials, **acceptance}
    raw["trial_protocol"]["trials"] = trials
    spec = dest / f"{SUITE}.yaml"
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return spec


def edit_spec(spec: Path, **acceptance) -> None:
    raw = yaml.safe_load(spec.read_text())
    raw["acceptance"].update(acceptance)
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))


def rewrite_csv(path: Path, edit) -> None:
    """Apply edit(rows) to a CSV export in place, keeping its columns."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    fields = list(rows[0])
    edit(rows)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def corrupt_resolution(spec: Path) -> str:
    """Point the last action of the first resolved case at an invoice that does not exist; returns its case id."""
    source = spec.parent / SUITE / "source" / "resolved_cases.csv"
    hit = {}

    def edit(rows):
        actions = json.loads(rows[0]["resolution_actions"])
        actions[-1]["arguments"]["invoice_id"] = "INV-00000"
        rows[0]["resolution_actions"] = json.dumps(actions)
        hit["case"] = rows[0]["case_id"]

    rewrite_csv(source, edit)
    return hit["case"]


def leak_email(spec: Path) -> str:
    """Paste a vendor contact's email into purchase_orders.buyer, a column the rules keep as it is (declared, so
    the source scan lets it through; not free text, so de-identification does not scrub it)."""
    src = spec.parent / SUITE / "source"
    with open(src / "vendor_master.csv", newline="") as fh:
        email = next(r["email"] for r in csv.DictReader(fh) if r["email"])

    def edit(rows):
        rows[0]["buyer"] = email

    rewrite_csv(src / "purchase_orders.csv", edit)
    edit_rules(spec, lambda tables: tables["purchase_orders"]["columns"].update(buyer={"rule": "keep"}))
    return email


def expire_license(spec: Path) -> None:
    rights = spec.parent / SUITE / "rights.yaml"
    rights.write_text(rights.read_text().replace("expires: 2027-12-31", "expires: 2020-01-01"))




def rewrite_manifest(spec: Path, **fields) -> None:
    """Set fields of the suite copy's rights manifest (e.g. permitted_uses)."""
    rights = spec.parent / SUITE / "rights.yaml"
    raw = yaml.safe_load(rights.read_text())
    rights.write_text(yaml.safe_dump({**raw, **fields}, sort_keys=False))


def edit_rules(spec: Path, edit) -> None:
    """Apply edit(tables) to the suite copy's de-identification rules in place."""
    path = spec.parent / SUITE / "deid.yaml"
    raw = yaml.safe_load(path.read_text())
    edit(raw["tables"])
    path.write_text(yaml.safe_dump(raw, sort_keys=False))


CONTACT_COLUMNS = ("contact_name", "email", "phone", "bank_account")


def deny_personal_data(spec: Path) -> None:
    """The issue's bypass: a manifest claiming no personal data, and rules that leave the vendor contacts alone."""
    rewrite_manifest(spec, personal_data=False, personal_columns=[], deidentification_required=False)

    def unrule(tables):
        for column in CONTACT_COLUMNS:
            del tables["vendor_master"]["columns"][column]

    edit_rules(spec, unrule)


def private_copy(built: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """The built suite's folder and home copied below tmp_path, for a test to change: (spec file, home)."""
    spec_path, home = built
    shutil.copytree(spec_path.parent, tmp_path / "suite")
    shutil.copytree(home, tmp_path / "home")
    return tmp_path / "suite" / spec_path.name, tmp_path / "home"


def declare_contacts_synthetic(spec: Path) -> None:
    """The same bypass through `synthetic_columns`: the vendor contacts declared made up, and left unruled."""
    rewrite_manifest(spec, personal_data=False, personal_columns=[], deidentification_required=False,
                     synthetic_columns=[f"vendor_master.{c}" for c in CONTACT_COLUMNS])

    def unrule(tables):
        for column in CONTACT_COLUMNS:
            del tables["vendor_master"]["columns"][column]

    edit_rules(spec, unrule)
