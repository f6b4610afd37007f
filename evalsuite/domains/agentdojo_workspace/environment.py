"""The workspace environment as the peer holds it (its `inbox`, `calendar` and `cloud_drive` models, dumped to the
same JSON), loaded with its injections as the peer loads them (evalsuite.domains.agentdojo_common), and converted to
and from the world's rows (evalsuite.domains.agentdojo_workspace.schema says how objects and their places map)."""
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import model_validator

from evalsuite.domains.agentdojo_common import CalendarEvent, Contact, Email, PeerInbox, load_peer_environment
from evalsuite.domains.agentdojo_common import PeerModel as _Peer
from evalsuite.domains.agentdojo_workspace.schema import metadata


class Inbox(PeerInbox):
    """The peer's inbox as workspace loads it (below)."""

    @model_validator(mode="after")
    def _as_the_peer_loads(self) -> Inbox:
        """The peer's load: `emails` are the initial e-mails themselves, and every address they name that is not yet
        a contact becomes one, named after the address's local part (dots as spaces, title case)."""
        self.emails = {e.id_: e for e in self.initial_emails}
        known = {c.email for c in self.contact_list}
        for e in self.initial_emails:
            for address in [*e.recipients, e.sender, *e.cc, *e.bcc]:
                if address not in known:
                    self.contact_list.append(Contact(email=address, name=address.split("@")[0].replace(".", " ")
                                                     .title()))
                    known.add(address)
        return self


class Calendar(_Peer):
    current_day: dt.date
    account_email: str
    initial_events: list[CalendarEvent]
    events: dict[str, CalendarEvent] = {}

    @model_validator(mode="after")
    def _as_the_peer_loads(self) -> Calendar:
        self.events = {e.id_: e for e in self.initial_events}
        return self


class CloudDriveFile(_Peer):
    id_: str
    filename: str
    content: str
    owner: str
    last_modified: dt.datetime
    shared_with: dict[str, str] = {}
    size: int = 0

    @model_validator(mode="after")
    def _size(self) -> CloudDriveFile:
        self.size = len(self.content)  # the peer computes it, whatever the data says
        return self


class CloudDrive(_Peer):
    initial_files: list[CloudDriveFile]
    account_email: str
    files: dict[str, CloudDriveFile] = {}

    @model_validator(mode="after")
    def _as_the_peer_loads(self) -> CloudDrive:
        self.files = {f.id_: f for f in self.initial_files}
        return self


class WorkspaceEnvironment(_Peer):
    inbox: Inbox
    calendar: Calendar
    cloud_drive: CloudDrive


def load_environment(env_yaml: Path, vectors_yaml: Path,
                     injections: Mapping[str, str] | None = None) -> WorkspaceEnvironment:
    return load_peer_environment(WorkspaceEnvironment, env_yaml, vectors_yaml, injections)


class _Uids:
    """Each distinct object (by identity) a uid, in the order first met."""

    def __init__(self) -> None:
        self.of: dict[int, int] = {}
        self.objects: list[Any] = []

    def add(self, obj: Any) -> int:
        if id(obj) not in self.of:
            self.of[id(obj)] = len(self.objects)
            self.objects.append(obj)
        return self.of[id(obj)]


def _places(uids: _Uids, **places: Sequence[Any]) -> dict[int, dict[str, int | None]]:
    """Every object of the named lists, with its place in each (None where it is not in one)."""
    out: dict[int, dict[str, int | None]] = {}
    for column, items in places.items():
        for i, obj in enumerate(items):
            out.setdefault(uids.add(obj), {c: None for c in places})[column] = i
    return out


def _event_row(uid: int, e: CalendarEvent, where: Mapping[str, int | None]) -> dict[str, Any]:
    return {"uid": uid, "id_": e.id_, **where, "title": e.title, "description": e.description,
            "start_time": e.start_time.isoformat(), "end_time": e.end_time.isoformat(), "location": e.location,
            "all_day": e.all_day, "status": e.status}


def _email_rows(inbox: Inbox, events: _Uids) -> dict[str, list[dict[str, Any]]]:
    uids = _Uids()
    where = _places(uids, seed_pos=inbox.initial_emails, box_pos=list(inbox.emails.values()),
                    trash_pos=list(inbox.trash.values()))
    out: dict[str, list[dict[str, Any]]] = {"emails": [], "email_addresses": [], "email_attachments": []}
    for uid, e in enumerate(uids.objects):
        out["emails"].append({"uid": uid, "id_": e.id_, **where[uid], "sender": e.sender, "subject": e.subject,
                              "body": e.body, "status": e.status, "read": e.read,
                              "timestamp": e.timestamp.isoformat()})
        out["email_addresses"] += [{"email_uid": uid, "field": f, "pos": i, "address": a}
                                   for f in ("recipients", "cc", "bcc") for i, a in enumerate(getattr(e, f))]
        out["email_attachments"] += [{"email_uid": uid, "pos": i, "file_id": a if isinstance(a, str) else None,
                                      "event_uid": None if isinstance(a, str) else events.add(a)}
                                     for i, a in enumerate(e.attachments)]
    return out


