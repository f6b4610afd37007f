"""Sourced-looking AP records: what an ERP export of blocked invoices really looks like.

Seeded and deterministic. The mess is deliberate: duplicate vendor records,
stale fields, mixed currencies, missing contacts, staff notes that name
people, cases resolved under last year's policy and cases nobody verified.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from faker import Faker

CATEGORIES = ["pv_release", "pv_hold", "pv_escalate", "qty_mismatch", "missing_receipt", "duplicate"]
# Variance bands (percent) per category under each policy version, clear of the boundaries.
BANDS = {
    "v6": {"pv_release": (0.6, 4.6), "pv_hold": (5.6, 14.4), "pv_escalate": (16.0, 28.0)},
    "v7": {"pv_release": (0.4, 1.7), "pv_hold": (2.5, 9.5), "pv_escalate": (11.0, 28.0)},
}
CURRENCIES = ["USD"] * 6 + ["EUR"] * 3 + ["GBP"] * 2
ITEMS = ["copier toner", "safety gloves", "pallet wrap", "laptop dock", "hydraulic hose", "LED panel",
         "office chairs", "server rack", "cleaning service", "forklift tyre", "cable trays", "label rolls"]


def money(x) -> Decimal:
    return Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@dataclass
class Export:
    tables: dict[str, list[dict]] = field(default_factory=dict)

    def add(self, table: str, row: dict) -> None:
        self.tables.setdefault(table, []).append(row)


def _vendors(rng: random.Random, fake: Faker, out: Export, n: int) -> list[dict]:
    vendors = []
    for i in range(n):
        stale = rng.random() < 0.3
        v = {"vendor_id": f"V-{1001 + i}", "name": fake.company(), "contact_name": fake.name(),
             "email": None if rng.random() < 0.12 else fake.company_email(),
             "phone": None if rng.random() < 0.2 else fake.phone_number(),
             "country": rng.choice(["US", "DE", "GB", "US"]),
             "currency": rng.choice(CURRENCIES), "bank_account": fake.iban(), "status": "active", "duplicate_of": None,
             "updated_at": f"{2019 if stale else 2025}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00"}
        vendors.append(v)
        out.add("vendor_master", v)
    for j, orig in enumerate(rng.sample(vendors, 3)):  # the same supplier entered twice
        dup = {**orig, "vendor_id": f"V-{1901 + j}", "name": orig["name"].upper().replace(",", ""),
               "duplicate_of": orig["vendor_id"], "updated_at": "2018-11-02T08:00:00"}
        out.add("vendor_master", dup)
    return vendors


def _po(rng: random.Random, out: Export, po_id: str, vendor: dict, when: date) -> list[dict]:
    out.add("purchase_orders", {"po_id": po_id, "vendor_id": vendor["vendor_id"],
                                "buyer": rng.choice(["B. Ortiz", "K. Lamb", None]), "currency": vendor["currency"],
                                "status": rng.choice(["open", "open", "closed"]),
                                "order_date": (when - timedelta(days=rng.randint(20, 60))).isoformat()})
    lines = []
    for ln in range(1, rng.randint(1, 3) + 1):
        line = {"po_id": po_id, "line_no": ln, "item": rng.choice(ITEMS), "qty": rng.randint(2, 40),
                "unit_price": money(rng.uniform(8, 900))}
        out.add("po_lines", line)
        lines.append(line)
    return lines


def _variance_price(rng: random.Random, unit: Decimal, band: tuple[float, float]) -> Decimal:
    for _ in range(100):
        price = money(unit * Decimal(1 + rng.uniform(*band) / 100))
        pct = (price - unit) / unit * 100
        if band[0] <= pct <= band[1]:
            return price
    raise ValueError(f"no price in band {band} for unit {unit}")


@dataclass
class CaseFacts:
    category: str
    policy: str
    line_no: int
    variance: Decimal | None = None


def generate(seed: int = 7, n_cases: int = 56, n_vendors: int = 24) -> dict[str, list[dict]]:
    """Source tables of one ERP export, plus `resolved_cases` with staff's verified outcomes."""
    rng = random.Random(seed)
    fake = Faker("en_US")
    fake.seed_instance(seed)
    out = Export()
    vendors = _vendors(rng, fake, out, n_vendors)
    dups = {v["duplicate_of"]: v for v in out.tables["vendor_master"] if v["duplicate_of"]}
    _history(rng, out, vendors)
    for i in range(n_cases):
        _case(rng, fake, out, i, CATEGORIES[i % len(CATEGORIES)], vendors, dups)
    return out.tables


