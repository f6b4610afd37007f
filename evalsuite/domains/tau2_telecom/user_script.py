"""The scripted telecom customer: what they say and which of their phone's 30 tools they run when asked.

A deterministic stand-in for τ²-bench's LLM user, who keeps to what they can see: every answer about the phone
is the output of the phone tool the agent asked for (the status bar, a speed test, the network status…),
never a guess. It opens with its intent's symptom, tells its name, number and location when asked, agrees to
pay a bill or buy 2.0 GB of data as the original's instructions allow, and runs a phone tool only when the
agent's message names it (the tool's name in words, or the few phrasings listed). An argument-taking tool runs
with the arguments the message names: the network modes, and the two permissions the messaging app can lack.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evalsuite.core.records import Disclosure, UserAction, UserScript

OPENING = {
    "service_issue": "Hi, my phone has been showing 'No Service' for the past few hours.",
    "mobile_data_issue": "Hi, my mobile data is not working properly: it either stops working or is very slow.",
    "mms_issue": "Hi, I have been unable to send MMS messages with my messaging app for the past few hours.",
}
MODES = {"4g_5g_preferred": r"4g_5g_preferred|4g/5g|4g and 5g", "4g_only": r"4g_only|4g only",
         "3g_only": r"3g_only|3g only", "2g_only": r"2g_only|2g only"}


def _named(tool: str, *more: str) -> list[str]:
    """The tool's name in words first (the probe the user audit sends), then other phrasings."""
    return [r"\b" + tool.replace("_", r"[ _]") + r"\b", *more]


# tool -> what asks for it; a toggle is asked for by name (or "turn on/off …"), so a mention of a setting in a
# question never flips it
ASKED_BY: dict[str, list[str]] = {
    "check_status_bar": _named("check_status_bar", r"status bar"),
    "check_network_status": _named("check_network_status", r"network status"),
    "check_network_mode_preference": _named("check_network_mode_preference", r"check .*network mode"),
    "run_speed_test": _named("run_speed_test", r"speed test"),
    "toggle_airplane_mode": _named("toggle_airplane_mode", r"turn (on|off) airplane mode",
                                   r"airplane mode (on|off)\b"),
    "check_sim_status": _named("check_sim_status", r"sim (card )?status"),
    "reseat_sim_card": _named("reseat_sim_card", r"re-?seat"),
    "toggle_data": [r"\btoggle[ _]data\b(?![ _]saver)", r"turn (on|off) (your )?mobile data"],
    "toggle_roaming": _named("toggle_roaming", r"turn (on|off) (data )?roaming"),
    "check_data_restriction_status": _named("check_data_restriction_status", r"check .*data saver"),
    "toggle_data_saver_mode": _named("toggle_data_saver_mode", r"turn (on|off) data saver"),
    "check_apn_settings": _named("check_apn_settings", r"check .*apn"),
    "reset_apn_settings": _named("reset_apn_settings", r"reset .*apn"),
    "check_wifi_status": _named("check_wifi_status", r"check .*wi-?fi status"),
    "toggle_wifi": [r"\btoggle[ _]wifi\b(?![ _]calling)", r"turn (on|off) wi-?fi(?! calling)"],
    "check_wifi_calling_status": _named("check_wifi_calling_status", r"check .*wi-?fi calling"),
    "toggle_wifi_calling": _named("toggle_wifi_calling", r"turn (on|off) wi-?fi calling"),
    "check_vpn_status": _named("check_vpn_status", r"check .*vpn"),
    "connect_vpn": _named("connect_vpn"),
    "disconnect_vpn": _named("disconnect_vpn", r"disconnect .*vpn", r"turn off .*vpn"),
    "check_installed_apps": _named("check_installed_apps", r"installed apps"),
    "can_send_mms": _named("can_send_mms", r"send an? mms", r"mms message"),
    "reboot_device": _named("reboot_device", r"reboot|restart (your|the) (phone|device)"),
    "check_payment_request": _named("check_payment_request", r"payment request"),
    "make_payment": _named("make_payment", r"\bpay (the|your|it)\b", r"accept the payment"),
}


def _argument_actions() -> list[UserAction]:
    """The tools that take arguments, one action per argument set the message names."""
    out = [UserAction(tool="set_network_mode_preference", arguments={"mode": mode},
                      asked_by=[rf"set[ _]network[ _]mode[ _]preference\b.*({words})", rf"(set|change).*({words})"])
           for mode, words in MODES.items()]
    for app in ("messaging", "browser"):
        out.append(UserAction(tool="check_app_status", arguments={"app_name": app},
                              asked_by=[rf"check[ _]app[ _]status\b.*{app}"]))
        out.append(UserAction(tool="check_app_permissions", arguments={"app_name": app},
                              asked_by=[rf"check[ _]app[ _]permissions\b.*{app}", rf"{app} app'?s? permissions"]))
    for permission in ("sms", "storage"):
        out.append(UserAction(tool="grant_app_permission", arguments={"app_name": "messaging",
                                                                       "permission": permission},
                              asked_by=[rf"grant[ _]app[ _]permission\b.*\b{permission}\b",
                                        rf"grant .*\b{permission}\b.*permission"]))
    return out


def script(task: Mapping[str, Any]) -> UserScript:
    """The scripted user of one telecom task (a tasks.json record): its opening, what it tells, what it runs."""
    intent = re.match(r"\[(\w+)\]", task["id"]).group(1)
    known = task["user_scenario"]["instructions"]["known_info"]
    name, phone = re.match(r"You are (.+?) with phone number ([\d-]+)\.", known).groups()
    where = re.search(r"You are currently (.+?)\.", known)
    disclosures = [Disclosure(fact="name", value=f"My name is {name}.", asked_by=[r"\bname\b"]),
                   Disclosure(fact="phone number", value=f"My phone number is {phone}.",
                              asked_by=[r"phone number", r"\bnumber\b"])]
    if where:
        disclosures.append(Disclosure(fact="location", value=f"I am currently {where.group(1)}.",
                                      asked_by=[r"abroad|travel|where are you|location|country"]))
    if "refuel 2.0 GB" in task["user_scenario"]["instructions"]["task_instructions"]:
        disclosures.append(Disclosure(fact="refuel", value="I can refuel 2.0 GB of data, but I do not want to "
                                      "change my plan.", asked_by=[r"refuel|add(ing)? (more )?data"]))
    actions = [UserAction(tool=tool, asked_by=patterns) for tool, patterns in ASKED_BY.items()]
    return UserScript(opening=OPENING[intent], disclosures=disclosures, actions=[*actions, *_argument_actions()])
