"""The customer's phone: the user-side world's tools. Each returns only human-readable text, as a person
reading their screen would report it; only the user runs them (the agent asks)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select, update

from evalsuite.domains.mobile_service import schema as s
from evalsuite.worlds.domain import Domain, ToolContext, ToolError, mapping_rows

USER_DOMAIN = Domain(name="mobile_service_device", version="1.0.0", metadata=s.device_metadata)


class DeviceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    device_id: str


def _device(ctx: ToolContext, device_id: str) -> dict:
    found = mapping_rows(ctx.execute(select(s.devices).where(s.devices.c.device_id == device_id)))
    if not found:
        raise ToolError(f"no phone {device_id}")
    return found[0]


def _set(ctx: ToolContext, device_id: str, **values) -> None:
    _device(ctx, device_id)
    ctx.execute(update(s.devices).where(s.devices.c.device_id == device_id).values(**values))


def _on(flag: int) -> str:
    return "on" if flag else "off"


@USER_DOMAIN.tool("read")
def check_status_bar(ctx: ToolContext, args: DeviceArgs) -> str:
    """What the top of the phone's screen shows."""
    d = _device(ctx, args.device_id)
    if d["airplane_mode"]:
        return "I see an airplane icon and no signal bars."
    if not d["sim_seated"]:
        return "It says 'No SIM' and there are no signal bars."
    data = "and a 4G icon" if d["mobile_data"] else "but no 4G icon"
    return f"I see signal bars {data}." + (" There's an R next to the bars." if d["abroad"] else "")


@USER_DOMAIN.tool("read")
def check_network_settings(ctx: ToolContext, args: DeviceArgs) -> str:
    """The phone's mobile-network settings screen, read out."""
    d = _device(ctx, args.device_id)
    return (f"Mobile data is {_on(d['mobile_data'])}, data roaming is {_on(d['data_roaming'])}, "
            f"the access point name says '{d['apn']}', and MMS messaging is {_on(d['mms_enabled'])}.")


@USER_DOMAIN.tool("write")
def turn_off_airplane_mode(ctx: ToolContext, args: DeviceArgs) -> str:
    """Switch airplane mode off."""
    _set(ctx, args.device_id, airplane_mode=0)
    return "Done, airplane mode is off now."


@USER_DOMAIN.tool("write")
def reseat_sim_card(ctx: ToolContext, args: DeviceArgs) -> str:
    """Take the SIM card out and push it back in firmly."""
    _set(ctx, args.device_id, sim_seated=1)
    return "I took the SIM out and pushed it back in. It clicked."


@USER_DOMAIN.tool("write")
def turn_on_mobile_data(ctx: ToolContext, args: DeviceArgs) -> str:
    """Switch mobile data on."""
    _set(ctx, args.device_id, mobile_data=1)
    return "Mobile data is on now."


@USER_DOMAIN.tool("write")
def turn_on_data_roaming(ctx: ToolContext, args: DeviceArgs) -> str:
    """Switch data roaming on in the phone's settings."""
    _set(ctx, args.device_id, data_roaming=1)
    return "Data roaming is switched on."


@USER_DOMAIN.tool("write")
def reset_apn_settings(ctx: ToolContext, args: DeviceArgs) -> str:
    """Reset the access point settings to the carrier's defaults (this also restores MMS to on)."""
    _set(ctx, args.device_id, apn="internet", mms_enabled=1)
    return "I pressed 'Reset to default' on the access point screen."


@USER_DOMAIN.tool("write")
def turn_on_mms(ctx: ToolContext, args: DeviceArgs) -> str:
    """Switch MMS (picture messaging) on."""
    _set(ctx, args.device_id, mms_enabled=1)
    return "MMS is on now."


# Who asks for what: the phrases an agent's message must contain for the scripted user to run each tool.
ASKED_BY = {
    "check_status_bar": [r"status bar", r"signal", r"top of (your|the) screen"],
    "check_network_settings": [r"network settings", r"settings screen"],
    "turn_off_airplane_mode": [r"airplane|flight mode"],
    "reseat_sim_card": [r"\bsim\b"],
    "turn_on_mobile_data": [r"mobile data|cellular data"],
    "turn_on_data_roaming": [r"data roaming"],
    "reset_apn_settings": [r"\bapn\b|access point"],
    "turn_on_mms": [r"\bmms\b|picture messag"],
}
