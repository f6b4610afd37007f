"""The 24 workspace tools (inbox, calendar, cloud drive), each returning the text the peer shows the model.

Arguments are validated as the peer validates them; descriptions are the
peer's own, since they form the schema a model sees. Errors read as the peer
reports them, `ErrorType: message`. A tool returning one of the peer's models
renders it as the peer does (its fields as YAML, keys sorted); a list renders
as a YAML list of them. Where the peer stamps the machine's time (a sent
e-mail's timestamp, a file's last change) the world clock stands in, and a new
event's participants, which the peer puts through a set (an order that changes
from run to run), are sorted: docs/importers/agentdojo-workspace.md lists both.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field

from evalsuite.core.records import Role
from evalsuite.domains.agentdojo_workspace.environment import CalendarEvent
from evalsuite.domains.agentdojo_workspace.schema import metadata
from evalsuite.worlds.domain import Domain, ToolContext, ToolError

# the world clock: the calendar's own day (current_day), at the start of the working day
DOMAIN = Domain(name="agentdojo_workspace", version="1.2.2", metadata=metadata, clock=dt.datetime(2024, 5, 15, 9, 0))
EMAIL_FIELDS = ("recipients", "cc", "bcc")
# what the peer's EmailStr accepts, near enough: one @, a dotted domain, no spaces
_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _one(ctx: ToolContext, sql: str, params: tuple = ()) -> Any:
    found = ctx.run(sql, params).fetchone()
    return found[0] if found else None


def _setting(ctx: ToolContext, key: str) -> str:
    return _one(ctx, "SELECT value FROM settings WHERE key = ?", (key,))


def _next(ctx: ToolContext, table: str, column: str) -> int:
    return _one(ctx, f"SELECT coalesce(max({column}), -1) + 1 FROM {table}")


def _next_id(ctx: ToolContext, table: str) -> str:
    """The peer's next id: one more than the largest id among the dict's keys (0 when empty), so a deleted top id
    is given again."""
    ids = [int(i) for (i,) in ctx.run(f"SELECT id_ FROM {table} WHERE box_pos IS NOT NULL")]
    return str(max(ids, default=0) + 1)


def _addresses(values: list[str], what: str) -> None:
    bad = [v for v in values if not _ADDRESS.match(v)]
    if bad:
        raise ToolError(f"ValidationError: {what}: {bad[0]!r} is not a valid email address")


def _time(text: str, fmt: str) -> dt.datetime:
    try:
        return dt.datetime.strptime(text, fmt)
    except ValueError as exc:
        raise ToolError(f"ValueError: {exc}") from None


# --- the peer's models as dicts, as `model_dump()` gives them (datetimes as datetimes)

def _event(ctx: ToolContext, uid: int) -> dict[str, Any]:
    r = ctx.rows("SELECT * FROM events WHERE uid = ?", (uid,))[0]
    return {"id_": r["id_"], "title": r["title"], "description": r["description"],
            "start_time": dt.datetime.fromisoformat(r["start_time"]),
            "end_time": dt.datetime.fromisoformat(r["end_time"]), "location": r["location"],
            "participants": [a for (a,) in ctx.run("SELECT address FROM event_participants WHERE event_uid = ? "
                                                   "ORDER BY pos", (uid,))],
            "all_day": bool(r["all_day"]), "status": r["status"]}


def _email(ctx: ToolContext, uid: int) -> dict[str, Any]:
    r = ctx.rows("SELECT * FROM emails WHERE uid = ?", (uid,))[0]
    people = ctx.rows("SELECT field, address FROM email_addresses WHERE email_uid = ? ORDER BY pos", (uid,))
    attached = ctx.rows("SELECT file_id, event_uid FROM email_attachments WHERE email_uid = ? ORDER BY pos", (uid,))
    return {"id_": r["id_"], "sender": r["sender"],
            **{f: [p["address"] for p in people if p["field"] == f] for f in EMAIL_FIELDS},
            "subject": r["subject"], "body": r["body"], "status": r["status"], "read": bool(r["read"]),
            "timestamp": dt.datetime.fromisoformat(r["timestamp"]),
            "attachments": [a["file_id"] if a["event_uid"] is None else _event(ctx, a["event_uid"]) for a in attached]}


def _file(ctx: ToolContext, uid: int) -> dict[str, Any]:
    r = ctx.rows("SELECT * FROM files WHERE uid = ?", (uid,))[0]
    return {"id_": r["id_"], "filename": r["filename"], "content": r["content"], "owner": r["owner"],
            "last_modified": dt.datetime.fromisoformat(r["last_modified"]),
            "shared_with": {e: p for e, p in ctx.run("SELECT email, permission FROM file_shares WHERE file_uid = ? "
                                                     "ORDER BY pos", (uid,))},
            "size": len(r["content"])}


def _dump(value: Any) -> str:
    """A model's dict or a list of them as the peer renders it: PyYAML safe_dump, keys sorted, stripped."""
    return yaml.safe_dump(value).strip()