def _history(rng: random.Random, out: Export, vendors: list[dict]) -> None:
    """Invoices already paid: background for duplicates and for agents that look around."""
    for i in range(30):
        v = rng.choice(vendors)
        when = date(2025, 1, 1) + timedelta(days=rng.randint(0, 500))
        po_id = f"PO-{7000 + i}"
        lines = _po(rng, out, po_id, v, when)
        inv_id = f"INV-{40000 + i}"
        total = _invoice(out, inv_id, v, po_id, f"{v['vendor_id'][2:]}-{rng.randint(100, 999)}", when, lines, "paid")
        for ln in lines:
            out.add("goods_receipts", {"receipt_id": f"GR-{po_id[3:]}-{ln['line_no']}", "po_id": po_id,
                                       "line_no": ln["line_no"], "qty_received": ln["qty"],
                                       "received_date": when.isoformat()})
        out.add("payments", {"payment_id": f"PAY-{i + 1:05d}", "invoice_id": inv_id, "amount": total,
                             "currency": v["currency"], "paid_on": (when + timedelta(days=30)).isoformat()})


def _invoice(out: Export, inv_id: str, vendor: dict, po_id: str, vno: str, when: date, lines: list[dict], status: str,
             overrides: dict[int, dict] | None = None) -> Decimal:
    total = Decimal(0)
    for ln in lines:
        row = {"qty": ln["qty"], "unit_price": ln["unit_price"], **(overrides or {}).get(ln["line_no"], {})}
        amount = money(row["qty"] * row["unit_price"])
        total += amount
        out.add("invoice_lines", {"invoice_id": inv_id, "line_no": ln["line_no"], "po_line_no": ln["line_no"],
                                  "qty": row["qty"], "unit_price": row["unit_price"], "amount": amount})
    out.add("invoices", {"invoice_id": inv_id, "vendor_id": vendor["vendor_id"], "po_id": po_id,
                         "vendor_invoice_no": vno, "invoice_date": when.isoformat(), "currency": vendor["currency"],
                         "total": total, "status": status, "hold_reason": None,
                         "updated_at": f"{when.isoformat()}T07:30:00"})
    return total


def _case(rng, fake, out: Export, i: int, category: str, vendors, dups) -> None:
    resolved = date(2025, 2, 1) + timedelta(days=rng.randint(0, 320)) if rng.random() < 0.35 \
        else date(2026, 1, 5) + timedelta(days=rng.randint(0, 170))
    policy = "v6" if resolved.year == 2025 else "v7"
    vendor = rng.choice([v for v in vendors if v["vendor_id"] in dups] if category == "duplicate" else vendors)
    po_id, inv_id, q_id = f"PO-{8100 + i}", f"INV-{55100 + i}", f"EXQ-{3100 + i}"
    when = resolved - timedelta(days=rng.randint(1, 6))
    lines = _po(rng, out, po_id, vendor, when)
    target = rng.choice(lines)
    overrides, facts = {}, CaseFacts(category, policy, target["line_no"])
    if category.startswith("pv_"):
        price = _variance_price(rng, target["unit_price"], BANDS[policy][category])
        overrides[target["line_no"]] = {"unit_price": price}
        facts.variance = price - target["unit_price"]
    if category == "qty_mismatch":
        overrides[target["line_no"]] = {"qty": target["qty"] + rng.randint(1, 5)}
    for ln in lines:
        if category == "missing_receipt" and ln is target:
            continue
        out.add("goods_receipts", {"receipt_id": f"GR-{po_id[3:]}-{ln['line_no']}", "po_id": po_id,
                                   "line_no": ln["line_no"], "qty_received": ln["qty"],
                                   "received_date": when.isoformat()})
    vno = f"{vendor['vendor_id'][2:]}-{rng.randint(1000, 9999)}"
    billed_as = dups[vendor["vendor_id"]] if category == "duplicate" else vendor
    _invoice(out, inv_id, billed_as, po_id, vno, when, lines, "blocked", overrides)
    if category == "duplicate":  # the same bill, already paid under the original vendor record
        _invoice(out, f"INV-{45100 + i}", vendor, po_id, vno, when - timedelta(days=9), lines, "paid")
    etype = {"qty_mismatch": "quantity_mismatch", "missing_receipt": "missing_receipt",
             "duplicate": "duplicate_invoice"}.get(category, "price_variance")
    note = rng.choice([None, f"Called {vendor['contact_name']} about this, no answer yet.",
                       f"{vendor['contact_name']} says the price was agreed by phone."])
    out.add("exception_queue", {"queue_item_id": q_id, "invoice_id": inv_id, "exception_type": etype,
                                "description":
                                    f"{inv_id} blocked: {etype.replace('_', ' ')} on line {target['line_no']}",
                                "note": note, "status": "open", "opened_at": when.isoformat()})
    out.add("resolved_cases", _resolution(rng, f"CASE-{9100 + i}", q_id, inv_id, billed_as, facts, resolved, po_id))


