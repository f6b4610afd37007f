"""The 30 phone tools the simulated user runs (TOOLS_SPEC.md §8): 15 read, 15 write, outputs word for word.

Every write tool's output ends with the status bar (`<message>\\nStatus Bar: …`)
except `make_payment` and `connect_vpn` when already connected; several report
failures as ordinary text (no error flag), as the original does. Which tools
search the network is §9.1's list. Arguments are raw, as the agent's are: a
wrong keyword is Python's TypeError naming `TelecomUserTools.<tool>`.
"""
from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evalsuite.domains.tau2.tools import registrar
from evalsuite.domains.tau2_telecom import phone as ph_rules
from evalsuite.domains.tau2_telecom.phone import Phone, editing, search, status_bar, with_bar
from evalsuite.domains.tau2_telecom.phone_convert import DEFAULT_APN, MODES
from evalsuite.domains.tau2_telecom.schema import APN_COLUMN, CLOCK, PERMISSIONS, user_metadata
from evalsuite.worlds.domain import Domain, ToolContext, ToolError

USER_DOMAIN = Domain(name="tau2_telecom_phone", version="1.0.0", metadata=user_metadata, clock=CLOCK)
_tool = registrar(USER_DOMAIN, "TelecomUserTools")
_SIM_TEXT = {"active": "Your SIM card is active and working.", "missing": "No SIM card detected in the phone.",
             "locked_pin": "The SIM card is locked with a PIN code.",
             "locked_puk": "The SIM card is locked with a PUK code."}


def _on(flag: Any) -> str:
    return "ON" if flag else "OFF"


def _yes(flag: Any) -> str:
    return "Yes" if flag else "No"


