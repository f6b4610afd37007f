"""The phone's state and the rules of dual control (TOOLS_SPEC.md §9): network search, whether mobile data works,
the speed test, MMS capability, the status bar and the airplane-mode switch.

A tool loads the phone (`Phone.load`: its row, apps, surroundings and signal map
from a SQLite connection), applies the rules to the loaded rows in memory and
saves back only the cells it changed (`editing`). Stored status, technology and
signal change only in a network search; everything else is derived on demand.

The one state tau2 can hold that is no record at all: an APN value
`set_apn_settings` stored raw (§15). Reading one of its fields then fails as
Python fails on it (`'str' object has no attribute 'apn_name'`); a write tool
that fails so keeps what it changed before (PartialWriteError), as tau2 does.
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from evalsuite.domains.tau2.rows import as_dicts
from evalsuite.domains.tau2_telecom.schema import APN_COLUMN, USER_COLUMNS, user_select_sql
from evalsuite.worlds.domain import PartialWriteError, ToolContext, ToolError

SIGNAL_FACTOR = {"none": 0.0, "poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0}
SPEED_RANGE = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
SPEED_ADVICE = (  # (below, description, advice)
    (1, "Very Poor", "Connection is very slow. Basic web browsing might be difficult."),
    (5, "Poor", "Connection is slow. Web browsing may be sluggish, streaming difficult."),
    (25, "Fair", "Connection is okay for web browsing and some standard definition streaming."),
    (100, "Good", "Connection is good for most activities, including HD streaming."),
    (float("inf"), "Excellent", "Connection is very fast."),
)
PREFERRED = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}
BARS = {"none": "📵 No Signal", "poor": "📶¹ Poor", "fair": "📶² Fair", "good": "📶³ Good",
        "excellent": "📶⁴ Excellent"}
DEFAULT_VPN = {"vpn_server_address": "192.168.1.1", "vpn_protocol": "OpenVPN", "vpn_server_performance": "excellent"}
NO_VPN = dict.fromkeys(DEFAULT_VPN)
_SQL = {"phone": user_select_sql("phone"), "apps": user_select_sql("apps", order="position"),
        "surroundings": user_select_sql("surroundings"),
        "signals": user_select_sql("signal_strengths", order="position")}


class RawApnError(Exception):
    """A field read of an APN that is a raw value, not a record: Python's AttributeError text."""


@dataclass
class Phone:
    """The phone row (`p`), its apps by name (map order), the surroundings row (`s`) and signal map, as loaded;
    `saved` keeps the loaded cells so `save` writes only what changed."""

    p: dict[str, Any]
    apps: dict[str, dict[str, Any]]
    s: dict[str, Any]
    signals: dict[str, str]
    saved: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, db: sqlite3.Connection) -> Phone:
        rows = {k: as_dicts(USER_COLUMNS[t], db.execute(_SQL[k]).fetchall())
                for k, t in (("phone", "phone"), ("apps", "apps"), ("surroundings", "surroundings"),
                             ("signals", "signal_strengths"))}
        phone = cls(p=rows["phone"][0], apps={a["app_key"]: a for a in rows["apps"]}, s=rows["surroundings"][0],
                    signals={x["technology"]: x["signal"] for x in rows["signals"]})
        phone.saved = phone.snapshot()
        return phone

    def snapshot(self) -> dict[str, Any]:
        return {"phone": dict(self.p), "surroundings": dict(self.s), **{f"app:{k}": dict(a) for k, a in
                                                                       self.apps.items()}}

    def save(self, ctx: ToolContext) -> None:
        """Write every changed cell (one UPDATE per changed row)."""
        for name, row in self.snapshot().items():
            before = self.saved[name]
            changed = [c for c in row if row[c] != before[c]]
            if not changed:
                continue
            table, where, key = (("apps", "app_key", name[4:]) if name.startswith("app:")
                                 else (name, "id", row["id"]))
            ctx.run(f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in changed)} WHERE {where} = ?",
                    [*[row[c] for c in changed], key])
        self.saved = self.snapshot()

    # ---- the active APN --------------------------------------------------------------------------

    def apn(self, attribute: str) -> Any:
        """A field of the active APN record."""
        self.require_apn(attribute)
        return self.p[APN_COLUMN[attribute]]

    def require_apn(self, attribute: str) -> None:
        """The failure of using `attribute` of the active APN when it is a raw value, not a record."""
        raw = self.p["apn_raw"]
        if raw is not None:
            raise RawApnError(f"'{type(json.loads(raw)).__name__}' object has no attribute '{attribute}'")

    def set_apn(self, record: dict[str, Any] | None, raw: Any = None) -> None:
        """Replace the active APN by a record (DEFAULT_APN's fields), or by a raw non-record value."""
        self.p.update({c: None if record is None else record[f] for f, c in APN_COLUMN.items()})
        self.p["apn_raw"] = None if record is not None else json.dumps(raw)


@contextmanager
def editing(ctx: ToolContext) -> Iterator[Phone]:
    """The phone for one call: changes saved when it returns; a raw-APN failure keeps what was changed before it
    and is reported as the error (PartialWriteError), as the original keeps a half-done call's writes."""
    phone = Phone.load(ctx.db)
    try:
        yield phone
    except RawApnError as exc:
        phone.save(ctx)
        raise PartialWriteError(str(exc)) from exc
    phone.save(ctx)