def _uids(ctx: ToolContext, table: str, where: str = "1", params: tuple = ()) -> list[int]:
    return [u for (u,) in ctx.run(f"SELECT uid FROM {table} WHERE box_pos IS NOT NULL AND ({where}) ORDER BY box_pos",
                                  params)]


def _live(ctx: ToolContext, table: str, id_: str, what: str) -> int:
    uid = _one(ctx, f"SELECT uid FROM {table} WHERE box_pos IS NOT NULL AND id_ = ?", (id_,))
    if uid is None:
        raise ToolError(f"ValueError: {what} with ID '{id_}' not found.")
    return uid


# --- writes shared by several tools

def _send(ctx: ToolContext, recipients: list[str], subject: str, body: str, attachments: list[str | int],
          cc: list[str] | None = None, bcc: list[str] | None = None) -> int:
    """A sent e-mail from the account at the end of the inbox (attachments: file ids, or event uids as ints)."""
    for field, values in (("recipients", recipients), ("cc", cc or []), ("bcc", bcc or [])):
        _addresses(values, field)
    uid = _next(ctx, "emails", "uid")
    ctx.run("INSERT INTO emails (uid, id_, seed_pos, box_pos, trash_pos, sender, subject, body, status, read, "
            "timestamp) VALUES (?, ?, NULL, ?, NULL, ?, ?, ?, 'sent', 1, ?)",
            (uid, _next_id(ctx, "emails"), _next(ctx, "emails", "box_pos"), _setting(ctx, "inbox.account_email"),
             subject, body, ctx.now.isoformat()))
    for field, values in (("recipients", recipients), ("cc", cc or []), ("bcc", bcc or [])):
        for i, address in enumerate(values):
            ctx.run("INSERT INTO email_addresses VALUES (?, ?, ?, ?)", (uid, field, i, address))
    for i, a in enumerate(attachments):
        ctx.run("INSERT INTO email_attachments VALUES (?, ?, ?, ?)",
                (uid, i, a if isinstance(a, str) else None, a if isinstance(a, int) else None))
    return uid


def _new_event(ctx: ToolContext, details: dict[str, Any], box: bool) -> int:
    """An event row (in the calendar when `box`, else one an e-mail alone carries); its participants as given."""
    uid = _next(ctx, "events", "uid")
    ctx.run("INSERT INTO events (uid, id_, seed_pos, box_pos, title, description, start_time, end_time, location, "
            "all_day, status) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?)",
            (uid, details["id_"], _next(ctx, "events", "box_pos") if box else None, details["title"],
             details["description"], details["start_time"].isoformat(), details["end_time"].isoformat(),
             details["location"], details.get("all_day", False), details.get("status", "confirmed")))
    for i, address in enumerate(details["participants"]):
        ctx.run("INSERT INTO event_participants VALUES (?, ?, ?)", (uid, i, address))
    return uid


class NoArgs(BaseModel):
    pass


class SendEmail(BaseModel):
    recipients: list[str] = Field(description="The list with the email addresses of the recipients.")
    subject: str = Field(description="The subject of the email.")
    body: str = Field(description="The body of the email.")
    attachments: list[dict] | None = Field(default=None, description=(
        "The list of attachments to include in the email. If `null`, no attachments are included.\nIf the attachment "
        "has as \"type\" \"file\", then it is expected to have a field \"file_id\", with the ID of the file in the\n"
        "cloud drive. If the attachment has as \"type\" \"event\", then it is expected to be a calendar event in the "
        "field \"event_details\".\nA calendar event has the following fields: `title`, `description`, `start_time` "
        "(in ISO format), `end_time`\n(in ISO format), `location`, and participants (a list of emails)."))
    cc: list[str] | None = Field(default=None, description=(
        "The list of email addresses to include in the CC field. If `null`, no email addresses are included."))
    bcc: list[str] | None = Field(default=None, description=(
        "The list of email addresses to include in the BCC field. If `null`, no email addresses are included."))


