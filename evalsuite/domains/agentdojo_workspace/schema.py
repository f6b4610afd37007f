"""Tables of the AgentDojo workspace world: the inbox (e-mails, their addresses and attachments, the trash, the
contact list), the calendar (events and their participants) and the cloud drive (files and whom each is shared
with).

The peer holds each e-mail, event and file as one object that several of its
lists and dicts point at: `initial_emails` and `emails` (or `trash`, once
deleted) hold the same e-mail, so marking it read shows in both, and a deleted
file stays in `initial_files` as it was when deleted. So each object is one row
keyed by `uid` (the object's identity: a seed object's place in the seed, a new
one's order of creation), and its places are columns: `seed_pos` (in
`initial_*`), `box_pos` (in `emails`/`events`/`files`), `trash_pos` (in
`trash`), null where it is not there. Its `id_` is a column, not the key: the
peer reuses the id of a deleted top e-mail or file for the next one. An event
an e-mail carries is the calendar's own object (the peer attaches the event
itself, so a later change shows in the e-mail too) or one of its own.
"""
from __future__ import annotations

from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table, Text

metadata = MetaData()

settings = Table(
    "settings", metadata,  # the accounts' e-mails and the calendar's current_day, by their paths in the model
    Column("key", String, primary_key=True),
    Column("value", String, nullable=False),
)

contacts = Table(
    "contacts", metadata,  # inbox.contact_list
    Column("pos", Integer, primary_key=True),
    Column("email", String, nullable=False),
    Column("name", String, nullable=False),
)

emails = Table(
    "emails", metadata,
    Column("uid", Integer, primary_key=True),
    Column("id_", String, nullable=False),
    Column("seed_pos", Integer),  # place in inbox.initial_emails
    Column("box_pos", Integer),  # place in inbox.emails
    Column("trash_pos", Integer),  # place in inbox.trash
    Column("sender", String, nullable=False),
    Column("subject", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("status", String, nullable=False),  # sent, received, draft
    Column("read", Boolean, nullable=False),
    Column("timestamp", String, nullable=False),  # ISO 8601, as the peer's JSON writes it
)

email_addresses = Table(
    "email_addresses", metadata,
    Column("email_uid", Integer, primary_key=True),
    Column("field", String, primary_key=True),  # recipients, cc, bcc
    Column("pos", Integer, primary_key=True),
    Column("address", String, nullable=False),
)

email_attachments = Table(
    "email_attachments", metadata,
    Column("email_uid", Integer, primary_key=True),
    Column("pos", Integer, primary_key=True),
    Column("file_id", String),  # a file's id_ (the peer keeps the id, not the file)
    Column("event_uid", Integer),  # or an event (a row of events)
)

events = Table(
    "events", metadata,
    Column("uid", Integer, primary_key=True),
    Column("id_", String, nullable=False),
    Column("seed_pos", Integer),  # place in calendar.initial_events
    Column("box_pos", Integer),  # place in calendar.events (null: an event only an e-mail carries)
    Column("title", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("start_time", String, nullable=False),
    Column("end_time", String, nullable=False),
    Column("location", Text),
    Column("all_day", Boolean, nullable=False),
    Column("status", String, nullable=False),  # confirmed, canceled
)

event_participants = Table(
    "event_participants", metadata,
    Column("event_uid", Integer, primary_key=True),
    Column("pos", Integer, primary_key=True),
    Column("address", String, nullable=False),
)

files = Table(
    "files", metadata,
    Column("uid", Integer, primary_key=True),
    Column("id_", String, nullable=False),
    Column("seed_pos", Integer),  # place in cloud_drive.initial_files
    Column("box_pos", Integer),  # place in cloud_drive.files (null once deleted)
    Column("filename", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("owner", String, nullable=False),
    Column("last_modified", String, nullable=False),
)

file_shares = Table(
    "file_shares", metadata,  # file.shared_with: a new address comes last, a replaced permission keeps its place
    Column("file_uid", Integer, primary_key=True),
    Column("email", String, primary_key=True),
    Column("pos", Integer, nullable=False),
    Column("permission", String, nullable=False),  # r, rw
)
