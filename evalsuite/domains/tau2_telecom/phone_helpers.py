"""The phone-side helpers (TOOLS_SPEC.md §10): what tasks' set-up does to the phone and its surroundings, and the
assertions tau2 grades the phone with (each also a domain check). No participant can call them.

`break_vpn` connects a VPN with fresh default details and makes *those* poor:
unlike tau2, whose details object is shared process-wide (§15), nothing leaks
into a later `connect_vpn` (see the package docstring).
"""
from __future__ import annotations

import sqlite3

from evalsuite.domains.tau2_telecom import phone as rules
from evalsuite.domains.tau2_telecom.assertions import assertion
from evalsuite.domains.tau2_telecom.phone import Phone, editing, search
from evalsuite.domains.tau2_telecom.schema import APN_COLUMN, PERMISSIONS
from evalsuite.domains.tau2_telecom.user_tools import USER_DOMAIN
from evalsuite.worlds.domain import ToolContext, ToolError

OWNER = "TelecomUserTools"
_assertion = assertion(USER_DOMAIN, OWNER)
_LOCKS = {"pin": "locked_pin", "puk": "locked_puk"}


def _helper(fn):
    fn.__qualname__ = f"{OWNER}.{fn.__name__}"
    return USER_DOMAIN.helper(fn)


@_helper
def set_user_info(ctx: ToolContext, /, name, phone_number):
    """Who holds the phone: their name and phone number (the link step then follows that number's line)."""
    with editing(ctx) as ph:
        ph.s.update(name=name, phone_number=phone_number)


@_helper
def set_user_location(ctx: ToolContext, /, abroad):
    """Whether the user is abroad."""
    with editing(ctx) as ph:
        ph.s["is_abroad"] = abroad


def _switch(name: str, column: str, on: bool, searches: bool):
    """A helper putting a phone switch in state `on`, then searching where the switch is one that does, even when
    it already was (observed: `turn_roaming_off` on a phone whose roaming is off still refreshes the stale start
    signal, as Appendix A's hashes show). Airplane mode is set with its §9.7 side effects (and search)."""

    def helper(ctx: ToolContext, /):
        with editing(ctx) as ph:
            if column == "airplane_mode":
                rules.set_airplane(ph, on)
                return
            ph.p[column] = on
            if searches:
                search(ph)

    helper.__name__ = name
    helper.__doc__ = f"{column} {'on' if on else 'off'}{' (then a search)' if searches else ''}."
    return _helper(helper)


for _name, _column, _on, _searches in (
        ("turn_airplane_mode_on", "airplane_mode", True, True),
        ("turn_airplane_mode_off", "airplane_mode", False, True),
        ("turn_data_off", "data_enabled", False, True), ("turn_data_on", "data_enabled", True, False),
        ("turn_roaming_on", "roaming_enabled", True, True), ("turn_roaming_off", "roaming_enabled", False, True),
        ("turn_data_saver_mode_on", "data_saver_mode", True, False),
        ("turn_data_saver_mode_off", "data_saver_mode", False, False)):
    _switch(_name, _column, _on, _searches)


@_helper
def unseat_sim_card(ctx: ToolContext, /):
    """The SIM card comes loose (then a search)."""
    with editing(ctx) as ph:
        ph.p["sim_card_missing"] = True
        search(ph)


@_helper
def lock_sim_card(ctx: ToolContext, /, mode):
    """Lock the SIM with a PIN ('pin') or PUK ('puk') code (then a search); nothing unlocks it."""
    if mode not in _LOCKS:
        raise ToolError(f"lock_sim_card: mode must be 'pin' or 'puk', got {mode!r}")
    with editing(ctx) as ph:
        ph.p["sim_card_status"] = _LOCKS[mode]
        search(ph)


@_helper
def break_apn_settings(ctx: ToolContext, /):
    """The APN name becomes 'broken' (then a search)."""
    with editing(ctx) as ph:
        ph.require_apn("apn_name")
        ph.p[APN_COLUMN["apn_name"]] = "broken"
        search(ph)


