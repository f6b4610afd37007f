"""The tau2 telecom worlds against TOOLS_SPEC.md: data round trip, tau2's two hashes, every tool's outputs and errors,
the link step, and the replay of all 2,285 tasks (gold live, empty trajectory, Appendix A's hashes).

Expectations come from the spec and the data, never from the original's code
or the code under test: the hashes are recomputed by §5's recipe with plain
json + hashlib, records are built from db.toml in §2's field order, tool texts
are the spec's quotes, and Appendix A's hashes are read from the spec itself.
"""
from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path

import pytest

from evalsuite.domains.registry import lookup
from evalsuite.domains.tau2_telecom import (
    DOMAIN,
    LINK,
    ROLE,
    TAU2_HASH,
    USER_DOMAIN,
    build_worlds,
    from_nested,
    to_nested,
    tool_message,
    user_from_nested,
    user_to_nested,
)
from evalsuite.domains.tau2_telecom.task_run import assess, initialize, run_task
from evalsuite.worlds.domain import CheckInput, ToolContext
from evalsuite.worlds.link import connect

SRC = Path(__file__).resolve().parents[2] / "third_party" / "tau2_telecom"
SPEC = (SRC / "TOOLS_SPEC.md").read_text()
DB = tomllib.loads((SRC / "db.toml").read_text())
USER_DB = tomllib.loads((SRC / "user_db.toml").read_text())

# §2's field order of each record, and §3's defaults of what user_db.toml leaves out.
ORDER = {
    "plans": ("plan_id", "name", "data_limit_gb", "price_per_month", "data_refueling_price_per_gb"),
    "devices": ("device_id", "device_type", "model", "imei", "is_esim_capable", "activated", "activation_date",
                "last_esim_transfer_date"),
    "lines": ("line_id", "phone_number", "status", "plan_id", "device_id", "data_used_gb", "data_refueling_gb",
              "roaming_enabled", "contract_end_date", "last_plan_change_date", "last_sim_replacement_date",
              "suspension_start_date"),
    "customers": ("customer_id", "full_name", "date_of_birth", "email", "phone_number", "address", "account_status",
                  "payment_methods", "line_ids", "bill_ids", "created_at", "last_extension_date",
                  "goodwill_credit_used_this_year"),
    "bills": ("bill_id", "customer_id", "period_start", "period_end", "issue_date", "total_due", "due_date",
              "line_items", "status"),
}
START_BAR = "📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"  # §15: the un-searched start state
SEARCHED_BAR = "📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
APPENDIX_IDS = 6


def spec_record(collection: str, record: dict) -> dict:
    """A db.toml record as tau2 holds it (§5): absent optional fields null, datetimes with a space, §2's order."""
    out = {f: record.get(f) for f in ORDER[collection]}
    for f in ("activation_date", "last_esim_transfer_date", "created_at"):
        if out.get(f):
            out[f] = out[f].replace("T", " ")
    return out


def spec_agent_db(db: dict = DB) -> dict:
    return {c: [spec_record(c, r) for r in db[c]] for c in ORDER}


def find(collection: str, key: str) -> dict:
    return next(r for r in spec_agent_db()[collection] if r[ORDER[collection][0]] == key)