def _resolution(rng, case_id, q_id, inv_id, vendor, facts: CaseFacts, resolved: date, po_id: str) -> dict:
    """What staff did and what the approval log shows: the verified outcome of the case."""
    reads = [{"tool": "get_invoice", "arguments": {"invoice_id": inv_id}},
             {"tool": "get_purchase_order", "arguments": {"po_id": po_id}}]
    c = facts.category
    reason = {"pv_hold": "price_variance", "pv_escalate": "price_variance", "qty_mismatch": "quantity_mismatch",
              "missing_receipt": "missing_receipt", "duplicate": "duplicate_invoice"}.get(c)
    approver = {"pv_hold": "buyer", "pv_escalate": "ap_manager", "missing_receipt": "receiving"}.get(c)
    actions = list(reads)
    if c == "pv_release":
        actions.append({"tool": "release_invoice", "arguments": {"invoice_id": inv_id}})
    else:
        actions.append({"tool": "hold_invoice", "arguments": {"invoice_id": inv_id, "reason": reason}})
    if approver:
        actions.append({"tool": "route_for_approval", "arguments": {"invoice_id": inv_id, "approver_role": approver,
                                                                    "reason": f"{reason} on line {facts.line_no}"}})
    if c == "qty_mismatch":
        actions.append({"tool": "message_vendor", "arguments": {
            "vendor_id": vendor["vendor_id"], "invoice_id": inv_id, "subject": f"Credit note request for {inv_id}",
            "body": f"Invoiced quantity on line {facts.line_no} exceeds the quantity received. "
                    "Please issue a credit note."}})
    decision = "released" if c == "pv_release" else f"held for {reason.replace('_', ' ')}"
    variance = f"; variance {facts.variance} {vendor['currency']} per unit" if facts.variance else ""
    note = f"{inv_id} {decision}{variance}."
    return {"case_id": case_id, "queue_item_id": q_id, "invoice_id": inv_id, "resolved_on": resolved.isoformat(),
            "resolution_actions": json.dumps(actions), "closing_note": note,
            "outcome_status": "released" if c == "pv_release" else "on_hold", "outcome_hold_reason": reason,
            "outcome_approver_role": approver, "outcome_vendor_messaged": c == "qty_mismatch",
            "verified_by": None if rng.random() < 0.1 else "approval log and posted invoice"}


def write_csv(out_dir: str, seed: int = 7, n_cases: int = 56) -> dict[str, int]:
    """Write the export as one CSV per table, the way a supplier delivers it."""
    import csv
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, rows in generate(seed=seed, n_cases=n_cases).items():
        with open(out / f"{name}.csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in rows)
        counts[name] = len(rows)
    return counts


if __name__ == "__main__":
    import sys

    print(write_csv(sys.argv[1] if len(sys.argv) > 1 else "suites/ap_exceptions/source"))