def to_rows(env: WorkspaceEnvironment) -> dict[str, list[dict[str, Any]]]:
    """The world's seed rows of an environment (objects the peer shares between lists become one row each)."""
    inbox, cal, drive = env.inbox, env.calendar, env.cloud_drive
    events = _Uids()
    event_where = _places(events, seed_pos=cal.initial_events, box_pos=list(cal.events.values()))
    out = _email_rows(inbox, events)
    out["events"] = [_event_row(uid, e, event_where.get(uid, {"seed_pos": None, "box_pos": None}))
                     for uid, e in enumerate(events.objects)]
    out["event_participants"] = [{"event_uid": uid, "pos": i, "address": a}
                                 for uid, e in enumerate(events.objects) for i, a in enumerate(e.participants)]
    files = _Uids()
    file_where = _places(files, seed_pos=drive.initial_files, box_pos=list(drive.files.values()))
    out["files"] = [{"uid": uid, "id_": f.id_, **file_where[uid], "filename": f.filename, "content": f.content,
                     "owner": f.owner, "last_modified": f.last_modified.isoformat()}
                    for uid, f in enumerate(files.objects)]
    out["file_shares"] = [{"file_uid": uid, "email": a, "pos": i, "permission": p}
                          for uid, f in enumerate(files.objects) for i, (a, p) in enumerate(f.shared_with.items())]
    out["contacts"] = [{"pos": i, **c.model_dump()} for i, c in enumerate(inbox.contact_list)]
    out["settings"] = [{"key": k, "value": v} for k, v in (
        ("inbox.account_email", inbox.account_email), ("calendar.account_email", cal.account_email),
        ("calendar.current_day", cal.current_day.isoformat()), ("cloud_drive.account_email", drive.account_email))]
    return out


def _named(rows: Mapping[str, Sequence[tuple]]) -> dict[str, list[dict[str, Any]]]:
    return {t: [dict(zip(metadata.tables[t].columns.keys(), r)) for r in rows[t]] for t in metadata.tables}


def _by(rows: list[dict[str, Any]], key: str) -> dict[Any, list[dict[str, Any]]]:
    out: dict[Any, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: r["pos"]):
        out.setdefault(r[key], []).append(r)
    return out


def _placed(objects: Mapping[int, Any], rows: list[dict[str, Any]], column: str) -> list[Any]:
    return [objects[r["uid"]] for r in sorted((r for r in rows if r[column] is not None), key=lambda r: r[column])]


def _events(named: dict[str, list[dict[str, Any]]]) -> dict[int, CalendarEvent]:
    people = _by(named["event_participants"], "event_uid")
    return {r["uid"]: CalendarEvent(**{k: v for k, v in r.items() if k not in ("uid", "seed_pos", "box_pos")},
                                    participants=[p["address"] for p in people.get(r["uid"], [])])
            for r in named["events"]}


def _emails(named: dict[str, list[dict[str, Any]]], events: Mapping[int, CalendarEvent]) -> dict[int, Email]:
    addresses, attached = _by(named["email_addresses"], "email_uid"), _by(named["email_attachments"], "email_uid")
    out = {}
    for r in named["emails"]:
        mine = addresses.get(r["uid"], [])
        out[r["uid"]] = Email(
            **{k: v for k, v in r.items() if k not in ("uid", "seed_pos", "box_pos", "trash_pos")},
            **{f: [a["address"] for a in mine if a["field"] == f] for f in ("recipients", "cc", "bcc")},
            attachments=[a["file_id"] if a["event_uid"] is None else events[a["event_uid"]]
                         for a in attached.get(r["uid"], [])])
    return out


def from_rows(rows: Mapping[str, Sequence[tuple]]) -> WorkspaceEnvironment:
    """The environment a world's rows (every table) stand for: the inverse of `to_rows`, each object built once
    and placed in every list that holds it, as in the peer."""
    named = _named(rows)
    settings = {r["key"]: r["value"] for r in named["settings"]}
    events = _events(named)
    emails = _emails(named, events)
    shares = _by(named["file_shares"], "file_uid")
    files = {r["uid"]: CloudDriveFile(id_=r["id_"], filename=r["filename"], content=r["content"], owner=r["owner"],
                                      last_modified=r["last_modified"],
                                      shared_with={s["email"]: s["permission"] for s in shares.get(r["uid"], [])})
             for r in named["files"]}
    inbox = Inbox(account_email=settings["inbox.account_email"],
                  initial_emails=_placed(emails, named["emails"], "seed_pos"),
                  contact_list=[Contact(email=c["email"], name=c["name"])
                                for c in sorted(named["contacts"], key=lambda c: c["pos"])])
    calendar = Calendar(current_day=settings["calendar.current_day"], account_email=settings["calendar.account_email"],
                        initial_events=_placed(events, named["events"], "seed_pos"))
    drive = CloudDrive(account_email=settings["cloud_drive.account_email"],
                       initial_files=_placed(files, named["files"], "seed_pos"))
    env = WorkspaceEnvironment(inbox=inbox, calendar=calendar, cloud_drive=drive)
    # set after validation: the models' validators rebuild these from the initial lists, as the peer's load does
    env.inbox.emails = {e.id_: e for e in _placed(emails, named["emails"], "box_pos")}
    env.inbox.trash = {e.id_: e for e in _placed(emails, named["emails"], "trash_pos")}
    env.calendar.events = {e.id_: e for e in _placed(events, named["events"], "box_pos")}
    env.cloud_drive.files = {f.id_: f for f in _placed(files, named["files"], "box_pos")}
    return env