def spec_user_db() -> dict:
    """§3: user_db.toml plus the defaults it leaves out."""
    device = json.loads(json.dumps(USER_DB["device"]))
    device.update(wifi_ssid=None, vpn_details=None)
    device["active_apn_settings"].update(reset_at_reboot=False, mms_proxy=None, mms_port=None)
    surroundings = {"name": None, "phone_number": None, "is_abroad": False, "roaming_allowed": False,
                    "signal_strength": {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"},
                    "mobile_data_usage_exceeded": False, "line_active": True, "payment_request": None}
    return {"device": device, "surroundings": surroundings}


def spec_hash(db: dict) -> str:
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    return build_worlds(DB, USER_DB, tmp_path_factory.mktemp("telecom") / "world.sqlite")


@pytest.fixture
def pair(worlds):
    """Both worlds freshly reset and connected by the link step: (agent trial, phone trial)."""
    agent, phone = worlds[0].reset(ROLE), worlds[1].reset(None)
    connect(agent, phone, LINK)
    return agent, phone


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return json.loads((SRC / "tasks.json").read_text())


# ---- data, round trip, hashes, surface -----------------------------------------------------------

def test_initial_hashes_are_the_spec_recipe(worlds):
    agent, phone = worlds
    assert spec_hash(spec_agent_db()) == TAU2_HASH.initial == TAU2_HASH.agent(agent)
    assert spec_hash(spec_user_db()) == TAU2_HASH.initial_user == TAU2_HASH.user(phone)
    readme = (SRC / "README.md").read_text()
    assert f"agent DB\n  `{TAU2_HASH.initial}`" in readme and f"user DB `{TAU2_HASH.initial_user}`" in readme


def test_round_trips(worlds):
    agent, phone = worlds
    assert to_nested(agent.initial_rows, model=False) == DB  # db.toml as tomllib reads it
    assert to_nested(agent.initial_rows) == spec_agent_db()
    assert user_to_nested(phone.initial_rows) == spec_user_db()
    assert {t: len(r) for t, r in agent.initial_rows.items() if t in ORDER} == {  # README's record counts
        "plans": 5, "customers": 4, "lines": 9, "bills": 6, "devices": 9}
    assert len(agent.initial_rows["payment_methods"]) == 4


def test_loading_refuses_what_tau2_refuses():
    with pytest.raises(ValueError, match="top-level keys"):
        from_nested({**DB, "accounts": []})
    with pytest.raises(ValueError, match=r"lines\[1\]: unknown field\(s\) \['sim'\]"):
        from_nested({**DB, "lines": [DB["lines"][0], {**DB["lines"][1], "sim": "x"}]})
    with pytest.raises(ValueError, match=r"bills\[0\]\.status: invalid value 'Late'"):
        from_nested({**DB, "bills": [{**DB["bills"][0], "status": "Late"}]})
    with pytest.raises(ValueError, match=r"device\.network_mode_preference: invalid value '6g'"):
        user_from_nested({"device": {**USER_DB["device"], "network_mode_preference": "6g"}})
    with pytest.raises(ValueError, match=r"device: unknown field\(s\) \['nfc'\]"):
        user_from_nested({"device": {**USER_DB["device"], "nfc": True}})


def test_surface_clock_and_registry():
    kinds = {n: t.kind for n, t in DOMAIN.tools.items()}
    assert sorted(n for n, k in kinds.items() if k == "write") == [
        "disable_roaming", "enable_roaming", "refuel_data", "resume_line", "send_payment_request", "suspend_line"]
    assert len([k for k in kinds.values() if k == "read"]) == 6 and kinds["transfer_to_human_agents"] == "generic"
    user_kinds = [t.kind for t in USER_DOMAIN.tools.values()]
    assert user_kinds.count("read") == 15 and user_kinds.count("write") == 15
    for section in ("### 6.", "| # | tool |"):  # every agent tool (§6) and user tool (§8) the spec names exists
        assert section in SPEC
    assert set(re.findall(r"^### 6\.\d+ `(\w+)\(", SPEC, re.M)) == set(DOMAIN.tools)
    assert set(re.findall(r"^\| \d+ \| `(\w+)\(", SPEC, re.M)) == set(USER_DOMAIN.tools)
    assert ROLE.permitted == {n for n, k in kinds.items() if k != "generic"}
    assert "The current time is 2025-02-25 12:08:00 EST." in (SRC / "main_policy.md").read_text()
    assert DOMAIN.clock.isoformat() == "2025-02-25T12:08:00"
    package = lookup("tau2_telecom")
    assert package.domain is DOMAIN and package.user_domain is USER_DOMAIN and package.link is LINK


# ---- tool outputs --------------------------------------------------------------------------------

def step(env_type: str, func_name: str, **arguments) -> dict:
    return {"env_type": env_type, "func_name": func_name, "arguments": arguments}


USER_INFO = step("user", "set_user_info", name="John Smith", phone_number="555-123-2002")
C1, L2 = {"customer_id": "C1001"}, {"customer_id": "C1001", "line_id": "L1002"}


def _records(collection: str, *keys: str) -> str:
    return json.dumps([find(collection, k) for k in keys])


def _line(line_id: str, **changes) -> dict:
    return {**find("lines", line_id), **changes}


AGENT_CASES = [
    ([], "get_customer_by_phone", {"phone_number": "555-123-2002"}, json.dumps(find("customers", "C1001"))),
    ([], "get_customer_by_phone", {"phone_number": "555-123-2005"}, json.dumps(find("customers", "C1002"))),
    ([], "get_customer_by_phone", {"phone_number": "555-0"}, "Error: Customer with phone number 555-0 not found"),
    ([], "get_customer_by_id", {"customer_id": "C1004"}, json.dumps(find("customers", "C1004"))),
    ([], "get_customer_by_id", {"customer_id": 5}, "Error: Customer with ID 5 not found"),
    ([], "get_customer_by_name", {"full_name": "john SMITH", "dob": "1985-06-15"}, _records("customers", "C1001")),
    ([], "get_customer_by_name", {"full_name": "John Smith", "dob": "1985-06-16"}, "[]"),
    ([], "get_customer_by_name", {"full_name": 5, "dob": "x"}, "Error: 'int' object has no attribute 'lower'"),
    ([], "get_details_by_id", {"id": "L1002"}, json.dumps(find("lines", "L1002"))),
    ([], "get_details_by_id", {"id": "D1002"}, json.dumps(find("devices", "D1002"))),
    ([], "get_details_by_id", {"id": "B1001"}, json.dumps(find("bills", "B1001"))),
    ([], "get_details_by_id", {"id": "C1003"}, json.dumps(find("customers", "C1003"))),
    ([], "get_details_by_id", {"id": "P1003"}, json.dumps(find("plans", "P1003"))),
    ([], "get_details_by_id", {"id": "X1"}, "Error: Unknown ID format or type: X1"),
    ([], "get_details_by_id", {"id": "l1002"}, "Error: Unknown ID format or type: l1002"),
    ([], "get_details_by_id", {"id": "L9"}, "Error: Line with ID L9 not found"),
    ([], "get_details_by_id", {"id": 7}, "Error: 'int' object has no attribute 'startswith'"),
    ([], "get_bills_for_customer", C1, _records("bills", "B1003", "B1002", "B1001")),
    ([], "get_bills_for_customer", {**C1, "limit": 1}, _records("bills", "B1003")),
    ([], "get_bills_for_customer", {"customer_id": "C1004"}, "[]"),
    ([], "get_bills_for_customer", {**C1, "limit": "2"},
     "Error: slice indices must be integers or None or have an __index__ method"),
    ([], "get_data_usage", L2, '{"line_id": "L1002", "data_used_gb": "8.7", "data_limit_gb": "15.0", '
                               '"data_refueling_gb": "0.0", "cycle_end_date": "2025-02-28"}'),
    ([], "get_data_usage", {**C1, "line_id": "L1004"}, "Error: Line L1004 not found for customer C1001"),
    ([], "get_data_usage", {"customer_id": "C9", "line_id": "L1002"}, "Error: Customer with ID C9 not found"),
    ([], "suspend_line", {**L2, "reason": "travel"}, json.dumps(
        {"message": "Line suspended successfully. $5/month holding fee will apply.",
         "line": _line("L1002", status="Suspended", suspension_start_date="2025-02-25")})),
    ([], "suspend_line", {**C1, "line_id": "L1003", "reason": "x"}, "Error: Line must be active to suspend"),
    ([], "suspend_line", L2, "Error: TelecomTools.suspend_line() missing 1 required positional argument: 'reason'"),
    ([], "resume_line", {**C1, "line_id": "L1003"}, json.dumps(
        {"message": "Line resumed successfully", "line": _line("L1003", status="Active", suspension_start_date=None)})),
    ([], "resume_line", {**C1, "line_id": "L1001"}, "Error: Line must be suspended to resume"),
    ([], "send_payment_request", {**C1, "bill_id": "B1001"}, "Payment request sent to the customer for bill B1001"),
    ([], "send_payment_request", {**C1, "bill_id": "B1005"}, "Error: Bill B1005 not found for customer C1001"),
    ([step("assistant", "send_payment_request", **C1, bill_id="B1002")], "send_payment_request",
     {**C1, "bill_id": "B1003"}, "Error: A bill is already awaiting payment for this customer"),
    ([], "enable_roaming", L2, "Roaming was already enabled"),
    ([], "enable_roaming", {**C1, "line_id": "L1001"}, "Roaming enabled successfully"),
    ([], "disable_roaming", {**C1, "line_id": "L1001"}, "Roaming was already disabled"),
    ([], "disable_roaming", L2, "Roaming disabled successfully"),
    ([], "refuel_data", {**L2, "gb_amount": 2.0}, '{"message": "Successfully added 2.0 GB of data for line L1002 '
                                                  'for $4.00", "new_data_refueling_gb": "2.0", "charge": "4.0"}'),
    ([], "refuel_data", {**L2, "gb_amount": 0}, "Error: Refuel amount must be positive"),
    ([], "refuel_data", {**L2, "gb_amount": "2"}, "Error: '<=' not supported between instances of 'str' and 'int'"),
    ([], "transfer_to_human_agents", {"summary": "I cannot fix the issue."}, "Transfer successful"),
    ([], "toggle_data", {}, "Error: Tool 'toggle_data' not found."),  # the phone's tool
    ([], "set_data_usage", {**L2, "data_used_gb": 1.0}, "Error: Tool 'set_data_usage' not found."),  # a helper
]


@pytest.mark.parametrize("steps, tool, args, expected", AGENT_CASES,
                         ids=[f"{i}-{c[1]}" for i, c in enumerate(AGENT_CASES)])
def test_agent_tool_output(pair, steps, tool, args, expected):
    agent, phone = pair
    initialize(agent, phone, steps)
    assert tool_message(agent.call(tool, args)) == expected


def test_refuel_charges_the_draft_bill_and_reads_back(pair):
    agent, phone = pair
    agent.call("refuel_data", {**L2, "gb_amount": 2})
    bill = {**find("bills", "B1003"), "total_due": 4.0, "line_items": [
        {"description": "Data refueling: 2 GB at $2.0/GB", "amount": 4.0, "date": "2025-02-25", "item_type": "Charge"}]}
    assert tool_message(agent.call("get_details_by_id", {"id": "B1003"})) == json.dumps(bill)
    assert json.loads(tool_message(agent.call("get_data_usage", L2)))["data_refueling_gb"] == "2.0"


def test_refuel_without_a_draft_bill_opens_next_months(pair):
    agent, phone = pair  # C1002's bills are Paid and Overdue; L1004's plan P1003 charges $0.1/GB
    charge = 0.3 * 0.1  # unrounded (§6.12): Python's float text, 0.030000000000000002
    got = json.loads(tool_message(agent.call("refuel_data", {"customer_id": "C1002", "line_id": "L1004",
                                                             "gb_amount": 0.3})))
    assert got == {"message": "Successfully added 0.3 GB of data for line L1004 for $0.03",
                   "new_data_refueling_gb": "0.3", "charge": str(charge)}
    customer = json.loads(tool_message(agent.call("get_customer_by_id", {"customer_id": "C1002"})))
    assert customer["bill_ids"][:2] == ["B1004", "B1005"] and re.fullmatch(r"B[0-9a-fA-F]{8}", customer["bill_ids"][2])
    bill = json.loads(tool_message(agent.call("get_details_by_id", {"id": customer["bill_ids"][2]})))
    assert bill == {"bill_id": customer["bill_ids"][2], "customer_id": "C1002", "period_start": "2025-03-01",
                    "period_end": "2025-03-31", "issue_date": "2025-03-01", "total_due": charge,
                    "due_date": "2025-03-15", "line_items": [{"description": "Data refueling: 0.3 GB at $0.1/GB",
                                                              "amount": charge, "date": "2025-02-25",
                                                              "item_type": "Charge"}], "status": "Draft"}


def bar(message: str, status_bar: str = START_BAR) -> str:
    return f"{message}\nStatus Bar: {status_bar}"


U = "user"
SPEED = "Speed Test Result: {} Mbps ({}). {}"
VERY_FAST = "Connection is very fast."
APN_TEXT = ("Current APN Name: internet\nMMSC URL (for picture messages): {}\n"
            "(These are technical settings, usually best left unchanged.)")
VPN_DETAILS = ("VPN is ON and connected. Details: {{'server_address': '192.168.1.1', 'protocol': 'OpenVPN', "
               "'server_performance': <PerformanceLevel.{}: '{}'>}}")
NO_PERMS = [step(U, "remove_app_permission", app_name="browser", permission=p) for p in ("storage", "network")]
REQUEST = [USER_INFO, step("assistant", "send_payment_request", **C1, bill_id="B1002")]
USER_CASES = [
    ([], "check_status_bar", {}, f"Status Bar: {START_BAR}"),
    ([step(U, "turn_airplane_mode_on")], "check_status_bar", {}, "Status Bar: ✈️ Airplane Mode | 🔋 80%"),
    ([step(U, "unseat_sim_card")], "check_status_bar", {}, "Status Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%"),
    ([], "check_network_status", {}, "Airplane Mode: OFF\nSIM Card Status: active\nCellular Connection: connected\n"
                                     "Cellular Signal: good\nCellular Network Type: 5G\nMobile Data Enabled: Yes\n"
                                     "Data Roaming Enabled: No\nWi-Fi Radio: OFF\nWi-Fi Connected: No"),
    ([], "check_network_mode_preference", {}, "Network Mode Preference: 4g_5g_preferred"),
    ([], "set_network_mode_preference", {"mode": "4g_only"},
     bar("Preferred Network Mode set to: 4g_only", "📶³ Good | 4G | 📱 Data Enabled | 🔋 80%")),
    ([], "set_network_mode_preference", {"mode": "5g_only"},
     bar("Failed to set network mode: '5g_only' is not a valid option. Please use one of: 4g_5g_preferred, "
         "4g_only, 3g_only, 2g_only")),
    ([], "run_speed_test", {}, SPEED.format("220.00", "Excellent", VERY_FAST)),
    ([step(U, "simulate_network_search")], "run_speed_test", {}, SPEED.format("275.00", "Excellent", VERY_FAST)),
    ([step(U, "set_network_mode_preference", mode="4g_only")], "run_speed_test", {},
     SPEED.format("44.00", "Good", "Connection is good for most activities, including HD streaming.")),
    ([step(U, "set_network_mode_preference", mode="3g_only")], "run_speed_test", {},
     SPEED.format("1.50", "Poor", "Connection is slow. Web browsing may be sluggish, streaming difficult.")),
    ([step(U, "set_network_mode_preference", mode="2g_only")], "run_speed_test", {},
     SPEED.format("0.05", "Very Poor", "Connection is very slow. Basic web browsing might be difficult.")),
    ([step(U, "simulate_network_search"), step(U, "turn_data_saver_mode_on")], "run_speed_test", {},
     SPEED.format("55.00", "Good", "Connection is good for most activities, including HD streaming.")),
    ([step(U, "break_vpn")], "run_speed_test", {},
     SPEED.format("22.00", "Fair", "Connection is okay for web browsing and some standard definition streaming.")),
    ([step(U, "simulate_network_search"), step(U, "break_vpn"), step(U, "turn_data_saver_mode_on")],
     "run_speed_test", {},
     SPEED.format("5.50", "Fair", "Connection is okay for web browsing and some standard definition streaming.")),
    ([step(U, "turn_data_off")], "run_speed_test", {}, "Speed test failed: No Connection."),
    ([], "toggle_airplane_mode", {}, bar("Airplane Mode is now ON.", "✈️ Airplane Mode | 🔋 80%")),
    ([step(U, "turn_airplane_mode_on")], "toggle_airplane_mode", {}, bar("Airplane Mode is now OFF.", SEARCHED_BAR)),
    ([], "check_sim_status", {}, "Your SIM card is active and working."),
    ([step(U, "unseat_sim_card")], "check_sim_status", {}, "No SIM card detected in the phone."),
    ([step(U, "lock_sim_card", mode="pin")], "check_sim_status", {}, "The SIM card is locked with a PIN code."),
    ([step(U, "lock_sim_card", mode="puk")], "check_sim_status", {}, "The SIM card is locked with a PUK code."),
    ([step(U, "unseat_sim_card")], "reseat_sim_card", {}, bar("SIM card re-seated successfully.", SEARCHED_BAR)),
    ([], "toggle_data", {}, bar("Mobile Data is now OFF.", "📶⁴ Excellent | 5G | 📵 Data Disabled | 🔋 80%")),
    ([], "toggle_data", {"x": 1}, "Error: TelecomUserTools.toggle_data() got an unexpected keyword argument 'x'"),
    ([], "toggle_roaming", {}, bar("Data Roaming is now ON.", SEARCHED_BAR)),
    ([], "check_data_restriction_status", {}, "Data Saver mode is OFF."),
    ([step(U, "turn_data_saver_mode_on")], "check_data_restriction_status", {},
     "Data Saver mode is ON (limits data usage)."),
    ([], "toggle_data_saver_mode", {},
     bar("Data Saver Mode is now ON.", "📶³ Good | 5G | 📱 Data Enabled | 🔽 Data Saver | 🔋 80%")),
    ([], "check_apn_settings", {}, APN_TEXT.format("http://mms.carrier.com/mms/wapenc")),
    ([step(U, "break_apn_mms_setting")], "check_apn_settings", {}, APN_TEXT.format("Not Set")),
    ([], "set_apn_settings", {"apn_settings": {"apn_name": "internet"}},
     bar("APN settings set to: internet", SEARCHED_BAR)),
    ([], "set_apn_settings", {"apn_settings": {"apn_name": "broken"}},
     bar("APN settings set to: broken", "📵 No Signal | 📵 Data Disabled | 🔋 80%")),
    ([], "set_apn_settings", {"apn_settings": "internet"}, "Error: 'str' object has no attribute 'apn_name'"),
    ([step(U, "set_apn_settings", apn_settings={"apn_name": "internet", "mmsc_url": None})], "check_apn_settings",
     {}, APN_TEXT.format("Not Set")),
    ([], "reset_apn_settings", {}, bar("APN settings will reset at reboot.", SEARCHED_BAR)),
    ([], "check_wifi_status", {}, "Wi-Fi is turned OFF."),
    ([step(U, "toggle_wifi")], "check_wifi_status", {}, "Wi-Fi is ON but not connected to any network."),
    ([], "toggle_wifi", {}, bar("Wi-Fi is now ON.")),
    ([step(U, "toggle_wifi")], "toggle_wifi", {}, bar("Wi-Fi is now OFF.")),
    ([step(U, "turn_airplane_mode_on")], "toggle_wifi", {},
     bar("Cannot change Wi-Fi settings while Airplane Mode is ON.", "✈️ Airplane Mode | 🔋 80%")),
    ([], "check_wifi_calling_status", {}, "Wi-Fi Calling is currently turned OFF."),
    ([], "toggle_wifi_calling", {}, bar("Wi-Fi Calling is now ON.")),
    ([], "check_vpn_status", {}, "VPN is turned OFF."),
    ([step(U, "connect_vpn")], "check_vpn_status", {}, VPN_DETAILS.format("EXCELLENT", "excellent")),
    ([step(U, "break_vpn")], "check_vpn_status", {}, VPN_DETAILS.format("POOR", "poor")),
    # the departure from tau2 (§15): a bad VPN earlier leaves every later connection excellent
    ([step(U, "break_vpn"), step(U, "disconnect_vpn"), step(U, "connect_vpn")], "check_vpn_status", {},
     VPN_DETAILS.format("EXCELLENT", "excellent")),
    ([], "connect_vpn", {},
     bar("VPN connected successfully.", "📶³ Good | 5G | 📱 Data Enabled | 🔒 VPN Connected | 🔋 80%")),
    ([step(U, "connect_vpn")], "connect_vpn", {}, "VPN already connected."),
    ([], "disconnect_vpn", {}, bar("No active VPN connection to disconnect.")),
    ([step(U, "connect_vpn")], "disconnect_vpn", {}, bar("VPN disconnected successfully.")),
    ([], "check_installed_apps", {}, "The following apps are installed on the phone: messaging, browser"),
    ([], "check_app_status", {"app_name": "messaging"},
     "Status for App: messaging\n - Permissions Granted:\n   - sms\n   - storage\n   - phone"),
    (NO_PERMS, "check_app_status", {"app_name": "browser"}, "Status for App: browser\n - Permissions: None granted."),
    ([], "check_app_status", {"app_name": "camera"}, "App 'camera' not found on this phone."),
    ([], "check_app_permissions", {"app_name": "browser"}, "App 'browser' has permission for: storage, network."),
    (NO_PERMS, "check_app_permissions", {"app_name": "browser"}, "App 'browser' currently has no permissions granted."),
    ([], "check_app_permissions", {"app_name": "camera"}, "App 'camera' not found on this phone."),
    ([step(U, "remove_app_permission", app_name="messaging", permission="sms")], "grant_app_permission",
     {"app_name": "messaging", "permission": "SMS"}, bar("Success. Permission 'sms' granted to app 'messaging'.")),
    ([], "grant_app_permission", {"app_name": "camera", "permission": "sms"},
     bar("Error. App 'camera' not found. Cannot grant permission.")),
    ([], "grant_app_permission", {"app_name": "messaging", "permission": "camera"},
     bar("Error. Permission 'camera' not tracked for app 'messaging', available permissions: "
         "['sms', 'storage', 'phone', 'network']")),
    ([], "can_send_mms", {}, "Your messaging app can send MMS messages."),
    ([step(U, "break_apn_mms_setting")], "can_send_mms", {}, "Your messaging app cannot send MMS messages."),
    ([step(U, "set_network_mode_preference", mode="2g_only")], "can_send_mms", {},
     "Your messaging app cannot send MMS messages."),
    ([step(U, "set_wifi_calling", enabled=True, mms_over_wifi=True)], "can_send_mms", {},
     "Your messaging app cannot send MMS messages."),
    ([], "reboot_device", {}, bar("Restarting network services...", SEARCHED_BAR)),
    ([step(U, "break_apn_settings"), step(U, "reset_apn_settings")], "reboot_device", {},
     bar("Resetting APN settings...\nRestarting network services...", SEARCHED_BAR)),
    ([], "check_payment_request", {}, "No payment request has been made."),
    (REQUEST, "check_payment_request", {}, "You have a payment request for bill B1002 of 150.0 USD."),
    ([], "make_payment", {}, "You do not have a payment request."),
    (REQUEST, "make_payment", {}, "Payment of 150.0 USD has been made for bill B1002."),
    ([], "get_customer_by_id", C1, "Error: Tool 'get_customer_by_id' not found."),  # the agent's tool
]


@pytest.mark.parametrize("steps, tool, args, expected", USER_CASES,
                         ids=[f"{i}-{c[1]}" for i, c in enumerate(USER_CASES)])
def test_user_tool_output(pair, steps, tool, args, expected):
    agent, phone = pair
    initialize(agent, phone, steps)
    assert tool_message(phone.call(tool, args, actor="user")) == expected


def test_a_raw_apn_value_is_stored_and_breaks_what_reads_it(pair):
    agent, phone = pair
    event = phone.call("set_apn_settings", {"apn_settings": "internet"}, actor="user")
    assert event.outcome == "error"
    state = spec_user_db()
    state["device"]["active_apn_settings"] = "internet"  # §15: stored before the failure
    assert TAU2_HASH.user(phone) == spec_hash(state)
    assert tool_message(phone.call("check_apn_settings", {}, actor="user")) == \
        "Error: 'str' object has no attribute 'model_copy'"
    assert phone.call("reboot_device", {}, actor="user").outcome == "error"


def test_apn_settings_are_validated_as_a_record(pair):
    agent, phone = pair
    message = tool_message(phone.call("set_apn_settings", {"apn_settings": {"apn_name": "wap"}}, actor="user"))
    assert message.startswith("Error: 1 validation error for APNSettings\napn_name\n  Input should be 'internet' or "
                              "'broken'")
    message = tool_message(phone.call("set_apn_settings", {"apn_settings": {"apn_name": "internet", "x": 1}},
                                      actor="user"))
    assert "x\n  Extra inputs are not permitted" in message
    assert TAU2_HASH.user(phone) == TAU2_HASH.initial_user  # refused before any change


# ---- the link step and the checks ----------------------------------------------------------------

def test_link_carries_line_state_and_payments_across(pair):
    agent, phone = pair
    initialize(agent, phone, [USER_INFO])
    sur = user_to_nested(phone.rows())["surroundings"]
    assert (sur["phone_number"], sur["roaming_allowed"], sur["line_active"]) == ("555-123-2002", True, True)
    agent.call("suspend_line", {**L2, "reason": "x"})
    assert user_to_nested(phone.rows())["surroundings"]["line_active"] is False
    assert tool_message(phone.call("check_status_bar", actor="user")) == f"Status Bar: {START_BAR}"  # lazy (§15)
    phone.call("reboot_device", actor="user")
    assert user_to_nested(phone.rows())["device"]["network_connection_status"] == "no_service"
    agent.call("send_payment_request", {**C1, "bill_id": "B1002"})
    assert user_to_nested(phone.rows())["surroundings"]["payment_request"] == {"bill_id": "B1002",
                                                                              "amount_due": 150.0, "paid": False}
    phone.call("make_payment", actor="user")
    assert user_to_nested(phone.rows())["surroundings"]["payment_request"] is None
    assert to_nested(agent.rows())["bills"][1] == {**find("bills", "B1002"), "status": "Paid"}


def test_assertions_are_helpers_and_checks_with_one_result(pair):
    agent, phone = pair
    initialize(agent, phone, [USER_INFO, step(U, "turn_airplane_mode_on")])

    def check(world, name, **params):
        fn = world.domain.checks[name]
        got = fn(CheckInput(end=world.db, seed=world.world.pristine_db, trace=[], final_message="", params=params))
        helper = world.domain.helpers[name].fn(world_ctx(world), **params)
        assert got.passed is helper and name in got.detail
        return got.passed

    assert check(phone, "assert_service_status", expected_status="no_service")
    assert not check(phone, "assert_mobile_data_status", expected_status=True)
    assert check(phone, "assert_internet_speed", expected_speed=0, expected_desc="no connection")
    assert check(phone, "assert_internet_not_excellent") and check(phone, "assert_airplane_mode_status",
                                                                   expected_status=True)
    assert not check(phone, "assert_can_send_mms", expected_status=True)
    assert check(agent, "assert_no_overdue_bill", overdue_bill_id="B1234321")  # §15: no such bill
    assert not check(agent, "assert_no_overdue_bill", overdue_bill_id="B1005")  # C1002's Overdue bill
    assert check(agent, "assert_data_refueling_amount", **L2, expected_amount=0.0)
    assert check(agent, "assert_line_status", **L2, expected_status="Active")
    got = agent.domain.checks["assert_overdue_bill_exists"](CheckInput(
        end=agent.db, seed=agent.world.pristine_db, trace=[], final_message="",
        params={**C1, "overdue_bill_id": "B1002"}))
    assert not got.passed and "raised" in got.detail


def world_ctx(trial) -> ToolContext:
    return ToolContext(conn=trial.world.trial_connection, now=trial.clock)


# ---- every task ----------------------------------------------------------------------------------

def appendix_a() -> dict[str, list[str]]:
    """Appendix A: task id -> hashes after initialization, after live gold, of tau2's no-sync gold (prefixes
    `abcd…wxyz` expanded from the full values quoted elsewhere in the spec)."""
    full = set(re.findall(r"[0-9a-f]{64}", SPEC))

    def expand(text: str, before: list[str]) -> list[str]:
        if text.strip() in ("unchanged", "same as live"):
            return before
        out = []
        for h in re.findall(r"`([0-9a-f]{8})…([0-9a-f]+)`|`([0-9a-f]{64})`", text):
            out.append(h[2] or next(f for f in full if f.startswith(h[0]) and f.endswith(h[1])))
        return out

    rows = re.findall(r"^\| `(\[.*?\])` \| (.*?) \| (.*?) \| (.*?) \|$", SPEC, re.M)
    table = {}
    for task_id, init, live, no_sync in rows:
        init_h = expand(init, [])
        live_h = expand(live, init_h)
        table[task_id.replace("\\|", "|")] = [*init_h, *live_h, *expand(no_sync, live_h)]
    return table


def test_every_task_gold_live_meets_its_assertions_and_empty_fails(worlds, tasks):
    assert len(tasks) == 2285
    appendix = appendix_a()
    assert len(appendix) == APPENDIX_IDS
    failures, unfixable, hashes = [], 0, {}
    for task in tasks:
        agent, phone = worlds[0].reset(ROLE), worlds[1].reset(None)
        connect(agent, phone, LINK)
        run = run_task(agent, phone, task, hashes=task["id"] in appendix)
        errors = [(e.tool, e.error) for e in run.gold if e.outcome != "ok"]
        if errors or run.env_reward != 1.0:
            failures.append((task["id"], errors, [a.detail for a in run.assertions if not a.holds]))
        if task["id"] in appendix:
            hashes[task["id"]] = [*run.init_hashes, *run.end_hashes]
        # the empty trajectory: initialization only
        agent, phone = worlds[0].reset(ROLE), worlds[1].reset(None)
        connect(agent, phone, LINK)
        initialize(agent, phone, task["initial_state"]["initialization_actions"])
        empty = all(a.holds for a in assess(agent, phone, task["evaluation_criteria"]["env_assertions"]))
        fixable = task["evaluation_criteria"]["reward_basis"] == ["ENV_ASSERTION"]
        unfixable += not fixable
        if empty == fixable:  # fixable: some assertion must fail; unfixable: they hold, only ACTION fails
            failures.append((task["id"], "empty trajectory", empty))
    assert failures == []
    assert unfixable == 32
    assert {t: h[:4] for t, h in appendix.items()} == hashes


def test_tau2_gold_state_without_the_sync_step(worlds, tasks):
    """Appendix A's third column: the gold actions executed with no link step between them (§13.3)."""
    by_id = {t["id"]: t for t in tasks}
    for task_id, expected in appendix_a().items():
        task = by_id[task_id]
        agent, phone = worlds[0].reset(ROLE), worlds[1].reset(None)
        connect(agent, phone, LINK)
        initialize(agent, phone, task["initial_state"]["initialization_actions"])
        agent.after_ok = phone.after_ok = None
        for action in task["evaluation_criteria"]["actions"]:
            (phone if action["requestor"] == "user" else agent).call(action["name"], action["arguments"])
        assert [TAU2_HASH.agent(agent), TAU2_HASH.user(phone)] == expected[4:], task_id
