"""The authored support rows of the retail-support seed (synthetic; after the support case of the
environment-design guide, the shared reference on choosing and checking business environments).

Each case sits on a real τ²-bench retail order line (user, order and item ids as tau2 ships them); everything in
this module is an authored addition: purchases with revision and exact price, replacements, shipments, carrier
events, contacts, cases, authorizations, consents and the three support policy versions. `write_csv` writes them
as the suite's source exports; `tables` builds a world's rows from them plus tau2's Parquet exports.
"""
from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalsuite.domains.retail_support.schema import AUTHORED, INHERITED, metadata

# (case, user, email, order, item, exact amount, scenario): the τ²-bench order line each case is about
CASES = [
    ("C-1001", "ava_moore_2033", "ava.moore6020@example.com",
     "#W4817420", "6777246137", "47.76", "lost_refund"),
    ("C-1002", "amelia_wilson_4614", "amelia.wilson1598@example.com",
     "#W9077205", "9370300555", "45.90", "switch"),
    ("C-1003", "mei_gonzalez_4785", "mei.gonzalez8775@example.com",
     "#W7303089", "7381052709", "193.22", "lost_response"),
    ("C-1004", "daiki_moore_8567", "daiki.moore7228@example.com",
     "#W8032761", "8030558068", "186.78", "withdrawn"),
    ("C-1005", "evelyn_gonzalez_8876", "evelyn.gonzalez2110@example.com",
     "#W8341134", "7579176349", "29.28", "no_discretion"),
    ("C-1006", "aarav_nguyen_7344", "aarav.nguyen1293@example.com",
     "#W7728728", "8555936349", "226.49", "missing_proof"),
    ("C-1007", "evelyn_brown_7612", "evelyn.brown5837@example.com",
     "#W7647404", "9612497925", "50.88", "unknown_status"),
    ("C-1008", "aarav_sanchez_9729", "aarav.sanchez1292@example.com",
     "#W5455653", "1323134954", "236.95", "policy_unavailable"),
    ("C-1009", "omar_khan_2363", "omar.khan3563@example.com",
     "#W6304490", "6956751343", "217.06", "revised_purchase"),
]
# The customer changed the purchase after the exception was granted: the line is at revision 2, at this price.
REVISED = {"revised_purchase": (2, "229.99")}
POLICY_OF = {"no_discretion": "v2", "policy_unavailable": "v3"}  # every other case falls under v1
LOST = {"lost_refund", "switch", "lost_response", "withdrawn", "no_discretion", "policy_unavailable",
        "revised_purchase"}
# The cases where a manager granted the exception.
GRANTED = {"lost_refund", "switch", "lost_response", "withdrawn", "missing_proof", "revised_purchase"}


def ids(case: str) -> dict[str, str]:
    n = case.split("-")[1]
    return {"purchase": f"PU-{n}", "replacement": f"RP-{n}", "shipment": f"SH-{n}", "authorization": f"AU-{n}",
            "consent": f"CO-{n}", "consent_new": f"CO-{n}B", "contact": f"CT-{n}"}


def authored_rows() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in sorted(AUTHORED)}
    out["support_policies"] = [
        {"version": "v1", "status": "in_effect", "manager_discretion": 1,
         "text": "A support manager may authorize a full refund of the original purchase when the carrier confirmed "
                 "the replacement lost; the authorization names the purchase revision and the remedy."},
        {"version": "v2", "status": "in_effect", "manager_discretion": 0,
         "text": "Manager discretion removed: a lost replacement is handed off to human review with its evidence."},
        {"version": "v3", "status": "unavailable", "manager_discretion": None, "text": None},
    ]
    for case, user, _email, order, item, amount, kind in CASES:
        _case_rows(out, case, user, order, item, amount, kind)
    return out