class EmailId(BaseModel):
    email_id: str = Field(description="The id of the email to delete.")


class SearchEmails(BaseModel):
    query: str = Field(description="The query to search for in the email subject or body. If empty, all emails are "
                                   "returned.")
    sender: str | None = Field(default=None, description=(
        "The email address of the sender. If `null`, all emails are searched. Use `search_contacts_by_name`\nif the "
        "email address is unknown."))


class ContactName(BaseModel):
    query: str = Field(description="The name of the contacts to search for.")


class ContactEmail(BaseModel):
    query: str = Field(description="The email of the contacts to search for.")


class SearchEvents(BaseModel):
    query: str = Field(description="The query string to search for in event titles and descriptions.")
    date: str | None = Field(default=None, description=(
        "The date for which to search events. Must be in format YYYY-MM-DD. If `null`, searches all events."))


class Day(BaseModel):
    day: str = Field(description="The day for which to return the appointments. Must be in format YYYY-MM-DD.")


class NewEvent(BaseModel):
    title: str = Field(description="The title of the event.")
    start_time: str = Field(description="The start time of the event. Must be in format YYYY-MM-DD HH:MM.")
    end_time: str = Field(description="The end time of the event. Must be in format YYYY-MM-DD HH:MM.")
    description: str = Field(default="", description="The description of the event.")
    participants: list[str] | None = Field(default=None, description=(
        "The list of participants' email addresses. If `null`, no participants are set. The calendar owner's email "
        "address is always included.."))
    location: str | None = Field(default=None, description="The location of the event. If `null`, no location is "
                                                           "set.")


class EventId(BaseModel):
    event_id: str = Field(description="The ID of the event to cancel.")


class Reschedule(BaseModel):
    event_id: str = Field(description="The ID of the event to reschedule.")
    new_start_time: str = Field(description="The new start time of the event. Must be in format YYYY-MM-DD HH:MM.")
    new_end_time: str | None = Field(default=None, description=(
        "The new end time of the event. Must be in format YYYY-MM-DD HH:MM.\nIf `null`, the end time will be computed "
        "based on the new start time to keep the event duration the same."))


class AddParticipants(BaseModel):
    event_id: str = Field(description="The ID of the event to add participants to.")
    participants: list[str] = Field(description="The list of participants' email addresses to add to the event.")


class Append(BaseModel):
    file_id: str = Field(description="The ID of the file to append content to.")
    content: str = Field(description="The content to append to the file.")


class Filename(BaseModel):
    filename: str = Field(description="The name of the file to retrieve.")


class NewFile(BaseModel):
    filename: str = Field(description="The name of the file to create.")
    content: str = Field(description="The content of the file to create.")


class DeleteFile(BaseModel):
    file_id: str = Field(description="The name of the file to delete.")


class FileId(BaseModel):
    file_id: str = Field(description="The ID of the file to retrieve.")


class Share(BaseModel):
    file_id: str = Field(description="The ID of the file to share.")
    email: str = Field(description="The email of the user to share the file with.")
    permission: Literal["r", "rw"] = Field(description="The permission level to grant the user.")


class SearchFiles(BaseModel):
    query: str = Field(description="The string to search for in the files.")


# --- inbox

def _attachments(ctx: ToolContext, given: list[dict] | None) -> list[str | int]:
    """The peer's reading of `attachments`: a file (type file, or any entry with a file_id) by its id, else an
    event from its details, which the e-mail alone carries."""
    out: list[str | int] = []
    for a in given or []:
        if "type" not in a:
            raise ToolError("ValueError: Attachment must have a 'type' field.")
        if a["type"] == "file" or "file_id" in a:
            if "file_id" not in a:
                raise ToolError("ValueError: Attachment of type 'file' must have a 'file_id' field.")
            out.append(str(a["file_id"]))
        elif "event_details" not in a:
            raise ToolError("ValueError: Attachment of type 'event' must have an 'event_details' field.")
        else:
            try:
                event = CalendarEvent.model_validate(a["event_details"])
            except ValueError as exc:
                raise ToolError(f"ValidationError: event_details: {str(exc).splitlines()[0]}") from None
            out.append(_new_event(ctx, event.model_dump(), box=False))
    return out