@_helper
def break_apn_mms_setting(ctx: ToolContext, /):
    """The APN loses its MMS server URL (no search)."""
    with editing(ctx) as ph:
        ph.require_apn("mmsc_url")
        ph.p[APN_COLUMN["mmsc_url"]] = None


@_helper
def break_vpn(ctx: ToolContext, /):
    """Connect a VPN whose server performs poorly."""
    with editing(ctx) as ph:
        rules.connect_vpn(ph)
        if ph.p["vpn_server_performance"] is not None:
            ph.p["vpn_server_performance"] = "poor"


@_helper
def set_wifi_calling(ctx: ToolContext, /, enabled, mms_over_wifi=None):
    """Set Wi-Fi calling, and MMS over Wi-Fi when given."""
    with editing(ctx) as ph:
        ph.p["wifi_calling_enabled"] = enabled
        if mms_over_wifi is not None:
            ph.p["wifi_calling_mms_over_wifi"] = mms_over_wifi


@_helper
def remove_app_permission(ctx: ToolContext, /, app_name, permission):
    """Take a permission from an installed app."""
    with editing(ctx) as ph:
        app = rules.app_lookup(ph, app_name)
        if app is None or permission not in PERMISSIONS:
            raise ToolError(f"remove_app_permission: no app {app_name!r} with permission {permission!r}")
        app[permission] = False


@_helper
def simulate_network_search(ctx: ToolContext, /):
    """A network search (§9.1)."""
    with editing(ctx) as ph:
        search(ph)


# ---- assertions (also domain checks) -------------------------------------------------------------

@_assertion
def assert_service_status(db: sqlite3.Connection, /, expected_status) -> bool:
    """The stored connection status is `expected_status` ('connected', 'no_service', …)."""
    return Phone.load(db).p["network_connection_status"] == expected_status


@_assertion
def assert_mobile_data_status(db: sqlite3.Connection, /, expected_status) -> bool:
    """Mobile data works (§9.3) iff `expected_status`."""
    return rules.data_working(Phone.load(db)) == expected_status


@_assertion
def assert_internet_speed(db: sqlite3.Connection, /, expected_speed, expected_desc=None) -> bool:
    """The speed test gives at least `expected_speed` Mbps (0 without connection) and, when given, the description
    `expected_desc` (any case)."""
    mbps, desc, _ = rules.speed(Phone.load(db))
    return (mbps or 0) >= expected_speed and (expected_desc is None or desc.lower() == expected_desc.lower())


@_assertion
def assert_can_send_mms(db: sqlite3.Connection, /, expected_status) -> bool:
    """The messaging app can send MMS (§9.5) iff `expected_status`."""
    return rules.can_send_mms(Phone.load(db)) == expected_status


def _stored(table: str, column: str):
    def compare(db: sqlite3.Connection, /, expected_status) -> bool:
        ph = Phone.load(db)
        return bool((ph.p if table == "phone" else ph.s)[column]) == expected_status

    return compare


def _named(name: str, fn, doc: str):
    fn.__name__, fn.__doc__ = name, doc
    return _assertion(fn)


# Generation-only assertions (§10): a stored flag compared with `expected_status`.
for _name, _table, _column in (("assert_airplane_mode_status", "phone", "airplane_mode"),
                               ("assert_mobile_roaming_status", "phone", "roaming_enabled"),
                               ("assert_mobile_data_saver_mode_status", "phone", "data_saver_mode"),
                               ("assert_mobile_data_usage_exceeded", "surroundings", "mobile_data_usage_exceeded")):
    _named(_name, _stored(_table, _column), f"The stored {_column} is `expected_status`.")


@_assertion
def assert_internet_not_excellent(db: sqlite3.Connection, /) -> bool:
    """The speed test's description is not Excellent."""
    return rules.speed(Phone.load(db))[1] != "Excellent"
