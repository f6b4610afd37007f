"""The mobile-service subtasks: what each breaks, the calls that fix it, and the rows that prove it fixed.

Groups hold mutually exclusive alternatives (two ways to get data back, three roaming faults); intents name
the groups a composite must draw from (at least one) and may add. The status checks (service, mobile data,
MMS working) read both the carrier's records and the phone, as the customer would experience them.
"""
from __future__ import annotations

from sqlalchemy import text, update

from evalsuite.core.records import Assertion, DomainCheck, ToolCall
from evalsuite.domains.mobile_service import schema as s
from evalsuite.tasks.composition import Entity, Subtask

BASE_PLAN, BIGGER_PLAN = "P-BASIC", "P-PLUS"
REFUEL_GB = 2


def _device(**values):
    return lambda conn, e: conn.execute(
        update(s.devices).where(s.devices.c.device_id == e["device_id"]).values(**values))


def _line(**values):
    return lambda conn, e: conn.execute(update(s.lines).where(s.lines.c.line_id == e["line_id"]).values(**values))


def _bill(**values):
    return lambda conn, e: conn.execute(update(s.bills).where(s.bills.c.bill_id == e["bill_id"]).values(**values))


def _both(*fns):
    def init(conn, e):
        for fn in fns:
            fn(conn, e)
    return init


def _user(tool: str):
    return lambda e: [ToolCall(tool=tool, arguments={"device_id": e["device_id"]}, actor="user")]


def _dev_goal(clause: str, **expect):
    return lambda e: [Assertion(table="devices", key={"device_id": e["device_id"]}, expect=expect, clause=clause)]


def _line_goal(clause: str, **expect):
    return lambda e: [Assertion(table="lines", key={"line_id": e["line_id"]}, expect=expect, clause=clause)]


def _suspended_fix(e: Entity) -> list[ToolCall]:
    return [ToolCall(tool="pay_overdue_bill", arguments={"bill_id": e["bill_id"]}),
            ToolCall(tool="resume_line", arguments={"line_id": e["line_id"]})]


def _suspended_goal(e: Entity) -> list[Assertion]:
    return [Assertion(table="bills", key={"bill_id": e["bill_id"]}, expect={"status": "paid"}, clause="MS-3"),
            Assertion(table="lines", key={"line_id": e["line_id"]}, expect={"status": "active"}, clause="MS-3")]


def _roaming(name: str, init, calls, goal) -> Subtask:
    return Subtask(name, "roaming", _both(_device(abroad=1), init), calls, goal)


def _roaming_goal_both(e: Entity) -> list[Assertion]:
    return _dev_goal("MS-6", data_roaming=1)(e) + _line_goal("MS-6", roaming_enabled=1)(e)


SUBTASKS: list[Subtask] = [
    Subtask("airplane_mode_on", "airplane", _device(airplane_mode=1), _user("turn_off_airplane_mode"),
            _dev_goal("MS-8", airplane_mode=0)),
    Subtask("sim_unseated", "sim", _device(sim_seated=0), _user("reseat_sim_card"),
            _dev_goal("MS-8", sim_seated=1)),
    Subtask("line_suspended_overdue", "suspension", _both(_line(status="suspended"), _bill(status="overdue")),
            _suspended_fix, _suspended_goal),
    Subtask("mobile_data_off", "mobile_data", _device(mobile_data=0), _user("turn_on_mobile_data"),
            _dev_goal("MS-8", mobile_data=1)),
    Subtask("data_exhausted_refuel", "data_allowance", _line(data_used_gb=5),
            lambda e: [ToolCall(tool="refuel_data", arguments={"line_id": e["line_id"], "gb": REFUEL_GB})],
            _line_goal("MS-4", data_refuel_gb=REFUEL_GB)),
    Subtask("data_exhausted_upgrade", "data_allowance", _line(data_used_gb=5),
            lambda e: [ToolCall(tool="change_plan", arguments={"line_id": e["line_id"], "plan_id": BIGGER_PLAN})],
            _line_goal("MS-5", plan_id=BIGGER_PLAN)),
    _roaming("abroad_phone_roaming_off", _line(roaming_enabled=1), _user("turn_on_data_roaming"),
             _dev_goal("MS-6", data_roaming=1)),
    _roaming("abroad_line_roaming_off", _device(data_roaming=1),
             lambda e: [ToolCall(tool="enable_roaming", arguments={"line_id": e["line_id"]})],
             _line_goal("MS-6", roaming_enabled=1)),
    _roaming("abroad_both_roaming_off", lambda conn, e: None,
             lambda e: [ToolCall(tool="enable_roaming", arguments={"line_id": e["line_id"]}),
                        *_user("turn_on_data_roaming")(e)], _roaming_goal_both),
    Subtask("apn_broken", "apn", _device(apn="wap.old"), _user("reset_apn_settings"),
            _dev_goal("MS-8", apn="internet")),
    Subtask("mms_off", "mms", _device(mms_enabled=0), _user("turn_on_mms"), _dev_goal("MS-8", mms_enabled=1)),
]
GROUPS: dict[str, list[Subtask]] = {}
for _t in SUBTASKS:
    GROUPS.setdefault(_t.group, []).append(_t)

SERVICE = ["airplane", "sim", "suspension"]
DATA = ["mobile_data", "data_allowance", "roaming", "apn"]
# intent: (groups a composite must draw from, groups it may add); solutions run service first, MMS last
INTENTS: dict[str, tuple[list[str], list[str]]] = {
    "service_issue": (SERVICE, []),
    "mobile_data_issue": (DATA, SERVICE),
    "mms_issue": (["mms"], [*DATA, *SERVICE]),
}
ORDER = [*SERVICE, *DATA, "mms"]


def extra_checks(subtask: Subtask, e: Entity, refuel_price) -> list[DomainCheck]:
    """What a row cannot show: the charge for refuelled data must be told to the customer (MS-4)."""
    if subtask.name == "data_exhausted_refuel":
        return [DomainCheck(name="told_user", params={"value": f"{refuel_price * REFUEL_GB}"}, clause="MS-4")]
    return []


_STATUS = text("SELECT d.airplane_mode, d.sim_seated, l.status, d.mobile_data, d.apn, l.data_used_gb, p.data_gb, "
               "l.data_refuel_gb, d.abroad, l.roaming_enabled, d.data_roaming, d.mms_enabled FROM lines l "
               "JOIN devices d ON d.device_id = l.device_id JOIN plans p ON p.plan_id = l.plan_id "
               "WHERE l.line_id = :line")


def working(conn, intent: str, e: Entity) -> bool:
    """The intent's status as the customer experiences it: service, then mobile data, then MMS (one query:
    verification asks this thousands of times)."""
    (airplane, sim, status, data_on, apn, used, allowance, refuel, abroad, line_roaming, phone_roaming,
     mms) = conn.execute(_STATUS, {"line": e["line_id"]}).one()
    service = not airplane and sim and status == "active"
    if intent == "service_issue" or not service:
        return bool(service)
    data = (data_on and apn == "internet" and used < allowance + refuel
            and (not abroad or (line_roaming and phone_roaming)))
    return bool(data and (intent == "mobile_data_issue" or mms))