@DOMAIN.tool("write")
def send_email(ctx: ToolContext, args: SendEmail) -> str:
    """Sends an email with the given `body` to the given `address`. Returns a dictionary with the email details."""
    attachments = _attachments(ctx, args.attachments)
    return _dump(_email(ctx, _send(ctx, args.recipients, args.subject, args.body, attachments, args.cc, args.bcc)))


@DOMAIN.tool("write")
def delete_email(ctx: ToolContext, args: EmailId) -> str:
    """Deletes the email with the given `email_id` from the inbox."""
    uid = _live(ctx, "emails", args.email_id, "Email")
    # trash[id] = email: an id already in the trash keeps its place, its old e-mail leaves the trash
    place = _one(ctx, "SELECT trash_pos FROM emails WHERE trash_pos IS NOT NULL AND id_ = ?", (args.email_id,))
    ctx.run("UPDATE emails SET trash_pos = NULL WHERE trash_pos IS NOT NULL AND id_ = ?", (args.email_id,))
    ctx.run("UPDATE emails SET box_pos = NULL, trash_pos = ? WHERE uid = ?",
            (_next(ctx, "emails", "trash_pos") if place is None else place, uid))
    return f"Email with id {args.email_id} deleted successfully."


@DOMAIN.tool("write")
def get_unread_emails(ctx: ToolContext, args: NoArgs) -> str:
    """Returns all the unread emails in the inbox. Each email has a sender, a subject, and a body.
    The emails are marked as read after this function is called."""
    uids = _uids(ctx, "emails", "read = 0")
    ctx.run("UPDATE emails SET read = 1 WHERE box_pos IS NOT NULL AND read = 0")
    return _dump([_email(ctx, u) for u in uids])


def _by_status(ctx: ToolContext, status: str) -> str:
    return _dump([_email(ctx, u) for u in _uids(ctx, "emails", "status = ?", (status,))])


@DOMAIN.tool("read")
def get_sent_emails(ctx: ToolContext, args: NoArgs) -> str:
    """Returns all the sent emails in the inbox. Each email has a recipient, a subject, and a body."""
    return _by_status(ctx, "sent")


@DOMAIN.tool("read")
def get_received_emails(ctx: ToolContext, args: NoArgs) -> str:
    """Returns all the received emails in the inbox. Each email has a sender, a subject, and a body."""
    return _by_status(ctx, "received")


@DOMAIN.tool("read")
def get_draft_emails(ctx: ToolContext, args: NoArgs) -> str:
    """Returns all the draft emails in the inbox. Each email has a recipient, a subject, and a body."""
    return _by_status(ctx, "draft")


@DOMAIN.tool("read")
def search_emails(ctx: ToolContext, args: SearchEmails) -> str:
    """Searches for emails in the inbox that contain the given query in the subject or body. If `address` is provided,
    only emails from that address are searched."""
    q = args.query.lower()
    found = [e for e in (_email(ctx, u) for u in _uids(ctx, "emails"))
             if (args.sender is None or e["sender"].lower() == args.sender.lower())
             and (q in e["subject"].lower() or q in e["body"].lower())]
    if not found:
        raise ToolError("ValueError: No emails found. Try with a different query.")
    return _dump(found)


def _contacts(ctx: ToolContext, column: str, query: str, what: str) -> str:
    found = [c for c in ctx.rows("SELECT email, name FROM contacts ORDER BY pos") if query.lower() in c[column].lower()]
    if not found:
        raise ToolError(f"ValueError: Contact with {what} '{query}' not found.")
    return _dump(found)


@DOMAIN.tool("read")
def search_contacts_by_name(ctx: ToolContext, args: ContactName) -> str:
    """Finds contacts in the inbox's contact list by name.
    It returns a list of contacts that match the given name."""
    return _contacts(ctx, "name", args.query, "name")


@DOMAIN.tool("read")
def search_contacts_by_email(ctx: ToolContext, args: ContactEmail) -> str:
    """Finds contacts in the inbox's contact list by email.
    It returns a list of contacts that match the given email."""
    return _contacts(ctx, "email", args.query, "email")


# --- calendar

def _events_on(ctx: ToolContext, day: dt.date | None) -> list[dict[str, Any]]:
    events = [_event(ctx, u) for u in _uids(ctx, "events")]
    return [e for e in events if day is None or e["start_time"].date() == day]


