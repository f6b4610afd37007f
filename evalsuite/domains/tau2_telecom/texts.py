"""The words of a composed τ²-bench telecom task, as its task file has them: the personas, and per intent the
purpose, the reason for the call, what the user will accept and the no-user ticket.

They vary by intent and, for mobile data and MMS, by where the user is (abroad when a setup step puts them
there). Every task in the file is willing to refuel 2.0 GB; the file holds no task whose wording could say
otherwise (those holding `data_usage_exceeded_no_refuel` were deleted), so no other wording is known.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EASY = """
As a 41-year-old office administrator, you use your cellphone daily for both work and personal tasks. While \
you're familiar with common phone functions, you wouldn't call yourself a tech enthusiast.

Your technical skills are average - you handle standard smartphone features like calls, texts, email, and basic \
apps with ease. You understand the fundamental settings, but prefer clear, step-by-step guidance when trying \
something new.

In interactions, you're naturally friendly and patient. When receiving help, you listen attentively and aren't \
afraid to ask questions. You make sure to confirm your understanding and provide detailed feedback on each \
instruction you receive.
"""
HARD = """
At 64 years old, you're a retired librarian who keeps your phone use simple - mainly for calls, texts, and \
capturing photos of your grandchildren. Technology in general makes you feel uneasy and overwhelmed.

Your technical knowledge is quite limited. Step-by-step instructions often confuse you, and technical terms like \
"VPN" or "APN" might as well be a foreign language. You only share information when specifically asked.

When dealing with technology, you tend to get flustered quickly. You need constant reassurance and often \
interrupt with anxious questions. Simple requests like "reboot the phone" can trigger worries about losing \
precious photos.
"""
# persona label (as the task id writes it): its text; assigned cyclically in this order
PERSONAS: dict[str, str | None] = {"None": None, "Easy": EASY, "Hard": HARD}

ABROAD, HOME = "abroad in France", "at home in the United States"
WHO = "You are {name} with phone number {phone_number}."
REFUEL = "You are willing to refuel 2.0 GB of data if necessary, but you do not want to change your mobile data plan. "
FIRST = ("If the agent suggests actions that don't immediately fix the issue, follow their guidance but express mild "
         "frustration after the first unsuccessful attempt. ")
LAST = ("If the tool call does not return updated status information, you might need to perform another tool call to "
        "get the updated status. \nWhenever the agent asks you about your device, always ground your responses on "
        "the results of tool calls. \nFor example: If the agent asks what the status bar shows, always ground your "
        "response on the results of the `get_status_bar` tool call. If the agent asks if you are able to send an MMS "
        "message, always ground your response on the results of the `can_send_mms` tool call.\nNever make up the "
        "results of tool calls, always ground your responses on the results of tool calls.\nIf you are unsure about "
        "whether an action is necessary, always ask the agent for clarification.\n")
CUSTOMER = "Customer name: {name}, phone number: {phone_number}"
LOCATED = CUSTOMER + ", current location: {location}. "

INTENT_TEXTS: dict[str, dict[str, str]] = {
    "service_issue": {
        "purpose": "Test resolution path: No Service/Connection Issues.",
        "reason_for_call": "Your phone has been showing 'No Service' for the past few hours.",
        "known_info": WHO,
        "accepts": "You will consider the issue resolved when the status bar shows that you have signal. Always "
                   "check the status bar if the agent asks you for status information. If the agent asks you to pay "
                   "a bill, you accept. ",
        "ticket": "The user is experiencing issues with their phone service. They are unable to make or receive "
                  "calls, and the status bar shows 'No Service'. " + CUSTOMER + ". They gave permission to pay all "
                  "their overdue bills. They will consider the issue resolved when the status bar shows that they "
                  "have signal.",
    },
    "mobile_data_issue": {
        "purpose": "Test resolution path: Mobile Data/Slow Internet Issues.",
        "reason_for_call": "You mobile data is not working properly. It either stops working or is very slow. You "
                           "want to fix it and absolutely want to get excellent internet speed on your phone. You are "
                           "not willing to accept any other internet speed (poor, fair or good). You do not have "
                           "access to wifi.",
        "known_info": WHO + " You are currently {location}.",
        "accepts": "You will consider the issue resolved only when speed test returns excellent internet speed and "
                   "nothing else. If it returns poor, fair or good, you will not consider the issue resolved. "
                   + REFUEL,
        "ticket": "The user is experiencing issues with their mobile data. They are unable to use their phone to "
                  "browse the internet, and the status bar shows 'No Service'. " + LOCATED + "They will consider the "
                  "issue resolved when speed test returns excellent internet speed. They will not change their "
                  "mobile data plan but they will refuel 2.0 GB of data if necessary.",
    },
    "mms_issue": {
        "purpose": "Test resolution path: MMS (Picture/Group Messaging) Issues.",
        "reason_for_call": "You are unable to send MMS messages using your messaging app for the past few hours. You "
                           "want to fix it and successfully send an MMS message.",
        "known_info": WHO + " You are currently {location}.",
        "accepts": REFUEL,
        "ticket": "The user has been unable to send MMS messages using their messaging app for the past few hours. "
                  + LOCATED + "They will consider the issue resolved when an MMS message can be successfully sent.",
    },
}


def scenario(intent: str, persona: str, who: Mapping[str, Any], abroad: bool) -> dict[str, Any]:
    """The task's description, user scenario and ticket (the fields of its record that are words)."""
    words = INTENT_TEXTS[intent]
    values = {**who, "location": ABROAD if abroad else HOME}
    return {"description": {"purpose": words["purpose"], "relevant_policies": None, "notes": None},
            "user_scenario": {"persona": PERSONAS[persona], "instructions": {
                "domain": "telecom", "reason_for_call": words["reason_for_call"],
                "known_info": words["known_info"].format(**values), "unknown_info": None,
                "task_instructions": FIRST + words["accepts"] + LAST}},
            "ticket": words["ticket"].format(**values)}
