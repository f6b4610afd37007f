"""τ²-bench telecom's issue catalogue (TOOLS_SPEC.md §12.1–12.2): what each issue breaks, how it is fixed, the
groups of mutually exclusive issues, and the three intents with their groups, validity rule and end checks.

An issue's setup steps, setup checks, fix and extra assertions are functions of the entity (the customer, line
and phone every task uses), as the task file stores them: a call is an `evalsuite` ToolCall (actor "user": on
the phone, else on the carrier's side), an assertion an EnvAssertion. An issue without a fix is unfixable: a task
holding one is solved by a transfer to a human agent, and the intent's failure assertions must then hold.
The validity rule of every intent is "at least one issue from these groups" (`required`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalsuite.core.records import EnvAssertion, ToolCall
from evalsuite.tasks.composition import Entity, Subtask

# The customer, line and phone owner of every task (db.toml's C1001 / L1002, the user DB's phone).
ENTITY: Entity = {"name": "John Smith", "phone_number": "555-123-2002", "customer_id": "C1001", "line_id": "L1002"}
OVERDUE_BILL = "B1234321"  # the bill the suspension issues create, and the service intent checks
REFUEL_GB = 2.0
TRANSFER = ToolCall(tool="transfer_to_human_agents", arguments={"summary": "I cannot fix the issue."})

Calls = Callable[[Entity], list[ToolCall]]
Checks = Callable[[Entity], list[EnvAssertion]]


def user(tool: str, **arguments: Any) -> Calls:
    """One call on the phone, with fixed arguments."""
    return lambda e: [ToolCall(tool=tool, arguments=arguments, actor="user")]


def agent(tool: str, **arguments: Any) -> Calls:
    """One call on the carrier's side, on the entity's customer and line, then the fixed arguments."""
    return lambda e: [ToolCall(tool=tool, arguments={"customer_id": e["customer_id"], "line_id": e["line_id"],
                                                     **arguments})]


def then(*parts: Calls) -> Calls:
    return lambda e: [c for p in parts for c in p(e)]


def on_user(func: str, message: str | None = None, **arguments: Any) -> Checks:
    return lambda e: [EnvAssertion(env_type="user", func_name=func, arguments=arguments, message=message)]


def on_agent(func: str, **arguments: Any) -> Checks:
    """An assertion on the carrier's side, on the entity's customer and line, then the fixed arguments."""
    return lambda e: [EnvAssertion(env_type="assistant", func_name=func, arguments={
        "customer_id": e["customer_id"], "line_id": e["line_id"], **arguments})]


def both(*parts: Checks) -> Checks:
    return lambda e: [a for p in parts for a in p(e)]


NONE: Checks = lambda e: []  # noqa: E731


@dataclass(frozen=True)
class Issue:
    name: str
    setup: Calls
    checks: Checks  # hold right after the setup (used while composing, never stored in the task)
    fix: Calls | None  # None: unfixable
    extra: Checks = NONE  # appended to the stored assertions of a fixable task


@dataclass(frozen=True)
class Intent:
    name: str
    groups: tuple[str, ...]  # in enumeration order
    required: tuple[str, ...]  # the validity rule: at least one issue from these groups
    success: Checks
    failure: Checks  # stored instead of `success` when an issue is unfixable


NO_SERVICE = on_user("assert_service_status", expected_status="no_service")
NO_CONNECTION = on_user("assert_internet_speed", expected_speed=0, expected_desc="no connection")
ABROAD = user("set_user_location", abroad=True)


def _suspension(name: str, contract_ended: bool, fix: Calls | None) -> Issue:
    setup = then(lambda e: [ToolCall(tool="suspend_line_for_overdue_bill", arguments={
        "customer_id": e["customer_id"], "line_id": e["line_id"], "new_bill_id": OVERDUE_BILL,
        "contract_ended": contract_ended})], user("simulate_network_search"))
    checks = both(NO_SERVICE, lambda e: [EnvAssertion(env_type="assistant", func_name="assert_overdue_bill_exists",
                                                      arguments={"customer_id": e["customer_id"],
                                                                 "overdue_bill_id": OVERDUE_BILL})],
                  on_agent("assert_line_status", expected_status="Suspended"))
    return Issue(name, setup, checks, fix)


def _pay_and_resume(e: Entity) -> list[ToolCall]:
    return [ToolCall(tool="send_payment_request", arguments={"customer_id": e["customer_id"], "bill_id": OVERDUE_BILL}),
            *user("make_payment")(e), *agent("resume_line")(e), *user("reboot_device")(e)]


def _remove(*permissions: str) -> Calls:
    return then(*(user("remove_app_permission", app_name="messaging", permission=p) for p in permissions))


def _grant(*permissions: str) -> Calls:
    return then(*(user("grant_app_permission", app_name="messaging", permission=p) for p in permissions))


RESET_APN = then(user("reset_apn_settings"), user("reboot_device"))
ROAMING_ON, ROAMING_OFF = (on_user("assert_mobile_roaming_status", expected_status=v) for v in (True, False))
EXCEEDED = on_user("assert_mobile_data_usage_exceeded", expected_status=True)

# group: its issues, alternatives in listed order
GROUPS: dict[str, tuple[Issue, ...]] = {
    "airplane": (Issue("airplane_mode_on", user("turn_airplane_mode_on"),
                       both(on_user("assert_airplane_mode_status", expected_status=True), NO_SERVICE),
                       user("toggle_airplane_mode")),),
    "sim_unseat": (Issue("unseat_sim_card", user("unseat_sim_card"), NO_SERVICE, user("reseat_sim_card")),),
    "sim_lock": (Issue("lock_sim_card_pin", user("lock_sim_card", mode="pin"), NO_SERVICE, None),),
    "apn": (Issue("break_apn_settings", user("break_apn_settings"), NO_SERVICE, RESET_APN),),
    "suspension": (_suspension("overdue_bill_suspension", False, _pay_and_resume),
                   _suspension("contract_end_suspension", True, None)),
    "roaming": (Issue("user_abroad_roaming_enabled_off",
                      then(ABROAD, user("turn_roaming_off"), agent("enable_roaming")), ROAMING_OFF,
                      user("toggle_roaming")),
                Issue("user_abroad_roaming_disabled_on",
                      then(ABROAD, user("turn_roaming_on"), agent("disable_roaming"), user("simulate_network_search")),
                      both(ROAMING_ON, NO_CONNECTION), agent("enable_roaming")),
                Issue("user_abroad_roaming_disabled_off",
                      then(ABROAD, user("turn_roaming_off"), agent("disable_roaming"), user("simulate_network_search")),
                      both(ROAMING_OFF, NO_CONNECTION), then(agent("enable_roaming"), user("toggle_roaming")))),
    "data_mode": (Issue("data_mode_off", user("turn_data_off"), on_user("assert_mobile_data_status",
                                                                        expected_status=False), user("toggle_data")),),
    "data_saver": (Issue("data_saver_mode_on", user("turn_data_saver_mode_on"),
                         on_user("assert_mobile_data_saver_mode_status", expected_status=True),
                         user("toggle_data_saver_mode")),),
    "network_preference": (Issue("bad_network_preference", user("set_network_mode_preference", mode="2g_only"), NONE,
                                 user("set_network_mode_preference", mode="4g_5g_preferred")),),
    "vpn": (Issue("bad_vpn", user("break_vpn"), on_user("assert_internet_not_excellent"), user("disconnect_vpn")),),
    "data_usage": (Issue("data_usage_exceeded", agent("set_data_usage", data_used_gb=15.1), EXCEEDED,
                         agent("refuel_data", gb_amount=REFUEL_GB),
                         extra=on_agent("assert_data_refueling_amount", expected_amount=REFUEL_GB)),
                   Issue("data_usage_exceeded_no_refuel",
                         then(agent("refuel_data", gb_amount=REFUEL_GB), agent("set_data_usage", data_used_gb=17.1)),
                         EXCEEDED, None)),
    "wifi_calling": (Issue("bad_wifi_calling", user("set_wifi_calling", enabled=True, mms_over_wifi=True), NONE,
                           user("toggle_wifi_calling")),),
    "apn_mms": (Issue("break_apn_mms_setting", user("break_apn_mms_setting"), NONE, RESET_APN),),
    "app_permission": (Issue("break_app_sms_permission", _remove("sms"), NONE, _grant("sms")),
                       Issue("break_app_storage_permission", _remove("storage"), NONE, _grant("storage")),
                       Issue("break_app_both_permissions", _remove("sms", "storage"), NONE, _grant("sms", "storage"))),
}
ISSUES: dict[str, Issue] = {i.name: i for issues in GROUPS.values() for i in issues}
GROUP_OF: dict[str, str] = {i.name: g for g, issues in GROUPS.items() for i in issues}

# The issue the original's code composes but its task file lacks: every task holding it was deleted after the
# personas were assigned (TOOLS_SPEC.md §12.3), so it still shifts the personas and the sample.
DELETED = "data_usage_exceeded_no_refuel"

_SERVICE = ("airplane", "sim_unseat", "sim_lock", "apn", "suspension")
_DATA = ("airplane", "roaming", "data_mode", "data_saver", "network_preference", "vpn", "data_usage")
_MMS = ("airplane", "sim_unseat", "data_mode", "data_usage", "roaming", "network_preference", "wifi_calling",
        "apn_mms", "app_permission")
INTENTS: dict[str, Intent] = {i.name: i for i in (
    Intent("service_issue", _SERVICE, _SERVICE,
           both(on_user("assert_service_status", "Service status is not as expected", expected_status="connected"),
                lambda e: [EnvAssertion(env_type="assistant", func_name="assert_no_overdue_bill",
                                        arguments={"overdue_bill_id": OVERDUE_BILL},
                                        message="Overdue bill is not as expected")]),
           NO_SERVICE),
    Intent("mobile_data_issue", _DATA, _DATA[1:],
           both(on_user("assert_mobile_data_status", expected_status=True),
                on_user("assert_internet_speed", expected_speed=200, expected_desc="excellent")),
           both(on_user("assert_mobile_data_status", expected_status=False),
                on_user("assert_internet_speed", expected_speed=0, expected_desc=None))),
    Intent("mms_issue", _MMS, _MMS[-4:], on_user("assert_can_send_mms", expected_status=True), NONE),
)}
ORDER = ("mobile_data_issue", "service_issue", "mms_issue")  # the full set's order of intents


def subtask(issue: Issue) -> Subtask:
    """The issue as a composable subtask: its init runs the setup steps in the workbench and checks them."""
    return Subtask(issue.name, GROUP_OF[issue.name], lambda box, e: set_up(box, issue, e),
                   issue.fix or (lambda e: []), issue.extra, fixable=issue.fix is not None)


def handoff(intent: Intent) -> Subtask:
    """What a task with an unfixable issue is solved by (a transfer), and what must then still hold."""
    return Subtask("transfer", "handoff", lambda box, e: None, lambda e: [TRANSFER], intent.failure)


def set_up(box: Any, issue: Issue, e: Entity) -> None:
    """Run the issue's setup steps on `box` (evalsuite.domains.tau2_telecom.workbench), then require its setup
    checks."""
    for call in issue.setup(e):
        box.initialize(call)
    if not box.holds(issue.checks(e)):
        raise AssertionError(f"issue {issue.name}: a setup check fails right after its setup")


def groups_of(intent: Intent) -> Mapping[str, Sequence[Subtask]]:
    return {g: [subtask(i) for i in GROUPS[g]] for g in intent.groups}