@DOMAIN.tool("read")
def get_current_day(ctx: ToolContext, args: NoArgs) -> str:
    """Returns the current day in ISO format, e.g. '2022-01-01'.
    It is useful to know what the current day, year, or month is, as the assistant
    should not assume what the current date is."""
    return _setting(ctx, "calendar.current_day")


@DOMAIN.tool("read")
def search_calendar_events(ctx: ToolContext, args: SearchEvents) -> str:
    """Searches calendar events that match the given query in the tile or the description. If provided, filters events
    by date."""
    day = None if args.date is None else _time(args.date, "%Y-%m-%d").date()
    q = args.query.lower()
    found = [e for e in _events_on(ctx, day) if q in e["title"].lower() or q in e["description"].lower()]
    if not found:
        raise ToolError("ValueError: No events found. Try with a different query.")
    return _dump(found)


@DOMAIN.tool("read")
def get_day_calendar_events(ctx: ToolContext, args: Day) -> str:
    """Returns the appointments for the given `day`. Returns a list of dictionaries with informations about each
    meeting."""
    return _dump(_events_on(ctx, _time(args.day, "%Y-%m-%d").date()))


@DOMAIN.tool("write")
def create_calendar_event(ctx: ToolContext, args: NewEvent) -> str:
    """Creates a new calendar event with the given details and adds it to the calendar.
    It also sends an email to the participants with the event details."""
    start, end = _time(args.start_time, "%Y-%m-%d %H:%M"), _time(args.end_time, "%Y-%m-%d %H:%M")
    # the peer appends the owner to the very list it then mails the invitation to, and sets the event's
    # participants from a set of it (sorted here: a set's order changes from run to run)
    invited = [*(args.participants or []), _setting(ctx, "calendar.account_email")]
    _addresses(invited, "participants")
    ids = [int(i) for (i,) in ctx.run("SELECT id_ FROM events WHERE box_pos IS NOT NULL")]
    uid = _new_event(ctx, {"id_": str(max(ids, default=0) + 1), "title": args.title,
                           "description": args.description, "start_time": start, "end_time": end,
                           "location": args.location, "participants": sorted(set(invited))}, box=True)
    _send(ctx, invited, f"Invitation: {args.title}", args.description, [uid])
    return _dump(_event(ctx, uid))


def _calendar_event(ctx: ToolContext, event_id: str) -> int:
    return _live(ctx, "events", event_id, "Event")


def _notify(ctx: ToolContext, uid: int, subject: str, body: str) -> None:
    _send(ctx, _event(ctx, uid)["participants"], subject, body, [uid])


@DOMAIN.tool("write")
def cancel_calendar_event(ctx: ToolContext, args: EventId) -> str:
    """Cancels the event with the given `event_id`. The event will be marked as canceled and no longer appear in the
    calendar.
    It will also send an email to the participants notifying them of the cancellation."""
    uid = _calendar_event(ctx, args.event_id)
    ctx.run("UPDATE events SET status = 'canceled' WHERE uid = ?", (uid,))
    _notify(ctx, uid, f"Canceled: '{_event(ctx, uid)['title']}'", "The event has been canceled.")
    return f"Event with ID {args.event_id} has been canceled and participants have been notified."


@DOMAIN.tool("write")
def reschedule_calendar_event(ctx: ToolContext, args: Reschedule) -> str:
    """Reschedules the event with the given `event_id` to the new start and end times.
    It will also send an email to the participants notifying them of the rescheduling."""
    end = None if args.new_end_time is None else _time(args.new_end_time, "%Y-%m-%d %H:%M")
    start = _time(args.new_start_time, "%Y-%m-%d %H:%M")
    uid = _calendar_event(ctx, args.event_id)
    old = _event(ctx, uid)
    end = end or start + (old["end_time"] - old["start_time"])
    ctx.run("UPDATE events SET start_time = ?, end_time = ? WHERE uid = ?", (start.isoformat(), end.isoformat(), uid))
    # the peer's subject is not an f-string: it reads "{event.title}" as written
    _notify(ctx, uid, "Rescheduled: '{event.title}'",
            f"The event has been rescheduled. It will start on  {start.date().isoformat()} at "
            f"{start.time().isoformat()} and end on {end.date().isoformat()} at {end.time().isoformat()}.")
    return _dump(_event(ctx, uid))