def _case_rows(out: dict, case: str, user: str, order: str, item: str, amount: str, kind: str) -> None:
    i = ids(case)
    revision, now_amount = REVISED.get(kind, (1, amount))
    out["purchases"].append({"purchase_id": i["purchase"], "order_id": order, "item_id": item, "revision": revision,
                             "amount": now_amount, "currency": "USD"})
    out["replacements"].append({"replacement_id": i["replacement"], "purchase_id": i["purchase"],
                                "shipment_id": i["shipment"], "requested_at": "2026-06-10T10:00:00"})
    status = {"missing_proof": "in_transit", "unknown_status": "unknown"}.get(kind, "lost")
    out["shipments"].append({"shipment_id": i["shipment"], "carrier": "UPS", "tracking_id": f"1Z{case[2:]}99",
                             "status": status})
    events = [("2026-06-11T08:00:00", "picked_up", "label scanned"), ("2026-06-12T17:00:00", "in_transit", "hub")]
    if kind in LOST:
        events.append(("2026-06-20T12:00:00", "lost_confirmed", "carrier confirms the parcel is lost"))
    elif kind == "missing_proof":
        events.append(("2026-06-27T12:00:00", "delayed", "weather delay; no loss claim filed"))
    for seq, (at, code, detail) in enumerate(events, 1):
        out["carrier_events"].append({"shipment_id": i["shipment"], "seq": seq, "at": at, "code": code,
                                      "detail": detail})
    out["cases"].append({"case_id": case, "user_id": user, "purchase_id": i["purchase"],
                         "policy_version": POLICY_OF.get(kind, "v1"), "requested_remedy": "refund", "status": "open",
                         "resolution": None, "updated_at": None})
    out["contacts"].append({"contact_id": i["contact"], "case_id": case, "at": "2026-06-25T09:30:00", "channel": "chat",
                            "summary": "Customer reports the replacement never arrived and asks for a full refund."})
    if kind in GRANTED:
        out["authorizations"].append({
            "authorization_id": i["authorization"], "case_id": case, "purchase_id": i["purchase"],
            "purchase_revision": 1, "remedy": "refund", "amount": amount, "currency": "USD",
            "decided_by": "support manager M-07", "status": "granted", "trusted": 1,
            "requested_at": "2026-06-25T10:00:00", "granted_at": "2026-06-26T09:00:00", "invalidated_at": None})
    withdrawn = "2026-06-29T15:00:00" if kind in ("switch", "withdrawn") else None
    out["consents"].append({"consent_id": i["consent"], "case_id": case, "purchase_id": i["purchase"],
                            "purchase_revision": 1, "remedy": "refund", "given_at": "2026-06-26T10:00:00",
                            "withdrawn_at": withdrawn, "statement": "Yes, please refund the original purchase."})
    if kind == "switch":
        out["consents"].append({"consent_id": i["consent_new"], "case_id": case, "purchase_id": i["purchase"],
                                "purchase_revision": 1, "remedy": "replacement", "given_at": "2026-06-29T15:00:00",
                                "withdrawn_at": None, "statement": "Actually send another replacement instead."})
        out["contacts"].append({"contact_id": i["contact"] + "B", "case_id": case, "at": "2026-06-29T15:00:00",
                                "channel": "phone", "summary": "Customer now wants another replacement, not a refund."})
    if kind == "revised_purchase":
        out["contacts"].append({"contact_id": i["contact"] + "B", "case_id": case, "at": "2026-06-29T15:00:00",
                                "channel": "chat", "summary": "Customer changed the purchase to another variant; "
                                                              "the order line is now at revision 2."})
    if kind == "withdrawn":
        out["contacts"].append({"contact_id": i["contact"] + "B", "case_id": case, "at": "2026-06-29T15:00:00",
                                "channel": "email", "summary": "Customer withdraws consent to the refund for now."})


def write_csv(dest: str | Path) -> list[Path]:
    """The authored tables as CSV exports (one file per table, columns in table order)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in authored_rows().items():
        cols = [c.name for c in metadata.tables[name].columns]
        path = dest / f"{name}.csv"
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows({c: ("" if r.get(c) is None else r[c]) for c in cols} for r in rows)
        written.append(path)
    return written


def tables(tau2_source: str | Path) -> Mapping[str, list[dict[str, Any]]]:
    """A world's rows: tau2's Parquet exports as they are, and the authored rows."""
    import pandas as pd

    from evalsuite.sourcing.snapshot import frame_rows  # pandas only where a world is built from files

    rows: dict[str, list[dict[str, Any]]] = {n: frame_rows(pd.read_parquet(Path(tau2_source) / f"{n}.parquet"))
                                             for n in sorted(INHERITED)}
    rows.update(authored_rows())
    return rows