# ---- derived status ------------------------------------------------------------------------------

def effective_sim(ph: Phone) -> str:
    return "missing" if ph.p["sim_card_missing"] else ph.p["sim_card_status"]


def search(ph: Phone) -> None:
    """§9.1: recompute connection status, technology and signal."""
    if effective_sim(ph) == "active":
        status = "connected"
        mode = ph.p["network_mode_preference"]
        tech = PREFERRED.get(mode, "4G")
        if mode == "4g_5g_preferred":
            tech = "5G" if ph.signals.get("5G", "none") != "none" else "4G"
        signal = ph.signals.get(tech, "none")
    else:
        status, tech, signal = "no_service", "none", "none"
    if ph.p["airplane_mode"] or ph.apn("apn_name") == "broken" or not ph.s["line_active"]:
        status, tech, signal = "no_service", "none", "none"
    ph.p.update(network_connection_status=status, network_technology_connected=tech, network_signal_strength=signal)


def data_working(ph: Phone) -> bool:
    """§9.3."""
    p, s = ph.p, ph.s
    return not (p["airplane_mode"] or p["network_signal_strength"] == "none"
                or p["network_connection_status"] == "no_service"
                or s["is_abroad"] and (not p["roaming_enabled"] or not s["roaming_allowed"])
                or not p["data_enabled"] or s["mobile_data_usage_exceeded"])


def speed(ph: Phone) -> tuple[float | None, str, str]:
    """§9.4: (Mbps or None, description, advice)."""
    if not data_working(ph):
        return None, "No Connection", ""
    p = ph.p
    factor = 0.1 if p["vpn_connected"] and p["vpn_server_performance"] == "poor" else 1.0
    if p["data_saver_mode"]:
        factor *= 0.2
    low, high = SPEED_RANGE.get(p["network_technology_connected"], (0.0, 0.0))
    mbps = round((low + high) / 2 * SIGNAL_FACTOR[p["network_signal_strength"]] * factor, 2)
    _, desc, advice = next(x for x in SPEED_ADVICE if mbps < x[0])
    return mbps, desc, advice


def can_send_mms(ph: Phone) -> bool:
    """§9.5, its conditions in the listed order (the first that fails decides)."""
    p = ph.p
    if not data_working(ph) or p["network_technology_connected"] == "2G":
        return False
    if p["wifi_calling_enabled"] and p["wifi_calling_mms_over_wifi"]:
        return False
    if ph.apn("mmsc_url") is None:
        return False
    app = ph.apps.get("messaging")
    return app is not None and bool(app["sms"]) and bool(app["storage"])


def status_bar(ph: Phone) -> str:
    """§9.6."""
    p = ph.p
    tech = p["network_technology_connected"]
    if p["airplane_mode"]:
        parts = ["✈️ Airplane Mode"]
    else:
        parts = [BARS[p["network_signal_strength"]]] + ([tech] if tech != "none" else [])
        if p["data_enabled"] and tech != "none":
            parts += ["📱 Data Enabled"] + (["🔽 Data Saver"] if p["data_saver_mode"] else [])
        else:
            parts.append("📵 Data Disabled")
    if p["wifi_enabled"] and p["wifi_connected"]:
        parts.append(f"📡 Connected to {p['wifi_ssid']}" if p["wifi_ssid"] else "📡 Enabled")
    if p["vpn_connected"]:
        parts.append("🔒 VPN Connected")
    parts.append(f"🔋 {p['battery_level']}%")
    return " | ".join(parts)


def with_bar(ph: Phone, message: str) -> str:
    return f"{message}\nStatus Bar: {status_bar(ph)}"


# ---- shared effects ------------------------------------------------------------------------------

def clear_wifi_connection(ph: Phone) -> None:
    ph.p.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")


def disconnect_vpn(ph: Phone) -> None:
    ph.p.update(vpn_connected=False, **NO_VPN)


def set_airplane(ph: Phone, on: bool) -> None:
    """§9.7: the switch with its side effects, then a search."""
    ph.p["airplane_mode"] = on
    if on:
        clear_wifi_connection(ph)
        if ph.p["vpn_connected"]:
            disconnect_vpn(ph)
    else:
        ph.p["network_connection_status"] = "searching"
        if ph.p["wifi_enabled"]:
            clear_wifi_connection(ph)
    search(ph)


def connect_vpn(ph: Phone) -> bool:
    """Connect with fresh default details (excellent: see the package docstring); False if already connected."""
    if ph.p["vpn_connected"]:
        return False
    ph.p.update(vpn_connected=True, **DEFAULT_VPN)
    return True


def app_lookup(ph: Phone, app_name: Any) -> dict[str, Any] | None:
    """An installed app by name, as a dict lookup finds it (an unhashable name is Python's TypeError)."""
    if isinstance(app_name, (list, dict)):
        raise ToolError(f"unhashable type: '{type(app_name).__name__}'")
    return ph.apps.get(app_name) if isinstance(app_name, str) else None