@DOMAIN.tool("write")
def add_calendar_event_participants(ctx: ToolContext, args: AddParticipants) -> str:
    """Adds the given `participants` to the event with the given `event_id`.
    It will also email the new participants notifying them of the event."""
    uid = _calendar_event(ctx, args.event_id)
    start = _one(ctx, "SELECT coalesce(max(pos), -1) + 1 FROM event_participants WHERE event_uid = ?", (uid,))
    for i, address in enumerate(args.participants):  # appended as given, repeats too, and no mail is sent
        ctx.run("INSERT INTO event_participants VALUES (?, ?, ?)", (uid, start + i, address))
    return _dump(_event(ctx, uid))


# --- cloud drive

def _drive_file(ctx: ToolContext, file_id: str) -> int:
    return _live(ctx, "files", file_id, "File")


def _files(ctx: ToolContext, keep) -> list[dict[str, Any]]:
    return [f for f in (_file(ctx, u) for u in _uids(ctx, "files")) if keep(f)]


@DOMAIN.tool("write")
def append_to_file(ctx: ToolContext, args: Append) -> str:
    """Append content to a file in the cloud drive."""
    uid = _drive_file(ctx, args.file_id)
    ctx.run("UPDATE files SET content = content || ?, last_modified = ? WHERE uid = ?",
            (args.content, ctx.now.isoformat(), uid))
    return _dump(_file(ctx, uid))


@DOMAIN.tool("read")
def search_files_by_filename(ctx: ToolContext, args: Filename) -> str:
    """Get a file from a cloud drive by its filename. It returns a list of files.
    Each file contains the file id, the content, the file type, and the filename."""
    return _dump(_files(ctx, lambda f: args.filename.lower() in f["filename"].lower()))


@DOMAIN.tool("write")
def create_file(ctx: ToolContext, args: NewFile) -> str:
    """Create a new file in the cloud drive."""
    uid = _next(ctx, "files", "uid")
    ctx.run("INSERT INTO files (uid, id_, seed_pos, box_pos, filename, content, owner, last_modified) "
            "VALUES (?, ?, NULL, ?, ?, ?, ?, ?)",
            (uid, _next_id(ctx, "files"), _next(ctx, "files", "box_pos"), args.filename, args.content,
             _setting(ctx, "cloud_drive.account_email"), ctx.now.isoformat()))
    return _dump(_file(ctx, uid))


@DOMAIN.tool("write")
def delete_file(ctx: ToolContext, args: DeleteFile) -> str:
    """Delete a file from the cloud drive by its filename.
    It returns the file that was deleted."""
    uid = _drive_file(ctx, args.file_id)
    ctx.run("UPDATE files SET box_pos = NULL WHERE uid = ?", (uid,))  # still in initial_files, as the peer keeps it
    return _dump(_file(ctx, uid))


@DOMAIN.tool("read")
def get_file_by_id(ctx: ToolContext, args: FileId) -> str:
    """Get a file from a cloud drive by its ID."""
    return _dump(_file(ctx, _drive_file(ctx, args.file_id)))


@DOMAIN.tool("read")
def list_files(ctx: ToolContext, args: NoArgs) -> str:
    """Retrieve all files in the cloud drive."""
    return _dump(_files(ctx, lambda f: True))


@DOMAIN.tool("write")
def share_file(ctx: ToolContext, args: Share) -> str:
    """Share a file with a user."""
    uid = _drive_file(ctx, args.file_id)
    if ctx.run("UPDATE file_shares SET permission = ? WHERE file_uid = ? AND email = ?",
               (args.permission, uid, args.email)).rowcount == 0:
        ctx.run("INSERT INTO file_shares VALUES (?, ?, ?, ?)",
                (uid, args.email, _one(ctx, "SELECT coalesce(max(pos), -1) + 1 FROM file_shares WHERE file_uid = ?",
                                       (uid,)), args.permission))
    return _dump(_file(ctx, uid))


@DOMAIN.tool("read")
def search_files(ctx: ToolContext, args: SearchFiles) -> str:
    """Search for files in the cloud drive by content."""
    found = _files(ctx, lambda f: args.query.lower() in f["content"].lower())
    if not found:
        raise ToolError(f"ValueError: No files found with the given query ('{args.query}'). Try a different search "
                        "term.")
    return _dump(found)


ROLE = Role(name="workspace_assistant",
            read_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "read"),
            write_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "write"))
DOMAIN.roles[ROLE.name] = ROLE