class APNNames(str, Enum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(BaseModel):
    """The APN record set_apn_settings builds (§3): validated as tau2 validates it, so failing with its text."""

    model_config = ConfigDict(extra="forbid")
    apn_name: APNNames
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: str | None = None
    mms_port: int | None = None


# ---- status and network --------------------------------------------------------------------------

@_tool("read")
def check_status_bar(ctx: ToolContext, /):
    """What the phone's status bar shows (signal, network, data, Wi-Fi, VPN, battery)."""
    with editing(ctx) as ph:
        return f"Status Bar: {status_bar(ph)}"


@_tool("read")
def check_network_status(ctx: ToolContext, /):
    """The phone's connection details: airplane mode, SIM, cellular status, signal, network type, mobile data,
    data roaming and Wi-Fi."""
    with editing(ctx) as ph:
        p = ph.p
        lines = [f"Airplane Mode: {_on(p['airplane_mode'])}", f"SIM Card Status: {ph_rules.effective_sim(ph)}",
                 f"Cellular Connection: {p['network_connection_status']}",
                 f"Cellular Signal: {p['network_signal_strength']}",
                 f"Cellular Network Type: {p['network_technology_connected']}",
                 f"Mobile Data Enabled: {_yes(p['data_enabled'])}",
                 f"Data Roaming Enabled: {_yes(p['roaming_enabled'])}",
                 f"Wi-Fi Radio: {_on(p['wifi_enabled'])}", f"Wi-Fi Connected: {_yes(p['wifi_connected'])}"]
        if p["wifi_connected"]:
            lines.append(f"Connected Wi-Fi Network: {p['wifi_ssid']}")
        return "\n".join(lines)


@_tool("read")
def check_network_mode_preference(ctx: ToolContext, /):
    """The preferred network mode (4g_5g_preferred, 4g_only, 3g_only or 2g_only)."""
    with editing(ctx) as ph:
        return f"Network Mode Preference: {ph.p['network_mode_preference']}"


@_tool("write")
def set_network_mode_preference(ctx: ToolContext, /, mode):
    """Set the preferred network mode. Arguments: mode ('4g_5g_preferred', '4g_only', '3g_only' or '2g_only')."""
    with editing(ctx) as ph:
        if mode not in MODES:
            return with_bar(ph, f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: "
                                f"{', '.join(MODES)}")
        ph.p["network_mode_preference"] = mode
        search(ph)
        return with_bar(ph, f"Preferred Network Mode set to: {mode}")


@_tool("read")
def run_speed_test(ctx: ToolContext, /):
    """Measure the mobile internet speed."""
    with editing(ctx) as ph:
        mbps, desc, advice = ph_rules.speed(ph)
        if mbps is None:
            return f"Speed test failed: {desc}."
        return f"Speed Test Result: {mbps:.2f} Mbps ({desc}). {advice}"


@_tool("write")
def toggle_airplane_mode(ctx: ToolContext, /):
    """Switch airplane mode on or off."""
    with editing(ctx) as ph:
        ph_rules.set_airplane(ph, not ph.p["airplane_mode"])
        return with_bar(ph, f"Airplane Mode is now {_on(ph.p['airplane_mode'])}.")


# ---- SIM, data, roaming --------------------------------------------------------------------------

@_tool("read")
def check_sim_status(ctx: ToolContext, /):
    """Whether the SIM card is present, working or locked."""
    with editing(ctx) as ph:
        return _SIM_TEXT[ph_rules.effective_sim(ph)]


@_tool("write")
def reseat_sim_card(ctx: ToolContext, /):
    """Take the SIM card out and put it back in."""
    with editing(ctx) as ph:
        ph.p["sim_card_missing"] = False
        search(ph)
        return with_bar(ph, "SIM card re-seated successfully.")


def _flip(ctx: ToolContext, column: str, label: str, searches: bool) -> str:
    """Flip a phone switch, search if the switch is one that does, and say its new state."""
    with editing(ctx) as ph:
        ph.p[column] = not ph.p[column]
        if searches:
            search(ph)
        return with_bar(ph, f"{label} is now {_on(ph.p[column])}.")


@_tool("write")
def toggle_data(ctx: ToolContext, /):
    """Switch mobile data on or off."""
    return _flip(ctx, "data_enabled", "Mobile Data", searches=True)


@_tool("write")
def toggle_roaming(ctx: ToolContext, /):
    """Switch the phone's data roaming setting on or off."""
    return _flip(ctx, "roaming_enabled", "Data Roaming", searches=True)


@_tool("read")
def check_data_restriction_status(ctx: ToolContext, /):
    """Whether Data Saver mode is on."""
    with editing(ctx) as ph:
        return "Data Saver mode is ON (limits data usage)." if ph.p["data_saver_mode"] else "Data Saver mode is OFF."


@_tool("write")
def toggle_data_saver_mode(ctx: ToolContext, /):
    """Switch Data Saver mode on or off."""
    return _flip(ctx, "data_saver_mode", "Data Saver Mode", searches=False)


# ---- APN -----------------------------------------------------------------------------------------

@_tool("read")
def check_apn_settings(ctx: ToolContext, /):
    """The access point name and the MMS server URL in use."""
    with editing(ctx) as ph:
        ph.require_apn("model_copy")  # the original copies the record first: all a raw value gets to fail on
        url = ph.apn("mmsc_url")
        return (f"Current APN Name: {ph.apn('apn_name')}\nMMSC URL (for picture messages): {url or 'Not Set'}\n"
                "(These are technical settings, usually best left unchanged.)")


@_tool("write")
def set_apn_settings(ctx: ToolContext, /, apn_settings):
    """Replace the APN settings. Arguments: apn_settings (object: apn_name 'internet' or 'broken', and optionally
    reset_at_reboot, mms_apn, mmsc_url, mms_proxy, mms_port)."""
    record = None
    if isinstance(apn_settings, dict):
        try:
            record = APNSettings(**apn_settings)
        except ValidationError as exc:  # its multi-line text, as the original shows it
            raise ToolError(str(exc)) from exc
    with editing(ctx) as ph:
        if record is None:
            ph.set_apn(None, raw=apn_settings)  # stored before anything reads it (§15)
        else:
            ph.set_apn({**record.model_dump(), "apn_name": record.apn_name.value})
        search(ph)
        return with_bar(ph, f"APN settings set to: {ph.apn('apn_name')}")


@_tool("write")
def reset_apn_settings(ctx: ToolContext, /):
    """Reset the APN settings to the defaults (done at the next reboot)."""
    with editing(ctx) as ph:
        ph.require_apn("reset_at_reboot")
        ph.p[APN_COLUMN["reset_at_reboot"]] = True
        search(ph)
        return with_bar(ph, "APN settings will reset at reboot.")


# ---- Wi-Fi and VPN -------------------------------------------------------------------------------

@_tool("read")
def check_wifi_status(ctx: ToolContext, /):
    """Whether Wi-Fi is on and connected."""
    with editing(ctx) as ph:
        p = ph.p
        if not p["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if not p["wifi_connected"]:
            return "Wi-Fi is ON but not connected to any network."
        return f"Wi-Fi is ON and connected to '{p['wifi_ssid']}'. Signal strength: {p['wifi_signal_strength']}."


@_tool("write")
def toggle_wifi(ctx: ToolContext, /):
    """Switch Wi-Fi on or off."""
    with editing(ctx) as ph:
        if ph.p["airplane_mode"]:
            return with_bar(ph, "Cannot change Wi-Fi settings while Airplane Mode is ON.")
        ph.p["wifi_enabled"] = not ph.p["wifi_enabled"]
        if not ph.p["wifi_enabled"]:
            ph_rules.clear_wifi_connection(ph)
        return with_bar(ph, f"Wi-Fi is now {_on(ph.p['wifi_enabled'])}.")


@_tool("read")
def check_wifi_calling_status(ctx: ToolContext, /):
    """Whether Wi-Fi Calling is on."""
    with editing(ctx) as ph:
        return f"Wi-Fi Calling is currently turned {_on(ph.p['wifi_calling_enabled'])}."


@_tool("write")
def toggle_wifi_calling(ctx: ToolContext, /):
    """Switch Wi-Fi Calling on or off."""
    return _flip(ctx, "wifi_calling_enabled", "Wi-Fi Calling", searches=False)


@_tool("read")
def check_vpn_status(ctx: ToolContext, /):
    """Whether a VPN is connected, with its details."""
    with editing(ctx) as ph:
        p = ph.p
        if p["vpn_connected"] and p["vpn_server_performance"] is not None:
            perf = p["vpn_server_performance"]
            details = (f"{{'server_address': {p['vpn_server_address']!r}, 'protocol': {p['vpn_protocol']!r}, "
                       f"'server_performance': <PerformanceLevel.{perf.upper()}: {perf!r}>}}")
            return f"VPN is ON and connected. Details: {details}"
        if p["vpn_connected"]:
            return "VPN is ON and connected (no specific details available)."
        if p["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."


@_tool("write")
def connect_vpn(ctx: ToolContext, /):
    """Connect the VPN."""
    with editing(ctx) as ph:
        if not ph_rules.connect_vpn(ph):
            return "VPN already connected."
        return with_bar(ph, "VPN connected successfully.")


@_tool("write")
def disconnect_vpn(ctx: ToolContext, /):
    """Disconnect the VPN."""
    with editing(ctx) as ph:
        if not ph.p["vpn_connected"]:
            return with_bar(ph, "No active VPN connection to disconnect.")
        ph_rules.disconnect_vpn(ph)
        return with_bar(ph, "VPN disconnected successfully.")


# ---- apps and MMS --------------------------------------------------------------------------------

def _granted(app: dict[str, Any]) -> list[str]:
    return [p for p in PERMISSIONS if app[p]]


@_tool("read")
def check_installed_apps(ctx: ToolContext, /):
    """The apps installed on the phone."""
    with editing(ctx) as ph:
        return f"The following apps are installed on the phone: {', '.join(ph.apps)}"


@_tool("read")
def check_app_status(ctx: ToolContext, /, app_name):
    """An app's status and granted permissions. Arguments: app_name (str, e.g. 'messaging')."""
    with editing(ctx) as ph:
        app = ph_rules.app_lookup(ph, app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = _granted(app)
        lines = [f"Status for App: {app['app_name']}"]
        lines += [" - Permissions Granted:", *[f"   - {p}" for p in granted]] if granted else \
            [" - Permissions: None granted."]
        return "\n".join(lines)


@_tool("read")
def check_app_permissions(ctx: ToolContext, /, app_name):
    """The permissions an app has. Arguments: app_name (str)."""
    with editing(ctx) as ph:
        app = ph_rules.app_lookup(ph, app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = _granted(app)
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."


@_tool("write")
def grant_app_permission(ctx: ToolContext, /, app_name, permission):
    """Grant an app a permission. Arguments: app_name (str), permission ('sms', 'storage', 'phone' or 'network')."""
    with editing(ctx) as ph:
        app = ph_rules.app_lookup(ph, app_name)
        if app is None:
            return with_bar(ph, f"Error. App '{app_name}' not found. Cannot grant permission.")
        if not isinstance(permission, str):
            raise ToolError(f"'{type(permission).__name__}' object has no attribute 'lower'")
        perm = permission.lower()
        if perm not in PERMISSIONS:
            return with_bar(ph, f"Error. Permission '{perm}' not tracked for app '{app_name}', available "
                                f"permissions: {list(PERMISSIONS)}")
        app[perm] = True
        return with_bar(ph, f"Success. Permission '{perm}' granted to app '{app_name}'.")


@_tool("read")
def can_send_mms(ctx: ToolContext, /):
    """Whether the messaging app can send MMS (picture) messages."""
    with editing(ctx) as ph:
        word = "can" if ph_rules.can_send_mms(ph) else "cannot"
        return f"Your messaging app {word} send MMS messages."


@_tool("write")
def reboot_device(ctx: ToolContext, /):
    """Restart the phone (applies a pending APN reset)."""
    with editing(ctx) as ph:
        lines = []
        if ph.apn("reset_at_reboot"):
            ph.set_apn(dict(DEFAULT_APN))
            lines.append("Resetting APN settings...")
        ph.p["network_connection_status"] = "searching"
        search(ph)
        return with_bar(ph, "\n".join([*lines, "Restarting network services..."]))


# ---- payments ------------------------------------------------------------------------------------

@_tool("read")
def check_payment_request(ctx: ToolContext, /):
    """Whether the carrier has asked for a payment, and of what."""
    with editing(ctx) as ph:
        return _request_text(ph, "No payment request has been made.",
                             "You have a payment request for bill {bill_id} of {amount} USD.")


@_tool("write")
def make_payment(ctx: ToolContext, /):
    """Pay the pending payment request."""
    with editing(ctx) as ph:
        if ph.s["request_bill_id"] is not None:
            ph.s["request_paid"] = True
        return _request_text(ph, "You do not have a payment request.",
                             "Payment of {amount} USD has been made for bill {bill_id}.")


def _request_text(ph: Phone, none: str, some: str) -> str:
    s = ph.s
    return none if s["request_bill_id"] is None else some.format(bill_id=s["request_bill_id"],
                                                                 amount=s["request_amount_due"])
