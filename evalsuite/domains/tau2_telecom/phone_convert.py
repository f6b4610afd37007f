"""tau2's user DB (user_db.toml, parsed: the phone and its surroundings) <-> rows of the user-side tables.

`user_from_nested` validates the phone as tau2 loads it (unknown fields refused,
enums checked, the defaults of TOOLS_SPEC.md §3 for what user_db.toml leaves
out: no Wi-Fi network, no VPN details, the APN record's optional fields, the
whole surroundings). `user_to_nested` rebuilds tau2's model form (every field
present), the form the user DB hash dumps.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evalsuite.domains.tau2 import rows as tau2_rows
from evalsuite.domains.tau2.rows import Row, by_position
from evalsuite.domains.tau2_telecom.schema import (
    APN_COLUMN,
    APN_FIELDS,
    PERMISSIONS,
    PHONE_BOOLS,
    PHONE_FIELDS,
    SURROUNDINGS_BOOLS,
    USER_COLUMNS,
    VPN_FIELDS,
)

SIGNALS = ("none", "poor", "fair", "good", "excellent")
TECHNOLOGIES = ("none", "2G", "3G", "4G", "5G")
MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
PERFORMANCES = ("unknown", "poor", "fair", "good", "excellent")
PHONE_ENUMS = {"sim_card_status": ("active", "missing", "locked_pin", "locked_puk"),
               "network_signal_strength": SIGNALS, "network_technology_connected": TECHNOLOGIES,
               "network_connection_status": ("connected", "searching", "no_service", "emergency_only"),
               "network_mode_preference": MODES, "wifi_signal_strength": SIGNALS}
DEFAULT_APN = {"apn_name": "internet", "reset_at_reboot": False, "mms_apn": "mms",
               "mmsc_url": "http://mms.carrier.com/mms/wapenc", "mms_proxy": None, "mms_port": None}
DEFAULT_SIGNALS = {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}
DEFAULT_SURROUNDINGS = {"name": None, "phone_number": None, "is_abroad": False, "roaming_allowed": False,
                        "signal_strength": DEFAULT_SIGNALS, "mobile_data_usage_exceeded": False, "line_active": True,
                        "payment_request": None}
PHONE_DEFAULTS = {"wifi_ssid": None, "vpn_details": None}


# ---- rows -> records ----------------------------------------------------------------------------

def apn_record(p: Mapping[str, Any]) -> Any:
    """The active APN as tau2 holds it: the record, or the raw value set_apn_settings stored (§15)."""
    if p["apn_raw"] is not None:
        return json.loads(p["apn_raw"])
    return {f: bool(p[c]) if f == "reset_at_reboot" else p[c] for f, c in APN_COLUMN.items()}


def vpn_record(p: Mapping[str, Any]) -> dict[str, Any] | None:
    if p["vpn_server_performance"] is None:
        return None
    return {f: p[f"vpn_{f}"] for f in VPN_FIELDS}


def app_record(a: Mapping[str, Any]) -> dict[str, Any]:
    return {"app_name": a["app_name"], "permissions": {p: bool(a[p]) for p in PERMISSIONS}}


def device_record(p: Mapping[str, Any], apps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The phone in tau2's model form, from its row and its apps' rows (position order)."""
    nested = {"active_apn_settings": apn_record(p), "vpn_details": vpn_record(p),
              "app_statuses": {a["app_key"]: app_record(a) for a in apps}}
    return {f: nested[f] if f in nested else bool(p[f]) if f in PHONE_BOOLS else p[f] for f in PHONE_FIELDS}


def request_record(s: Mapping[str, Any]) -> dict[str, Any] | None:
    if s["request_bill_id"] is None:
        return None
    return {"bill_id": s["request_bill_id"], "amount_due": s["request_amount_due"], "paid": bool(s["request_paid"])}


def surroundings_record(s: Mapping[str, Any], signals: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    nested = {"signal_strength": {x["technology"]: x["signal"] for x in signals},
              "payment_request": request_record(s)}
    return {f: nested[f] if f in nested else bool(s[f]) if f in SURROUNDINGS_BOOLS else s[f]
            for f in DEFAULT_SURROUNDINGS}


def user_to_nested(rows: Mapping[str, Sequence[Sequence[Any]]]) -> dict[str, Any]:
    """The user DB in tau2's model form from every user-side table's rows."""
    r = {t: tau2_rows.as_dicts(USER_COLUMNS[t], rows[t]) for t in USER_COLUMNS}
    return {"device": device_record(r["phone"][0], by_position(r["apps"])),
            "surroundings": surroundings_record(r["surroundings"][0], by_position(r["signal_strengths"]))}


# ---- nested -> rows -----------------------------------------------------------------------------

def user_from_nested(db: Mapping[str, Any]) -> dict[str, list[Row]]:
    """Rows of every user-side table from the parsed user_db.toml (`surroundings` may be absent: all defaults)."""
    unknown = sorted(set(db) - {"device", "surroundings"})
    if unknown or "device" not in db:
        raise ValueError(f"user DB: top-level keys must be device and (optionally) surroundings, got {list(db)}")
    device = _phone_values(db["device"])
    sur = _surroundings_values(db.get("surroundings", {}))
    phone = {"id": 1, **{f: device[f] for f in PHONE_FIELDS if f not in
                         ("active_apn_settings", "vpn_details", "app_statuses")},
             **{c: device["active_apn_settings"][f] for f, c in APN_COLUMN.items()}, "apn_raw": None,
             **{f"vpn_{f}": (device["vpn_details"] or {}).get(f) for f in VPN_FIELDS}}
    request = sur["payment_request"] or {}
    return {
        "phone": [phone],
        "apps": [{"app_key": key, "position": i, "app_name": a["app_name"], **a["permissions"]}
                 for i, (key, a) in enumerate(device["app_statuses"].items())],
        "surroundings": [{"id": 1, **{f: sur[f] for f in DEFAULT_SURROUNDINGS
                                      if f not in ("signal_strength", "payment_request")},
                          **{f"request_{f}": request.get(f) for f in ("bill_id", "amount_due", "paid")}}],
        "signal_strengths": [{"technology": t, "position": i, "signal": s}
                             for i, (t, s) in enumerate(sur["signal_strength"].items())],
    }


def _phone_values(device: Any) -> dict[str, Any]:
    where = "device"
    _fields(device, PHONE_FIELDS, where)
    out = {**PHONE_DEFAULTS, **device}
    missing = sorted(set(PHONE_FIELDS) - set(out))
    if missing:
        raise ValueError(f"{where}: field(s) {missing} required")
    for f in PHONE_BOOLS:
        _check(isinstance(out[f], bool), f"{where}.{f}", out[f])
    for f, allowed in PHONE_ENUMS.items():
        _check(out[f] in allowed, f"{where}.{f}", out[f])
    _check(type(out["battery_level"]) is int, f"{where}.battery_level", out["battery_level"])
    _check(out["wifi_ssid"] is None or isinstance(out["wifi_ssid"], str), f"{where}.wifi_ssid", out["wifi_ssid"])
    out["active_apn_settings"] = {**DEFAULT_APN, **_fields(out["active_apn_settings"], APN_FIELDS,
                                                           f"{where}.active_apn_settings")}
    _check(out["active_apn_settings"]["apn_name"] in ("internet", "broken"), f"{where}.active_apn_settings.apn_name",
           out["active_apn_settings"]["apn_name"])
    if out["vpn_details"] is not None:
        vpn = {"server_address": None, "protocol": None, "server_performance": "unknown",
               **_fields(out["vpn_details"], VPN_FIELDS, f"{where}.vpn_details")}
        _check(vpn["server_performance"] in PERFORMANCES, f"{where}.vpn_details.server_performance", vpn)
        out["vpn_details"] = vpn
    apps = {}
    for key, app in _fields(out["app_statuses"], (), f"{where}.app_statuses", any_keys=True).items():
        _fields(app, ("app_name", "permissions"), f"{where}.app_statuses.{key}")
        perms = {**dict.fromkeys(PERMISSIONS, False),
                 **_fields(app.get("permissions", {}), PERMISSIONS, f"{where}.app_statuses.{key}")}
        _check(all(isinstance(v, bool) for v in perms.values()) and isinstance(app.get("app_name"), str),
               f"{where}.app_statuses.{key}", app)
        apps[key] = {"app_name": app["app_name"], "permissions": {p: perms[p] for p in PERMISSIONS}}
    out["app_statuses"] = apps
    return out


def _surroundings_values(sur: Any) -> dict[str, Any]:
    where = "surroundings"
    out = {**DEFAULT_SURROUNDINGS, **_fields(sur, tuple(DEFAULT_SURROUNDINGS), where)}
    for f in SURROUNDINGS_BOOLS:
        _check(isinstance(out[f], bool), f"{where}.{f}", out[f])
    signals = _fields(out["signal_strength"], (), f"{where}.signal_strength", any_keys=True)
    _check(all(t in TECHNOLOGIES and s in SIGNALS for t, s in signals.items()), f"{where}.signal_strength", signals)
    if out["payment_request"] is not None:
        request = {"paid": False, **_fields(out["payment_request"], ("bill_id", "amount_due", "paid"),
                                            f"{where}.payment_request")}
        _check(isinstance(request.get("bill_id"), str) and isinstance(request.get("amount_due"), (int, float)),
               f"{where}.payment_request", request)
        out["payment_request"] = {**request, "amount_due": float(request["amount_due"])}
    return out


def _fields(value: Any, allowed: Sequence[str], where: str, any_keys: bool = False) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: must be a table, got {type(value).__name__}")
    unknown = sorted(set(value) - set(allowed))
    if unknown and not any_keys:
        raise ValueError(f"{where}: unknown field(s) {unknown}")
    return dict(value)


def _check(ok: bool, where: str, value: Any) -> None:
    if not ok:
        raise ValueError(f"{where}: invalid value {value!r}")
